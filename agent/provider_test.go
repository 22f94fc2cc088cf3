package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

// A run stopped by the provider failing keeps its phase and resumes where it stood; a run
// stopped by a cap does not.
func TestProviderErrorResumes(t *testing.T) {
	store := checkpoints(t)
	overloaded := llmtest.Fail(529, "overloaded")
	overloaded.RetryAfter = 10 * time.Millisecond
	srv := llmtest.NewServer(t,
		agenttest.Plan("compute x", "compute x = 41 + 1 and print it", "x = 42"),
		overloaded, overloaded,
		agenttest.RunCode("x = 41 + 1\nprint('x =', x)"),
		accept("x = 42"),
		agenttest.FinalAnswer("x = 42"),
	)
	model := llm.WithRetry(openAIModel(srv), &llm.RetryOptions{MaxAttempts: 2})
	a, err := agent.New(model, &agent.Options{StartKernel: testutil.Kernels(t), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{ID: "r1", Goal: "What is 41 + 1?", Kernel: "python"})
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("the run ended with %v, want ErrUnavailable", err)
	}
	if s := stopOf(t, evs); s.Reason != agent.StopError || !s.Resumable {
		t.Fatalf("stop = %+v, want a resumable error stop", s)
	}
	st, err := store.Load(context.Background(), "r1")
	if err != nil || st.Phase != agent.PhaseCode || st.Model != "fake:fake-model" {
		t.Fatalf("saved state: phase %q, model %q, %v; want phase code, model fake:fake-model", st.Phase, st.Model, err)
	}
	var resumed []*agent.Event
	for ev, err := range a.Resume(context.Background(), "r1") {
		if err != nil {
			t.Fatal(err)
		}
		resumed = append(resumed, ev)
	}
	if s := stopOf(t, resumed); s.Reason != agent.StopAnswered || s.Result.Text != "x = 42" || s.Resumable {
		t.Errorf("the resumed run stopped with %+v", s)
	}
	if n := len(of(resumed, agent.EventPlan)); n != 0 {
		t.Errorf("the resumed run planned again (%d plans)", n)
	}
	for _, err := range a.Resume(context.Background(), "r1") {
		if !errors.Is(err, agent.ErrFinished) {
			t.Errorf("resuming an answered run: %v, want ErrFinished", err)
		}
		break
	}
}
