package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// An agent run's cell is an operation of the run's session in the runner: Interrupt stops it
// by the id the log knows, the agent reads the interrupted result and repairs the cell (the
// scripted model's next cell runs, in the same kernel: the variable set before the interrupt
// is still there, though the model took longer than the session's idle time), and the run
// answers. Every stream of the log replays through the state
// machine.
func TestAgentCellInterrupt(t *testing.T) {
	long := "x = 5\nimport time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "x", Steps: []agent.Step{{Title: "x", Action: "double x", Tool: agent.ToolRunCode, Checkpoint: "y = 10"}}}),
		llmtest.CallTool(agent.ToolRunCode, fmt.Sprintf(`{"code": %q}`, long)),
		// The repair comes after the session's idle time: the run's kernel stays while it runs.
		func() llmtest.Turn {
			t := llmtest.CallTool(agent.ToolRunCode, `{"code": "print('y =', 2 * x)"}`)
			t.Delay = time.Second
			return t
		}(),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "y = 10", "summary": "y = 10"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "10"}`),
	)
	store := protocol.NewMemStore()
	opts := testutil.KernelOptions(t)
	var a *agent.Agent
	r, err := runner.New(context.Background(), runner.Config{
		Store: store,
		Kernels: kernelsOf(func(ctx context.Context, name, ws string) (kernel.Kernel, error) {
			o := opts
			o.Workspace = ws
			return python.Start(ctx, &o)
		}),
		Workspaces: t.TempDir(),
		Limits:     runner.Limits{Idle: 200 * time.Millisecond},
		Log:        log.New(t.Output(), "", 0),
		Agents:     agentsOf(func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] { return a.Run(ctx, task) }),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); testutil.ReplayStore(t, store) })
	if a, err = agent.New(openai.New("fake", &openai.Options{Provider: "fake", BaseURL: fake.OpenAIBaseURL()}), &agent.Options{Cells: r.Cells()}); err != nil {
		t.Fatal(err)
	}
	id, err := r.StartRun(&agent.Task{Goal: "double x", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cell string
	outputs := map[string][]string{}
	var end protocol.RunEnd
	var stop agent.Stop
	for m, err := range r.FollowRun(ctx, id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Type == protocol.TypeRunEvent:
			var ev agent.Event
			json.Unmarshal(m.Payload, &ev)
			if ev.Type == agent.EventCell && cell == "" {
				cell = ev.Cell.ID
			}
			if ev.Stop != nil {
				stop = *ev.Stop
			}
		case m.Type == protocol.TypeRunEnd:
			m.Decode(&end)
		case m.Type == protocol.TypeProgress:
			var p protocol.Progress
			if m.Decode(&p) == nil && p.Observation != nil && p.Observation.Kind == protocol.ObsStdout {
				outputs[m.OperationID] = append(outputs[m.OperationID], p.Observation.Line)
				if m.OperationID == cell && p.Observation.Line == "tick 2" {
					if err := r.Interrupt(ctx, id, cell, "the test asked"); err != nil {
						t.Errorf("Interrupt of the run's cell %s: %v", cell, err)
					}
				}
			}
		}
	}
	if end.Reason != "answered" || stop.Reason != agent.StopAnswered || stop.Stats.Repairs != 1 || stop.Stats.Operations != 2 {
		t.Fatalf("the run ended %+v, stop %+v; want answered after one repair", end, stop)
	}
	var failed protocol.Failed
	for m, err := range store.Operation(ctx, id, cell) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeFailed {
			m.Decode(&failed)
		}
	}
	if failed.Reason != protocol.ReasonInterrupted || failed.Verdict != nil {
		t.Errorf("the interrupted cell ended %+v in the log", failed)
	}
	repaired := false
	for op, lines := range outputs {
		if op != cell && len(lines) == 1 && lines[0] == "y = 10" {
			repaired = true
		}
	}
	if !repaired {
		t.Errorf("the repair's output: %v, want y = 10 from the same kernel", outputs)
	}
}
