package learn_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/tool"
)

const eulerTask = "Integrate y' = -50 y, y(0) = 1 with explicit Euler and report y at the end."

// learnGuardrail teaches m a Hot-Fix at dt = 0.06 repaired with dt = 0.01, without a run.
func learnGuardrail(t *testing.T, m *learn.Memory) {
	t.Helper()
	err := m.Learn(context.Background(), &agent.Lesson{RunID: "run-1", Task: eulerTask, Step: "integrate", Action: "explicit Euler, print y each step",
		Checkpoint: "y decays to ~0", Summary: "y decays with dt = 0.01", Accepted: true, Code: euler(50, 0.01, 100), Kernel: "python", Operations: []string{"op-fix"},
		Failures: []agent.Attempt{{Step: "integrate", OperationID: "op-stopped", Kernel: "python", Code: euler(50, 0.06, 300), HotFix: true, Reason: "interrupted",
			Verdict: &protocol.Verdict{State: protocol.Error, Detector: "oscillation", Message: "growing oscillation in y", Evidence: []string{"y = -768.0"}}}}})
	if err != nil {
		t.Fatal(err)
	}
}

// Guard flags a cell that repeats the failing setting in a related task (in any kernel: the
// numerics are the same), and only there: not another value (which gets the guardrail as a
// caution), not an unrelated task.
func TestGuard(t *testing.T) {
	backends(t, func(t *testing.T, s memory.Store) {
		m := learn.New(s, &learn.Options{Namespace: "lab"})
		learnGuardrail(t, m)
		step := "integrate: explicit Euler, print y each step"
		for _, c := range []struct {
			name, task, kernel, code string
			repeat, caution          bool
		}{
			{"the failing setting again", "Integrate y' = -80 y with explicit Euler.", "python", euler(80, 0.06, 300), true, false},
			{"written another way", "Integrate y' = -80 y with explicit Euler.", "python", "k=80; dt=6e-2\ny=1.0\n", true, false},
			{"another value", "Integrate y' = -80 y with explicit Euler.", "python", euler(80, 0.02, 300), false, true},
			{"another kernel, the same numerics", "Integrate y' = -80 y with explicit Euler.", "octave", "k = 80;\ndt = 0.06;\n", true, false},
			{"an unrelated task", "Fit a straight line to the calibration points.", "python", "dt = 0.06\nprint(dt)", false, false},
		} {
			st := step
			if c.name == "an unrelated task" {
				st = "fit: least squares on the points"
			}
			got, err := m.Guard(t.Context(), &agent.Cell{Task: c.task, Step: st, Kernel: c.kernel, Code: c.code})
			if err != nil {
				t.Fatal(err)
			}
			if repeat := len(got.Repeats) > 0; repeat != c.repeat || (got.Text != "") != c.caution {
				t.Errorf("%s: repeats %+v, caution %q; want repeat %v, caution %v", c.name, got.Repeats, got.Text, c.repeat, c.caution)
			}
			if c.repeat && (got.Repeats[0].Setting != "dt = "+map[bool]string{true: "0.06", false: "6e-2"}[c.name != "written another way"] || !slices.Equal(got.Repeats[0].Worked, []string{"dt = 0.01"})) {
				t.Errorf("%s: %+v", c.name, got.Repeats[0])
			}
		}
	})
}

// The model's memory tools on the agent: save_fact is linked to the run and to the operation of
// the step before; search_memory finds it; save_skill refuses a name that exists.
func TestToolsOnTheAgent(t *testing.T) {
	backends(t, func(t *testing.T, s memory.Store) {
		m := learn.New(s, &learn.Options{Namespace: "lab", Model: "fake:fake-model"})
		srv := llmtest.NewServer(t,
			llmtest.JSON(agent.Plan{Goal: "g", Steps: []agent.Step{
				{Title: "measure", Action: "print the coil current", Tool: agent.ToolRunCode, Checkpoint: "a current"},
				{Title: "remember", Action: "save what was learned", Tool: "save_fact", Checkpoint: "saved"},
			}}),
			agenttest.RunCode("print('coil current = 2.0 A')"),
			accept("the coil current is 2.0 A"),
			llmtest.CallTool("save_fact", `{"text": "The maglev coil current saturates at 2.0 A", "kind": "boundary", "evidence": ["coil current = 2.0 A"]}`),
			llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
				if last := c.Request.Messages[len(c.Request.Messages)-1]; !strings.Contains(last.Content, "saved fact") {
					t.Errorf("save_fact answered %q", last.Content)
				}
				return llmtest.CallTool("save_skill", `{"name": "measure-coil-current", "description": "Read the coil current.", "body": "print it"}`)
			}},
			llmtest.CallTool("save_skill", `{"name": "measure-coil-current", "description": "Something else.", "body": "other"}`),
			llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
				if last := c.Request.Messages[len(c.Request.Messages)-1]; !strings.Contains(last.Content, "update_skill") {
					t.Errorf("save_skill over an existing name answered %q", last.Content)
				}
				return llmtest.CallTool("search_memory", `{"query": "coil current saturates"}`)
			}},
			llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
				if last := c.Request.Messages[len(c.Request.Messages)-1]; !strings.Contains(last.Content, "saturates at 2.0 A") {
					t.Errorf("search_memory answered %q", last.Content)
				}
				return agenttest.FinalAnswer("2.0 A")
			}},
		)
		set, _ := tool.NewSet(m.Tools()...)
		a, err := agent.New(model(srv, "fake-model"), &agent.Options{StartKernel: testutil.Kernels(t), Memory: m, Tools: set, NoJudge: true})
		if err != nil {
			t.Fatal(err)
		}
		evs := run(t, a, &agent.Task{Goal: "Measure the maglev coil current and remember it.", Kernel: "python"})
		op := outcomes(evs)[0].OperationID
		var saved *memory.Fact
		for _, f := range facts(t, s, "lab", memory.KindBoundary) {
			saved = f
		}
		if saved == nil || !slices.Equal(saved.Provenance.Operations, []string{op}) || saved.Provenance.Session != evs[0].RunID || saved.Provenance.Model != "fake:fake-model" {
			t.Fatalf("saved fact %+v; want it linked to run %s and operation %s", saved, evs[0].RunID, op)
		}
		var h []*memory.Change
		for c, err := range s.History(t.Context(), &memory.HistoryParams{EntryID: saved.ID}) {
			if err != nil {
				t.Fatal(err)
			}
			h = append(h, c)
		}
		if len(h) != 1 || h[0].Actor != "agent:fake:fake-model" {
			t.Errorf("history %+v", h)
		}
		if sks := skills(t, s, "lab/skills"); !slices.ContainsFunc(sks, func(sk *memory.Skill) bool {
			return sk.Name == "measure-coil-current" && sk.Version == 1 && sk.Body == "print it"
		}) {
			t.Errorf("skills %+v", sks)
		}
		if srv.Remaining() != 0 {
			t.Errorf("%d turns left", srv.Remaining())
		}
	})
}

// With Infer, a model decides what the step's lessons do to memory: its answer's ids are
// checked and an UPDATE that changes a number supersedes the old fact.
func TestInferConsolidation(t *testing.T) {
	backends(t, func(t *testing.T, s memory.Store) {
		old, err := s.AddFact(t.Context(), &memory.AddFactParams{Fact: &memory.Fact{Namespace: "lab", Kind: memory.KindBoundary,
			Text: "Explicit Euler on y' = -50 y is stable for dt below 0.05"}})
		if err != nil {
			t.Fatal(err)
		}
		srv := llmtest.NewServer(t,
			llmtest.JSON(map[string]any{"facts": []map[string]any{}}),
			llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
				user := c.Request.Messages[0].Content
				if strings.Contains(user, old.Fact.ID) || !strings.Contains(user, "dt = 0.06 failed") {
					t.Errorf("decision prompt: %s", user)
				}
				return llmtest.JSON(map[string]any{"operations": []map[string]any{
					{"event": "ADD", "id": nil, "fact": 0, "text": "", "reason": "a new guardrail"},
					{"event": "UPDATE", "id": 0, "fact": nil, "text": "Explicit Euler on y' = -50 y is stable for dt below 0.04", "reason": "2/k = 0.04"},
					{"event": "ADD", "id": nil, "fact": 1, "text": "", "reason": "the observation"},
					{"event": "DELETE", "id": 7, "fact": nil, "text": "", "reason": "invented id"},
				}})
			}},
		)
		m := learn.New(s, &learn.Options{Namespace: "lab", Model: "fake:x", Infer: model(srv, "memory-model")})
		learnGuardrail(t, m)
		e, err := s.Get(t.Context(), &memory.GetParams{ID: old.Fact.ID})
		if err != nil || e.Fact.Status != memory.StatusSuperseded || e.Fact.SupersededBy == "" {
			t.Fatalf("the old boundary: %+v, %v", e, err)
		}
		n, err := s.Get(t.Context(), &memory.GetParams{ID: e.Fact.SupersededBy})
		if err != nil || !strings.Contains(n.Fact.Text, "below 0.04") || n.Fact.Status != memory.StatusActive {
			t.Errorf("the new boundary: %+v, %v", n, err)
		}
		if gs := facts(t, s, "lab", memory.KindBoundary); len(gs) != 2 {
			t.Errorf("boundaries: %+v", gs)
		}
		if srv.Remaining() != 0 {
			t.Errorf("%d turns left", srv.Remaining())
		}
	})
}
