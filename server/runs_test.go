package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// runFixture is a server whose agent runs talk to the fake model and run Python kernels.
func runFixture(t *testing.T, fake *llmtest.Server, edits ...func(*server.Config)) *fixture {
	t.Helper()
	store, err := sqlite.Open(t.TempDir() + "/labmate.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var a *agent.Agent // the run's cells are operations of the server's runner: made once it is
	f := newFixture(t, store, func(c *server.Config) {
		c.Prewarm = nil
		c.Agents = &agentFuncs{run: func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] { return a.Run(ctx, task) }}
		for _, edit := range edits {
			edit(c)
		}
	})
	a, err = agent.New(openai.New("fake", &openai.Options{Provider: "fake", BaseURL: fake.OpenAIBaseURL()}), &agent.Options{Cells: f.srv.Cells()})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRunOverAPI(t *testing.T) {
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "g", Steps: []agent.Step{{Title: "sum", Action: "compute 2 + 3", Tool: agent.ToolRunCode, Checkpoint: "s = 5"}}}),
		llmtest.CallTool(agent.ToolRunCode, `{"code": "s = 2 + 3\nprint('s =', s)"}`),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "s = 5", "summary": "s = 5"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "5"}`),
	)
	f := runFixture(t, fake)
	for _, c := range []struct{ body, want string }{
		{`{"goal": ""}`, "goal: missing"},
		{`{"goal": "x", "mode": "magic"}`, `mode "magic"`},
		{`{"goal": "x", "colour": 1}`, "colour"},
	} {
		resp, err := http.Post(f.http.URL+"/v1/runs", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, c.want) {
			t.Errorf("POST %s: %d %q, want 400 mentioning %q", c.body, resp.StatusCode, e.Error, c.want)
		}
	}
	resp, err := http.Post(f.http.URL+"/v1/runs", "application/json", strings.NewReader(`{"goal": "What is 2 + 3?", "kernel": "python"}`))
	if err != nil {
		t.Fatal(err)
	}
	var started struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || started.ID == "" {
		t.Fatalf("POST /v1/runs: %d %+v", resp.StatusCode, started)
	}
	follow := func(after int64) []*agent.Event {
		resp, err := http.Get(fmt.Sprintf("%s/v1/runs/%s/events?after=%d", f.http.URL, started.ID, after))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var evs []*agent.Event
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			ev := &agent.Event{}
			if err := json.Unmarshal(sc.Bytes(), ev); err != nil {
				t.Fatalf("%v: %s", err, sc.Bytes())
			}
			evs = append(evs, ev)
		}
		return evs
	}
	evs := follow(0) // live, until the run ends
	last := evs[len(evs)-1]
	if last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered || last.Stop.Result.Text != "5" {
		t.Fatalf("the stream ended with %+v", last)
	}
	var ops int
	for _, e := range evs {
		if e.Type == agent.EventOperation {
			ops++
		}
	}
	if ops < 3 {
		t.Errorf("%d operation messages streamed, want the request, start, progress and end", ops)
	}
	if again := follow(evs[len(evs)-3].Seq); len(again) != 2 || again[1].Type != agent.EventStop {
		t.Errorf("resuming after seq %d gave %d events", evs[len(evs)-3].Seq, len(again))
	}
	if again := follow(last.Seq); len(again) != 0 {
		t.Errorf("resuming after the stop gave %+v, want nothing: the run answered", again)
	}
	if resp, _ := http.Get(f.http.URL + "/v1/runs/nope/events"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown run: %d", resp.StatusCode)
	}

	// The run is a stream of the log: its session's WebSocket replays it, one run_event per
	// event (its seq the event's), its cell as an operation of the session under its own id
	// (the events' operation lines are its messages, at their seqs), and then its run_end.
	var seq int64
	msgs := until(t, f.dial(t, started.ID, 0), started.ID, &seq)
	runEvents := 0
	for _, ev := range evs {
		if ev.Type != agent.EventOperation {
			runEvents++
		}
	}
	if len(msgs) != runEvents+1 {
		t.Fatalf("the run's stream holds %d messages for %d events", len(msgs), runEvents)
	}
	var cell string
	i := 0
	for _, ev := range evs {
		if ev.Type == agent.EventOperation {
			if ev.Message == nil || ev.Message.Seq != ev.Seq || ev.Message.OperationID == started.ID || ev.Message.SessionID != started.ID {
				t.Fatalf("operation event %d: %+v, want a message of the cell's operation in the run's session", ev.Seq, ev.Message)
			}
			cell = ev.Message.OperationID
			continue
		}
		var got agent.Event
		if msgs[i].Type != protocol.TypeRunEvent || msgs[i].Decode(&got) != nil || msgs[i].Seq != ev.Seq || got.Seq != ev.Seq || got.Type != ev.Type {
			t.Errorf("message %d: %s seq %d %s, want the run_event of event %d (%s)", i, msgs[i].Type, msgs[i].Seq, msgs[i].Payload, ev.Seq, ev.Type)
		}
		if ev.Type == agent.EventCell && (ev.Cell == nil || ev.Cell.ID == "") {
			t.Errorf("cell event %d names no operation: %+v", ev.Seq, ev.Cell)
		}
		i++
	}
	infos, err := f.store.Operations(context.Background(), started.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, op := range infos {
		if op.ID == cell {
			found = op.State == protocol.Completed
		}
	}
	if cell == "" || !found {
		t.Errorf("the run's cell %q is not a completed operation of its session in the log: %+v", cell, infos)
	}
	msgs = msgs[:i+1]
	var end protocol.RunEnd
	if err := msgs[len(msgs)-1].Decode(&end); err != nil || end != (protocol.RunEnd{Reason: "answered"}) {
		t.Errorf("the run ended with %+v, want reason answered", end)
	}
	resp, err = http.Get(f.http.URL + "/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	var runs []struct {
		ID     string
		Task   *agent.Task
		Events int64
		Done   bool
	}
	json.NewDecoder(resp.Body).Decode(&runs)
	resp.Body.Close()
	if len(runs) != 1 || runs[0].ID != started.ID || runs[0].Task == nil || runs[0].Task.Goal != "What is 2 + 3?" || runs[0].Events != int64(runEvents) || !runs[0].Done {
		t.Errorf("GET /v1/runs = %+v, want the ended run with its %d events", runs, len(evs))
	}
}

// resumeHint is what a run_end says of resumable run r1 on a server without a model.
const resumeHint = "POST /v1/runs/r1/resume (or the dashboard's Resume) once labmate serve runs with --model, " +
	"or labmate run --resume r1 while labmate serve is not running"

// A server started over the log of one killed during runs ends each with a run_end of reason
// server_restart, saying how to resume it or that it cannot be; followers read the events the
// log kept, then that end.
func TestRestartEndsRuns(t *testing.T) {
	for _, tt := range []struct {
		name  string
		local runner.LocalRuns
		want  protocol.RunEnd
	}{
		{"resumable", cliRuns{}, protocol.RunEnd{Reason: protocol.ReasonServerRestart, Resumable: true,
			Resume: resumeHint, Error: "the server stopped while the run ran; its checkpoint continues it: " + resumeHint}},
		{"not resumable", nil, protocol.RunEnd{Reason: protocol.ReasonServerRestart,
			Error: "the server stopped while the run ran, and this server cannot resume runs"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := t.TempDir() + "/labmate.db"
			store, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			// What a server killed during run r1 left in the log: its first events.
			for seq := range int64(2) {
				m, err := protocol.NewMessage(protocol.TypeRunEvent, "r1", "r1", &agent.Event{RunID: "r1", Seq: seq + 1, Type: agent.EventModelCall})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := store.Append(context.Background(), m); err != nil {
					t.Fatal(err)
				}
			}
			store.Close()
			store, err = sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			f := newFixture(t, store, func(c *server.Config) { c.Prewarm, c.LocalRuns = nil, tt.local })

			resp, err := http.Get(f.http.URL + "/v1/runs/r1/events?after=1")
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			resp.Body.Close()
			if len(lines) != 2 || !strings.Contains(lines[0], `"seq":2`) {
				t.Fatalf("events after 1: %q, want event 2 and the run's end", lines)
			}
			var end protocol.RunEnd
			if err := json.Unmarshal([]byte(lines[1]), &end); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, end); diff != "" {
				t.Errorf("the run's end (-want +got):\n%s", diff)
			}
			if resp, _ := http.Post(f.http.URL+"/v1/runs/r1/cancel", "", nil); resp.StatusCode != http.StatusConflict {
				t.Errorf("cancelling the ended run: %d, want 409", resp.StatusCode)
			}
		})
	}
}

func TestCancelRun(t *testing.T) {
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "g", Steps: []agent.Step{{Title: "wait", Action: "a long loop", Tool: agent.ToolRunCode, Checkpoint: "done"}}}),
		llmtest.CallTool(agent.ToolRunCode, `{"code": "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"}`),
	)
	f := runFixture(t, fake)
	if resp, _ := http.Post(f.http.URL+"/v1/runs/nope/cancel", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("cancelling an unknown run: %d", resp.StatusCode)
	}
	resp, err := http.Post(f.http.URL+"/v1/runs", "application/json", strings.NewReader(`{"goal": "wait", "kernel": "python"}`))
	if err != nil {
		t.Fatal(err)
	}
	var started struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()

	resp, err = http.Get(f.http.URL + "/v1/runs/" + started.ID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var last *agent.Event
	var cancelled time.Time
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		last = &agent.Event{}
		if err := json.Unmarshal(sc.Bytes(), last); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if last.Type == agent.EventOperation && cancelled.IsZero() {
			// The 30 s loop is running: cancel the run.
			cr, err := http.Post(f.http.URL+"/v1/runs/"+started.ID+"/cancel", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			cr.Body.Close()
			if cr.StatusCode != http.StatusAccepted {
				t.Fatalf("cancel: %d", cr.StatusCode)
			}
			cancelled = time.Now()
		}
	}
	if cancelled.IsZero() {
		t.Fatal("the run never started its operation")
	}
	if d := time.Since(cancelled); d > 5*time.Second {
		t.Errorf("the stream ended %v after the cancel", d)
	}
	if last.Type != agent.EventStop || last.Stop.Reason != agent.StopCancelled {
		t.Errorf("the cancelled run's stream ended with %+v", last)
	}
}
