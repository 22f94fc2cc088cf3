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

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/server"
)

// runFixture is a server whose agent runs talk to the fake model and run Python kernels.
func runFixture(t *testing.T, fake *llmtest.Server) *fixture {
	t.Helper()
	a, err := agent.New(openai.New("fake", &openai.Options{Provider: "fake", BaseURL: fake.OpenAIBaseURL()}), &agent.Options{
		StartKernel: func(ctx context.Context, name string) (kernel.Kernel, error) {
			o := testutil.KernelOptions(t)
			o.Workspace = t.TempDir()
			return python.Start(ctx, &o)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(t.TempDir() + "/labmate.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return newFixture(t, store, func(c *server.Config) {
		c.Prewarm = nil
		c.Runs = func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] { return a.Run(ctx, task) }
	})
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
	if resp, _ := http.Get(f.http.URL + "/v1/runs/nope/events"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown run: %d", resp.StatusCode)
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
