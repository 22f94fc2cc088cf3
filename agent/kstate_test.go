package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/llm/llmtest"
)

const (
	step1 = "import numpy as np\nx = np.arange(10.0)\nd = {'k': 3}\nf = lambda v: v\nprint('sum', x.sum())"
	step2 = "print('total', x.sum() + d['k'], np.pi > 3)"
)

// stoppedAfterStep1 runs a two-step task until step 1 is accepted and stops reading, as if the
// process died there (its kernels close); the resumed session then gets turns. It returns the
// run's id, the store and a second agent on the same store and workspace.
func stoppedAfterStep1(t *testing.T, ws string, turns ...llmtest.Turn) (string, *agent.Agent, *llmtest.Server) {
	t.Helper()
	store := checkpoints(t)
	srv := llmtest.NewServer(t, append([]llmtest.Turn{
		llmtest.JSON(agent.Plan{Goal: "x and total", Steps: []agent.Step{
			{Title: "x", Action: "make x and d", Tool: agent.ToolRunCode, Checkpoint: "sum 45"},
			{Title: "total", Action: "add d's k to x's sum", Tool: agent.ToolRunCode, Checkpoint: "total 48"},
		}}),
		agenttest.RunCode(step1),
		accept("sum 45.0"),
	}, turns...)...)
	opts := &agent.Options{Store: store, StartKernel: func(ctx context.Context, name string) (kernel.Kernel, error) {
		o := testutil.KernelOptions(t)
		o.Workspace = ws
		return python.Start(ctx, &o)
	}}
	a, err := agent.New(openAIModel(srv), opts)
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
	b, err := agent.New(openAIModel(srv), opts)
	if err != nil {
		t.Fatal(err)
	}
	return id, b, srv
}

// resume runs the rest of run id and returns its events and its one kernel_state event.
func resume(t *testing.T, a *agent.Agent, id string) ([]*agent.Event, *agent.KernelState) {
	t.Helper()
	var evs []*agent.Event
	for ev, err := range a.Resume(context.Background(), id) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	ks := of(evs, agent.EventKernelState)
	if len(ks) != 1 {
		t.Fatalf("%d kernel_state events, want 1; events: %s", len(ks), types(evs))
	}
	if s := stopOf(t, evs); s.Reason != agent.StopAnswered {
		t.Errorf("the resumed run stopped with %+v", s)
	}
	return evs, ks[0].KernelState
}

// A run stopped after its first step resumes with the kernel's variables: the resumed step
// uses x and d from before, the code module is told what was restored and what was not (the
// lambda), and the restore is reported as an event.
func TestResumeRestoresKernelState(t *testing.T) {
	id, a, srv := stoppedAfterStep1(t, t.TempDir(),
		expect(t, "code", agenttest.RunCode(step2), "restored as they were after operation", "np, x, d", "NOT restored", "f (PicklingError"),
		expect(t, "reflect", accept("total 48.0"), "total 48.0 True"),
		agenttest.FinalAnswer("total = 48"),
	)
	evs, got := resume(t, a, id)
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
	if srv.Remaining() != 0 {
		t.Errorf("%d turns unused", srv.Remaining())
	}
}

// A corrupt snapshot does not stop the resumed run: the code module is told the variables are
// gone and why, and recomputes them in the fresh kernel.
func TestResumeWithCorruptKernelState(t *testing.T) {
	ws := t.TempDir()
	id, a, srv := stoppedAfterStep1(t, ws,
		expect(t, "code", agenttest.RunCode(step1+"\n"+step2), "its variables could not be restored and are gone", "bad snapshot", "is truncated"),
		expect(t, "reflect", accept("total 48.0"), "total 48.0 True"),
		agenttest.FinalAnswer("total = 48"),
	)
	data, err := filepath.Glob(filepath.Join(ws, ".labmate", "state", id, "python", "state-*"))
	if err != nil || len(data) != 1 {
		t.Fatalf("the snapshot's data files: %q, %v", data, err)
	}
	if err := os.WriteFile(data[0], []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, got := resume(t, a, id)
	if !strings.Contains(got.Error, "bad snapshot") || len(got.Names) != 0 || !strings.HasPrefix(got.Summary(), "python: nothing restored: ") {
		t.Errorf("restored %+v; want a bad snapshot error", got)
	}
	if out := outcomes(evs); len(out) != 1 || !out[0].OK {
		t.Errorf("the resumed step's operation: %+v", out)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d turns unused", srv.Remaining())
	}
}
