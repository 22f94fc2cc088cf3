package learn_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/tool"
)

func newAgent(t *testing.T, srv *llmtest.Server, m *learn.Memory) *agent.Agent {
	t.Helper()
	set, err := tool.NewSet(m.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(model(srv, "fake-model"), &agent.Options{StartKernel: testutil.Kernels(t), Memory: m, Tools: set, NoJudge: true})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A run whose explicit-Euler cell perception stopped (the Hot-Fix) and whose repair then worked
// leaves a boundary fact naming the stopped operation, the setting that failed and the one that
// fixed it; the next related run's planner and code module are shown it, the cell that repeats
// the failing setting is sent back before it runs, and the skill of the first run is revised
// (same procedure) with its counts moved.
func TestHotFixBecomesGuardrail(t *testing.T) {
	backends(t, func(t *testing.T, s memory.Store) {
		m := learn.New(s, &learn.Options{Namespace: "lab", Model: "fake:fake-model"})
		step := "explicit Euler, print y each step"
		srv := llmtest.NewServer(t,
			agenttest.Plan("integrate", step, "y decays to ~0 and stays finite"),
			agenttest.RunCode(euler(50, 0.06, 300), "finite(y)"),
			agenttest.RunCode(euler(50, 0.01, 100), "finite(y)"),
			accept("y decays to 0 with dt = 0.01 (k dt = 0.5)"),
			agenttest.FinalAnswer("y(1) ≈ 0 (dt = 0.01)"),
		)
		evs := run(t, newAgent(t, srv, m), &agent.Task{Goal: "Integrate y' = -50 y, y(0) = 1 with explicit Euler and report y at the end.", Kernel: "python"})
		ops := outcomes(evs)
		if st := stopOf(t, evs); st.Reason != agent.StopAnswered || len(ops) != 2 || !ops[0].HotFix || !ops[1].OK {
			t.Fatalf("first run: stop %+v, operations %+v", st, ops)
		}
		stopped, fixed := ops[0].OperationID, ops[1].OperationID

		// The guardrail: a boundary fact, provenance naming the stopped operation and the fix.
		var g *memory.Fact
		for _, f := range facts(t, s, "lab", memory.KindBoundary, memory.KindWarning) {
			g = f
		}
		if g == nil {
			t.Fatalf("no guardrail in memory; facts: %+v", facts(t, s, "lab"))
		}
		if g.Kind != memory.KindBoundary || !slices.Equal(g.Tried, []string{"dt = 0.06"}) || !slices.Equal(g.Worked, []string{"dt = 0.01"}) ||
			!slices.Equal(g.Provenance.Operations, []string{stopped, fixed}) || g.Provenance.Session != evs[0].RunID {
			t.Errorf("guardrail: %+v", g)
		}
		for _, want := range []string{"dt = 0.06 failed", "perception stopped the run", "dt = 0.01 worked", "explicit Euler"} {
			if !strings.Contains(g.Text, want) {
				t.Errorf("the guardrail does not say %q: %s", want, g.Text)
			}
		}
		if !slices.Contains(g.Tags, "param:dt") || !slices.Contains(g.Tags, "kernel:python") || len(g.Evidence) == 0 {
			t.Errorf("guardrail tags %v, evidence %v", g.Tags, g.Evidence)
		}
		// The skill: by content, with its sections, the guardrail among its failure modes.
		sks := skills(t, s, "lab/skills")
		if len(sks) != 1 {
			t.Fatalf("skills: %+v", sks)
		}
		sk := sks[0]
		for _, want := range []string{"## When it applies", "## Procedure", "dt = 0.01", "## Parameters", "- dt = 0.01", "## Validation checks",
			"y decays to ~0", "## Failure modes (guardrails)", "dt = 0.06 failed", g.ID, "## Evidence", fixed} {
			if !strings.Contains(sk.Body, want) {
				t.Errorf("the skill's body lacks %q:\n%s", want, sk.Body)
			}
		}
		if sk.Name != "integrate-explicit-euler" || sk.Version != 1 {
			t.Errorf("skill %s version %d", sk.Name, sk.Version)
		}

		// The next related run: a stiffer decay, the same method.
		task2 := "Integrate y' = -80 y, y(0) = 1 with explicit Euler and report y at the end."
		srv2 := llmtest.NewServer(t,
			seeing(t, "the planner", agenttest.Plan("integrate", step, "y decays to ~0 and stays finite"), "Guardrails", "dt = 0.06 failed", "skill integrate-explicit-euler"),
			seeing(t, "the code module", agenttest.RunCode(euler(80, 0.06, 300), "finite(y)"), "From memory, for this step", "dt = 0.06 failed", "dt = 0.01 worked"),
			llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
				last := c.Request.Messages[len(c.Request.Messages)-1]
				if !strings.Contains(last.Content, "NOT RUN") || !strings.Contains(last.Content, "dt = 0.06") || !strings.Contains(last.Content, "dt = 0.01") {
					t.Errorf("the repeated setting was not flagged: %+v", last)
				}
				return agenttest.RunCode(euler(80, 0.01, 100), "finite(y)")
			}},
			accept("y decays to 0 with dt = 0.01 (k dt = 0.8)"),
			agenttest.FinalAnswer("y(1) ≈ 0 (dt = 0.01)"),
		)
		evs2 := run(t, newAgent(t, srv2, m), &agent.Task{Goal: task2, Kernel: "python"})
		st2 := stopOf(t, evs2)
		if st2.Reason != agent.StopAnswered || st2.Stats.Operations != 1 || st2.Stats.HotFixes != 0 || st2.Stats.Guarded != 1 || srv2.Remaining() != 0 {
			t.Fatalf("second run: stop %+v, %d turns left", st2, srv2.Remaining())
		}
		sks = skills(t, s, "lab/skills")
		if len(sks) != 1 || sks[0].Version != 2 || sks[0].Uses != 1 || sks[0].Successes != 1 || sks[0].Failures != 0 {
			t.Fatalf("after the second run: %+v", sks)
		}
		for _, want := range []string{"k = 80", "## Variants that also passed", "k = 50", fixed} {
			if !strings.Contains(sks[0].Body, want) {
				t.Errorf("the revised skill lacks %q (both procedures' evidence):\n%s", want, sks[0].Body)
			}
		}
		// The first run's working cell is still there, in the body and in the history.
		var h []*memory.Change
		for c, err := range s.History(t.Context(), &memory.HistoryParams{EntryID: sk.ID}) {
			if err != nil {
				t.Fatal(err)
			}
			h = append(h, c)
		}
		if len(h) < 2 || h[0].Event != memory.EventAdd || !strings.Contains(h[0].New, euler(50, 0.01, 100)) {
			t.Errorf("skill history: %+v", h)
		}
	})
}

// Two tasks whose steps share a title leave two skills, each with its own procedure; a third
// run of the first kind revises the first, never the second.
func TestSameTitleTwoSkills(t *testing.T) {
	backends(t, func(t *testing.T, s memory.Store) {
		m := learn.New(s, &learn.Options{Namespace: "lab", Model: "fake:fake-model"})
		trapz := "import numpy as np\nx = np.linspace(0, np.pi, 1001)\nf = np.sin(x)\nI = np.sum((f[1:] + f[:-1]) / 2 * np.diff(x))\nprint('I =', round(I, 6))"
		srv := llmtest.NewServer(t,
			agenttest.Plan("integrate", "explicit Euler, print y each step", "y decays to ~0"),
			agenttest.RunCode(euler(50, 0.01, 100)),
			accept("y decays to 0"),
			agenttest.FinalAnswer("y ≈ 0"),
			agenttest.Plan("integrate", "trapezoid rule with NumPy on sin(x) over [0, pi]", "I = 2 to 1e-5"),
			agenttest.RunCode(trapz),
			accept("I = 2.0 to 1e-6"),
			agenttest.FinalAnswer("I = 2"),
			agenttest.Plan("integrate", "explicit Euler, print y each step", "y decays to ~0"),
			agenttest.RunCode(euler(20, 0.02, 100)),
			accept("y decays to 0 for k = 20"),
			agenttest.FinalAnswer("y ≈ 0"),
		)
		a := newAgent(t, srv, m)
		run(t, a, &agent.Task{Goal: "Integrate y' = -50 y, y(0) = 1 with explicit Euler.", Kernel: "python"})
		run(t, a, &agent.Task{Goal: "Integrate sin(x) from 0 to pi numerically.", Kernel: "python"})
		sks := skills(t, s, "lab/skills")
		if len(sks) != 2 || sks[0].Name == sks[1].Name {
			t.Fatalf("two tasks with a step called integrate left %d skills: %+v", len(sks), sks)
		}
		byName := map[string]*memory.Skill{}
		for _, sk := range sks {
			byName[sk.Name] = sk
			if sk.Version != 1 {
				t.Errorf("%s is version %d: overwritten", sk.Name, sk.Version)
			}
		}
		euler1 := byName["integrate-explicit-euler"]
		if euler1 == nil || !strings.Contains(euler1.Body, euler(50, 0.01, 100)) {
			t.Fatalf("run 1's working cell is not retrievable: %v", slices.Collect(func(yield func(string) bool) {
				for n := range byName {
					yield(n)
				}
			}))
		}
		run(t, a, &agent.Task{Goal: "Integrate y' = -20 y, y(0) = 1 with explicit Euler.", Kernel: "python"})
		sks = skills(t, s, "lab/skills")
		for _, sk := range sks {
			switch {
			case sk.ID == euler1.ID && (sk.Version != 2 || !strings.Contains(sk.Body, "k = 20") || !strings.Contains(sk.Body, "k = 50")):
				t.Errorf("the Euler skill was not revised with both procedures: version %d\n%s", sk.Version, sk.Body)
			case sk.ID != euler1.ID && (sk.Version != 1 || !strings.Contains(sk.Body, "trapezoid")):
				t.Errorf("the trapezoid skill changed: version %d\n%s", sk.Version, sk.Body)
			}
		}
		if srv.Remaining() != 0 {
			t.Errorf("%d turns left", srv.Remaining())
		}
	})
}

// A value the task compares against is stored as a reference, and recall presents it as a value
// to consult, not a result to report.
func TestReferences(t *testing.T) {
	backends(t, func(t *testing.T, s memory.Store) {
		m := learn.New(s, &learn.Options{Namespace: "lab", Model: "fake:fake-model"})
		task := "Compute the fcc Cu lattice constant with the EAM Cu_u3 potential. Compare with the experimental value 3.615 Å."
		srv := llmtest.NewServer(t,
			agenttest.Plan("lattice constant", "minimise the EAM energy of fcc Cu over a", "a0 within 1% of 3.615 Å"),
			agenttest.RunCode("a0 = 3.6150\nprint('a0 =', a0)"),
			accept("the EAM Cu_u3 potential gives a0 = 3.615 Å", "experimental fcc Cu lattice constant 3.615 Å at room temperature (Kittel)"),
			agenttest.FinalAnswer("a0 = 3.615 Å"),
			seeing(t, "the planner", agenttest.Plan("lattice constant", "minimise the EAM energy of fcc copper", "a0 close to the reference"),
				"References — values to consult", "experimental fcc Cu lattice constant 3.615 Å", "consult; do not report as your result"),
			agenttest.RunCode("print('a0 =', 3.6149)"),
			accept("a0 = 3.615 Å"),
			agenttest.FinalAnswer("a0 = 3.615 Å"),
		)
		a := newAgent(t, srv, m)
		run(t, a, &agent.Task{Goal: task, Kernel: "python"})
		refs := facts(t, s, "lab", memory.KindReference)
		var texts []string
		for _, f := range refs {
			texts = append(texts, f.Text)
		}
		if len(refs) != 2 || !slices.ContainsFunc(texts, func(x string) bool { return strings.Contains(x, "Kittel") }) ||
			!slices.ContainsFunc(texts, func(x string) bool { return strings.Contains(x, "experimental value 3.615 Å") }) {
			t.Fatalf("references: %q", texts)
		}
		// A query about copper finds what was written about Cu (the entity graph).
		run(t, a, &agent.Task{Goal: "What lattice constant does fcc copper have with EAM?", Kernel: "python"})
		if srv.Remaining() != 0 {
			t.Errorf("%d turns left", srv.Remaining())
		}
	})
}
