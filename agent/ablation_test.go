package agent_test

import (
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
)

// modules are the modules that called the model in a run.
func modules(evs []*agent.Event) []string {
	var out []string
	for _, e := range of(evs, agent.EventModelCall) {
		out = append(out, e.Call.Module)
	}
	return out
}

// The ablations: without perception a cell that perception would escalate to the judge (x
// doubling) and stop (a NaN) runs to its end, with no verdict and no perceive call; without
// reflection a step that ran is accepted with no reflect call. Both runs answer. The scripts
// have no turn for the module taken out: a call of it would take the next module's turn.
func TestAblations(t *testing.T) {
	t.Run("NoPerception", func(t *testing.T) {
		cell := "import time\nx = 1.0\nfor n in range(20):\n    x = 2 * x\n    print('x =', x, flush=True)\n    time.sleep(0.05)\nprint('y =', float('nan'), flush=True)\nprint('done')"
		srv := llmtest.NewServer(t,
			agenttest.Plan("grow", "iterate x = 2x", "x stays bounded"),
			agenttest.RunCode(cell),
			expect(t, "reflect", accept("x reached 1048576"), "done"),
			agenttest.FinalAnswer("x grows without bound"),
		)
		a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t), NoPerception: true})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := run(t, a, &agent.Task{Goal: "Does x = 2x stay bounded?", Kernel: "python"})
		if err != nil {
			t.Fatal(err)
		}
		s := stopOf(t, evs)
		ops := outcomes(evs)
		if s.Reason != agent.StopAnswered || len(ops) != 1 || !ops[0].OK || !strings.Contains(ops[0].Output, "done") || ops[0].Verdicts != nil {
			t.Fatalf("stop %+v, operations %+v: want one cell run to its end, unjudged, and an answer", s, ops)
		}
		if n := len(of(evs, agent.EventVerdict)); n != 0 || s.Stats.HotFixes != 0 {
			t.Errorf("%d verdict events, %d hot-fixes; want none", n, s.Stats.HotFixes)
		}
		if got := strings.Join(modules(evs), " "); got != "plan code reflect code" {
			t.Errorf("model calls by module: %s, want plan code reflect code", got)
		}
		if n := srv.Remaining(); n != 0 {
			t.Errorf("%d scripted turns were not used", n)
		}
	})
	t.Run("NoReflect", func(t *testing.T) {
		srv := llmtest.NewServer(t,
			agenttest.Plan("compute x", "compute x = 41 + 1 and print it", "x = 42"),
			agenttest.RunCode("x = 41 + 1\nprint('x =', x)"),
			expect(t, "code", agenttest.FinalAnswer("x = 42"), "Every step of the plan is done", "compute x: its cell printed: x = 42"),
		)
		a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t), NoReflect: true})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := run(t, a, &agent.Task{Goal: "What is 41 + 1? Compute it.", Kernel: "python"})
		if err != nil {
			t.Fatal(err)
		}
		s := stopOf(t, evs)
		if s.Reason != agent.StopAnswered || s.Result.Text != "x = 42" {
			t.Fatalf("stop %+v, want answered x = 42", s)
		}
		refl := of(evs, agent.EventReflection)
		if len(refl) != 1 || refl[0].Reflection.Decision != agent.Accept || !refl[0].Reflection.Auto {
			t.Errorf("reflections %+v, want one automatic acceptance", refl)
		}
		if got := strings.Join(modules(evs), " "); got != "plan code code" {
			t.Errorf("model calls by module: %s, want plan code code", got)
		}
		for _, m := range s.Stats.Modules {
			if m.Module == "reflect" {
				t.Errorf("the reflect module spent %+v", m)
			}
		}
	})
}
