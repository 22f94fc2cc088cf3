package agent_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	agentsqlite "github.com/labmate/labmate/agent/sqlite"
	"github.com/labmate/labmate/llm/llmtest"
)

// A run stopped after its first step resumes with the kernel's variables: the resumed step
// uses x and d from before, the code module is told what was restored and what was not (the
// lambda), and the restore is reported as an event.
func TestResumeRestoresKernelState(t *testing.T) {
	store, err := agentsqlite.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	step1 := "import numpy as np\nx = np.arange(10.0)\nd = {'k': 3}\nf = lambda v: v\nprint('sum', x.sum())"
	step2 := "print('total', x.sum() + d['k'], np.pi > 3)"
	srv := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "x and total", Steps: []agent.Step{
			{Title: "x", Action: "make x and d", Tool: agent.ToolRunCode, Checkpoint: "sum 45"},
			{Title: "total", Action: "add d's k to x's sum", Tool: agent.ToolRunCode, Checkpoint: "total 48"},
		}}),
		agenttest.RunCode(step1),
		accept("sum 45.0"),
		// The resumed session:
		expect(t, "code", agenttest.RunCode(step2), "restored as they were after operation", "np, x, d", "NOT restored", "f (PicklingError"),
		expect(t, "reflect", accept("total 48.0"), "total 48.0 True"),
		agenttest.FinalAnswer("total = 48"),
	)
	start := kernels(t) // both sessions work in the same workspace
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: start, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for ev, err := range a.Run(context.Background(), &agent.Task{Goal: "x, then the total"}) {
		if err != nil {
			t.Fatal(err)
		}
		id = ev.RunID
		if ev.Type == agent.EventReflection {
			break // the process dies with step 1 accepted: its kernels are gone
		}
	}

	b, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: start, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	var evs []*agent.Event
	for ev, err := range b.Resume(context.Background(), id) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	ks := of(evs, agent.EventKernelState)
	if len(ks) != 1 {
		t.Fatalf("%d kernel_state events, want 1; events: %s", len(ks), types(evs))
	}
	got := ks[0].KernelState
	if got.Kernel != "python" || got.Error != "" || !slices.Equal(got.Names, []string{"np", "x", "d"}) ||
		len(got.Skipped) != 1 || got.Skipped[0].Name != "f" || !strings.Contains(got.Skipped[0].Reason, "PicklingError") {
		t.Errorf("restored %+v; want np, x, d with f skipped for a PicklingError", got)
	}
	if s, want := got.Summary(), "python: 3 variables restored (np, x, d); not restored: f"; s != want {
		t.Errorf("Summary() = %q, want %q", s, want)
	}
	out := outcomes(evs)
	if len(out) != 1 || !out[0].OK || !strings.Contains(out[0].Output, "total 48.0 True") {
		t.Errorf("the resumed step's operation: %+v", out)
	}
	if s := stopOf(t, evs); s.Reason != agent.StopAnswered {
		t.Errorf("the resumed run stopped with %+v", s)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d turns unused", srv.Remaining())
	}
}
