package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/server"
)

// resumeFixture is a server whose agent runs talk to the fake model, run Python kernels in
// one workspace (returned) and are checkpointed, so that the server resumes them. The log
// is opened from logPath (a new one when empty).
func resumeFixture(t *testing.T, fake *llmtest.Server, logPath string, edit func(*server.Config)) (*fixture, string) {
	t.Helper()
	ws := t.TempDir()
	if logPath == "" {
		logPath = t.TempDir() + "/labmate.db"
	}
	store, err := sqlite.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	runs := agent.NewCheckpoints(store) // the runs' checkpoints are events of their streams
	// The runs' cells are operations of the server's runner, in ws (the task's workspace): the
	// agent is made once the server is, and a run the server resumes as it starts waits for it.
	var a *agent.Agent
	made := make(chan struct{})
	agentOf := func(ctx context.Context) *agent.Agent {
		select {
		case <-made:
		case <-ctx.Done():
		}
		return a
	}
	f := newFixture(t, store, func(c *server.Config) {
		c.Prewarm = nil
		c.Agents = &agentFuncs{run: func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] {
			task.Workspace = ws
			return agentOf(ctx).Run(ctx, task)
		}, resume: func(ctx context.Context, id string) iter.Seq2[*agent.Event, error] {
			if a := agentOf(ctx); a != nil {
				return a.Resume(ctx, id)
			}
			return func(yield func(*agent.Event, error) bool) { yield(nil, ctx.Err()) }
		}}
		c.LocalRuns = cliRuns{}
		if edit != nil {
			edit(c)
		}
	})
	a, err = agent.New(openai.New("fake", &openai.Options{Provider: "fake", BaseURL: fake.OpenAIBaseURL()}), &agent.Options{
		Cells: f.srv.Cells(),
		Store: runs,
	})
	if err != nil {
		t.Fatal(err)
	}
	close(made)
	return f, ws
}

// line is one line of GET /v1/runs/ID/events: an agent event, or a run_end the stop event did
// not explain.
type line struct {
	agent.Event
	Reason    string
	Error     string
	Resumable bool
	Resume    string
}

// followEvents reads run id's events after seq after until the stream ends; each calls
// onLine, when given, as it arrives.
func followEvents(t *testing.T, f *fixture, id string, after int64, onLine func(*line)) []*line {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/v1/runs/%s/events?after=%d", f.http.URL, id, after))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET events of %s: %d", id, resp.StatusCode)
	}
	timer := time.AfterFunc(60*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	var lines []*line
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := &line{}
		if err := json.Unmarshal(sc.Bytes(), l); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if l.Type == "" {
			t.Fatalf("a line that is neither event nor end: %s", sc.Bytes())
		}
		lines = append(lines, l)
		if onLine != nil {
			onLine(l)
		}
	}
	return lines
}

// post POSTs to path and returns the status and the reply's "id" or "error".
func post(t *testing.T, f *fixture, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(f.http.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ ID, Error string }
	json.NewDecoder(resp.Body).Decode(&r)
	if r.Error != "" {
		return resp.StatusCode, r.Error
	}
	return resp.StatusCode, r.ID
}

// runEventSeqs returns the seqs of run id's events in the log: its run_event messages and the
// messages of its cells (operations of its session).
func runEventSeqs(t *testing.T, store protocol.Store, id string) []int64 {
	t.Helper()
	var seqs []int64
	for m, err := range store.After(context.Background(), id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if !agent.NewStory(id).In(m) {
			continue
		}
		if m.Type != protocol.TypeRunEvent {
			seqs = append(seqs, m.Seq)
			continue
		}
		var ev agent.Event
		if err := m.Decode(&ev); err != nil || ev.Seq != m.Seq {
			t.Errorf("run_event at seq %d says seq %d (%v)", m.Seq, ev.Seq, err)
		}
		seqs = append(seqs, m.Seq)
	}
	return seqs
}

// runEventCount counts the lines of a run's events that are its own (run_events), not its
// cells' messages.
func runEventCount(ls []*line) int64 {
	n := int64(0)
	for _, l := range ls {
		if l.Type != agent.EventOperation {
			n++
		}
	}
	return n
}

type runRow struct {
	ID     string
	State  protocol.State
	Events int64
	Done   bool
	End    *protocol.RunEnd
}

func listRuns(t *testing.T, f *fixture) []runRow {
	t.Helper()
	resp, err := http.Get(f.http.URL + "/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rows []runRow
	if err := json.NewDecoder(resp.Body).Decode(&rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// A cancelled run resumes from its checkpoint (POST /v1/runs/ID/resume): the cut cell runs
// again and the run answers. Followers that come back with the last seq they read get the
// resumed events, with no gap and no duplicate, and the whole log replays through the state
// machine.
func TestResumeRun(t *testing.T) {
	wait := "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('b =', 2)"
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "b", Steps: []agent.Step{{Title: "b", Action: "compute b", Tool: agent.ToolRunCode, Checkpoint: "b = 2"}}}),
		llmtest.CallTool(agent.ToolRunCode, fmt.Sprintf(`{"code": %q}`, wait)),
		// After the resume: the cell again, its review and the answer.
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "b = 2", "summary": "b = 2"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "b = 2"}`),
	)
	f, ws := resumeFixture(t, fake, "", func(c *server.Config) { c.Limits.Runs = 1 })
	if code, msg := post(t, f, "/v1/runs/nope/resume", ""); code != http.StatusNotFound || !strings.Contains(msg, "no run nope") {
		t.Errorf("resuming an unknown run: %d %q, want 404", code, msg)
	}
	code, id := post(t, f, "/v1/runs", `{"goal": "compute b", "kernel": "python"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d %s", code, id)
	}
	first := followEvents(t, f, id, 0, func(l *line) {
		if l.Type != agent.EventOperation || l.Message.Type != protocol.TypeStart {
			return
		}
		// The cell waits: the run cannot be resumed while it runs, and no other run fits.
		if code, msg := post(t, f, "/v1/runs/"+id+"/resume", ""); code != http.StatusConflict || !strings.Contains(msg, "is running") {
			t.Errorf("resuming the running run: %d %q, want 409", code, msg)
		}
		if code, msg := post(t, f, "/v1/runs", `{"goal": "more", "kernel": "python"}`); code != http.StatusServiceUnavailable || !strings.Contains(msg, "--max-runs") {
			t.Errorf("a second run at --max-runs 1: %d %q, want 503", code, msg)
		}
		if code, _ := post(t, f, "/v1/runs/"+id+"/cancel", ""); code != http.StatusAccepted {
			t.Errorf("cancel: %d", code)
		}
	})
	stop := first[len(first)-1]
	if stop.Type != agent.EventStop || stop.Stop.Reason != agent.StopCancelled || !stop.Stop.Resumable {
		t.Fatalf("the cancelled run's stream ended with %+v", stop)
	}
	// The run_end is written just after the stop event: wait for the listing to say so.
	var rows []runRow
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if rows = listRuns(t, f); len(rows) == 1 && rows[0].Done || time.Now().After(deadline) {
			break
		}
	}
	wantEnd := &protocol.RunEnd{Reason: "cancelled", Error: "context canceled", Resumable: true,
		Resume: "POST /v1/runs/" + id + "/resume (or the dashboard's Resume), or labmate run --resume " + id + " while labmate serve is not running"}
	if len(rows) != 1 || rows[0].State != protocol.Ended || rows[0].Events != runEventCount(first) || !cmp.Equal(rows[0].End, wantEnd) {
		t.Fatalf("GET /v1/runs after the cancel = %+v (end %+v), want the ended run, %d events, end %+v", rows, rows[0].End, runEventCount(first), wantEnd)
	}

	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, got := post(t, f, "/v1/runs/"+id+"/resume", ""); code != http.StatusAccepted || got != id {
		t.Fatalf("POST /v1/runs/%s/resume: %d %q", id, code, got)
	}
	// Two followers: one that reads everything from the start, live, and one that comes back
	// after the last line it read before the resume.
	whole := make(chan []*line)
	go func() { whole <- followEvents(t, f, id, 0, nil) }()
	rest := followEvents(t, f, id, stop.Seq, nil)
	all := <-whole

	if len(rest) == 0 || rest[0].Type != agent.EventStart || !rest[0].Start.Resumed {
		t.Fatalf("the resumed events begin with %+v, want a resumed run_start", rest)
	}
	last := rest[len(rest)-1]
	if last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered || last.Stop.Result.Text != "b = 2" {
		t.Fatalf("the resumed run ended with %+v", last)
	}
	var ops int
	for _, l := range rest {
		if l.Type == agent.EventOperation && l.Message.Type == protocol.TypeRequest {
			ops++
		}
	}
	if ops != 1 {
		t.Errorf("the resumed run requested %d operations, want the cut cell once more", ops)
	}
	seqs := func(ls []*line) []int64 {
		var s []int64
		for _, l := range ls {
			s = append(s, l.Seq)
		}
		return s
	}
	logged := runEventSeqs(t, f.store, id)
	if diff := cmp.Diff(logged, append(seqs(first), seqs(rest)...)); diff != "" {
		t.Errorf("the follower's seqs before and after the resume vs the log's run_events (-log +follower):\n%s", diff)
	}
	if diff := cmp.Diff(logged, seqs(all)); diff != "" {
		t.Errorf("a follower from the start (-log +follower):\n%s", diff)
	}
	// The log: the events, the run_end, the run_resume, the events, the run_end, with the
	// run's checkpoints among them (the resumed run's first before its first event).
	var msgs []protocol.Type
	for m, err := range f.store.After(context.Background(), id, stop.Seq) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeRunCheckpoint {
			if len(msgs) == 2 && rest[0].Seq != m.Seq+1 {
				t.Errorf("the resumed events begin at seq %d, want %d: after the run_end, the run_resume and the checkpoint at %d", rest[0].Seq, m.Seq+1, m.Seq)
			}
			continue
		}
		msgs = append(msgs, m.Type)
	}
	if len(msgs) < 3 || msgs[0] != protocol.TypeRunEnd || msgs[1] != protocol.TypeRunResume || msgs[len(msgs)-1] != protocol.TypeRunEnd {
		t.Errorf("the log after the stop: %v, want run_end, run_resume, events, run_end", msgs)
	}
	// The WebSocket replays the same story, gap-free.
	var wsSeq int64
	c := f.dial(t, id, 0)
	for range 2 { // to each run_end
		until(t, c, id, &wsSeq)
	}
	if wsSeq != logged[len(logged)-1]+1 {
		t.Errorf("the WebSocket replay ended at seq %d, want the final run_end at %d", wsSeq, logged[len(logged)-1]+1)
	}

	rows = listRuns(t, f)
	if len(rows) != 1 || rows[0].State != protocol.Ended || rows[0].Events != runEventCount(all) || rows[0].End == nil || rows[0].End.Reason != "answered" {
		t.Errorf("GET /v1/runs after the resume = %+v, want the answered run with %d events", rows, runEventCount(all))
	}
	if code, msg := post(t, f, "/v1/runs/"+id+"/resume", ""); code != http.StatusConflict || !strings.Contains(msg, "cannot be resumed") || !strings.Contains(msg, "answered") {
		t.Errorf("resuming the answered run: %d %q, want 409 quoting its end", code, msg)
	}
	testutil.ReplayStore(t, f.store)
}

// A resumed run can be cancelled like any run, and resumed again.
func TestCancelResumedRun(t *testing.T) {
	loop := "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "wait", Steps: []agent.Step{{Title: "wait", Action: "a long loop", Tool: agent.ToolRunCode, Checkpoint: "done"}}}),
		llmtest.CallTool(agent.ToolRunCode, fmt.Sprintf(`{"code": %q}`, loop)),
	)
	f, _ := resumeFixture(t, fake, "", nil)
	cancelAtCell := func(l *line) {
		if l.Type == agent.EventOperation && l.Message.Type == protocol.TypeStart {
			if code, _ := post(t, f, "/v1/runs/"+l.RunID+"/cancel", ""); code != http.StatusAccepted {
				t.Errorf("cancel: %d", code)
			}
		}
	}
	_, id := post(t, f, "/v1/runs", `{"goal": "wait", "kernel": "python"}`)
	first := followEvents(t, f, id, 0, cancelAtCell)
	waitEnded(t, f, id)
	if code, msg := post(t, f, "/v1/runs/"+id+"/resume", ""); code != http.StatusAccepted {
		t.Fatalf("resume: %d %s", code, msg)
	}
	rest := followEvents(t, f, id, first[len(first)-1].Seq, cancelAtCell)
	if last := rest[len(rest)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopCancelled || !last.Stop.Resumable {
		t.Fatalf("the cancelled resumed run ended with %+v", last)
	}
	waitEnded(t, f, id)
	if code, msg := post(t, f, "/v1/runs/"+id+"/resume", ""); code != http.StatusAccepted {
		t.Errorf("resuming it again: %d %s", code, msg)
	}
	again := followEvents(t, f, id, rest[len(rest)-1].Seq, cancelAtCell)
	if len(again) == 0 || again[0].Type != agent.EventStart || again[len(again)-1].Type != agent.EventStop {
		t.Errorf("the second resume streamed %d lines", len(again))
	}
	waitEnded(t, f, id)
	testutil.ReplayStore(t, f.store)
}

// waitEnded waits for run id's run_end: it is logged just after the stop event.
func waitEnded(t *testing.T, f *fixture, id string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, r := range listRuns(t, f) {
			if r.ID == id && r.Done {
				return
			}
		}
	}
	t.Fatalf("run %s never ended", id)
}

// appendAll logs msgs of run id (the stream a previous server left).
func appendAll(t *testing.T, store protocol.Store, id string, payloads ...any) {
	t.Helper()
	for _, p := range payloads {
		typ := protocol.TypeRunEvent
		if _, ok := p.(*protocol.RunEnd); ok {
			typ = protocol.TypeRunEnd
		}
		m, err := protocol.NewMessage(typ, id, id, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Append(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// The refusals of POST /v1/runs/ID/resume say why; and a server with a model resumes the runs a
// killed server left running at its start, giving one whose checkpoint cannot be continued a
// run_end that says why.
func TestResumeRefused(t *testing.T) {
	// What a server killed during run "lost" left, beside a run that failed.
	killed := func(t *testing.T) string {
		path := t.TempDir() + "/labmate.db"
		store, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		task := &agent.Event{RunID: "failed", Seq: 1, Type: agent.EventStart, Start: &agent.StartInfo{Task: agent.Task{ID: "failed", Goal: "g"}}}
		appendAll(t, store, "failed", task, &protocol.RunEnd{Reason: protocol.ReasonError, Error: "the kernel would not start"})
		appendAll(t, store, "lost", &agent.Event{RunID: "lost", Seq: 1, Type: agent.EventModelCall})
		return path
	}
	isEnd := func(l *line) bool { return string(l.Type) == string(protocol.TypeRunEnd) }

	t.Run("no model", func(t *testing.T) {
		// The lost run stays resumable, saying how; POST resume is refused with 501.
		store, err := sqlite.Open(killed(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		f := newFixture(t, store, func(c *server.Config) {
			c.Prewarm = nil
			c.LocalRuns = cliRuns{}
		})
		lines := followEvents(t, f, "lost", 1, nil)
		if len(lines) != 1 || !isEnd(lines[0]) || !lines[0].Resumable || lines[0].Seq != 2 ||
			lines[0].Resume != "POST /v1/runs/lost/resume (or the dashboard's Resume) once labmate serve runs with --model, or labmate run --resume lost while labmate serve is not running" {
			t.Errorf("the lost run's end on a server without a model: %+v", lines)
		}
		if code, msg := post(t, f, "/v1/runs/lost/resume", ""); code != http.StatusNotImplemented || !strings.Contains(msg, "--model") {
			t.Errorf("resuming without a model: %d %q, want 501", code, msg)
		}
		if code, msg := post(t, f, "/v1/runs/nope/resume", ""); code != http.StatusNotFound {
			t.Errorf("resuming an unknown run without a model: %d %q, want 404", code, msg)
		}
		testutil.ReplayStore(t, f.store)
	})

	t.Run("model", func(t *testing.T) {
		// The lost run is resumed at once, and its missing checkpoint ends it.
		f, _ := resumeFixture(t, llmtest.NewServer(t), killed(t), nil)
		if code, msg := post(t, f, "/v1/runs/failed/resume", ""); code != http.StatusConflict ||
			msg != "run failed cannot be resumed: it ended (error: the kernel would not start) without a checkpoint to continue" {
			t.Errorf("resuming the failed run: %d %q, want 409 quoting its end", code, msg)
		}
		lines := followEvents(t, f, "lost", 1, nil)
		if len(lines) != 2 || !isEnd(lines[0]) || !lines[0].Resumable || !isEnd(lines[1]) || lines[1].Resumable || lines[1].Seq != 4 ||
			!strings.Contains(lines[1].Error, "resuming run lost from its checkpoint: agent: unknown run") {
			t.Errorf("the lost run after a restart with a model: %+v, want its server_restart end, then one at seq 4 saying its checkpoint is missing", lines)
		}
		var types []protocol.Type
		for m, err := range f.store.After(context.Background(), "lost", 0) {
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, m.Type)
		}
		want := []protocol.Type{protocol.TypeRunEvent, protocol.TypeRunEnd, protocol.TypeRunResume, protocol.TypeRunEnd}
		if diff := cmp.Diff(want, types); diff != "" {
			t.Errorf("the lost run's stream (-want +got):\n%s", diff)
		}
		if code, msg := post(t, f, "/v1/runs/lost/resume", ""); code != http.StatusConflict || !strings.Contains(msg, "unknown run") {
			t.Errorf("resuming the lost run again: %d %q, want 409 quoting why", code, msg)
		}
		testutil.ReplayStore(t, f.store)
	})
}
