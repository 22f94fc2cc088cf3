package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/memory"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
)

// Memory end to end: a first run's accepted step is written to memory (a fact and the cell as a
// skill, linked to the run and its operation); a second run on a related task recalls both
// before it plans, and its code module finds them with search_memory.
func TestRunLearnsAndRecalls(t *testing.T) {
	dir := t.TempDir()
	memPath := filepath.Join(t.TempDir(), "memory.db")
	stable := "dt = 0.01\ny = 1.0\nfor n in range(100):\n    y = y + dt * (-50 * y)\nprint('y =', y)"
	srv := llmtest.NewServer(t,
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if m := c.Request.Messages[0].Content; strings.Contains(m, "From memory") {
				t.Errorf("the first run recalled something from an empty memory:\n%s", m)
			}
			return llmtest.JSON(agent.Plan{Goal: "y(1)", Steps: []agent.Step{{Title: "Integrate stiff decay", Action: "explicit Euler with dt = 0.01", Tool: agent.ToolRunCode, Checkpoint: "y(1) finite and near 0"}}})
		}},
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: stable})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "y decays", "summary": "explicit Euler on y' = -50y is stable with dt = 0.01 (dt must stay below 0.04)"}),
		call(agent.ToolFinalAnswer, `{"answer": "y(1) ≈ 7.9e-31"}`),
		// The second run: the planner is shown what the first one learned.
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			m := c.Request.Messages[0].Content
			for _, want := range []string{"From memory", "dt must stay below 0.04", "skill integrate-stiff-decay", "dt = 0.01"} {
				if !strings.Contains(m, want) {
					t.Errorf("the second run's plan prompt lacks %q:\n%s", want, m)
				}
			}
			if !strings.Contains(c.Request.System, "search_memory") {
				t.Errorf("the planner is not told of search_memory:\n%s", c.Request.System)
			}
			return llmtest.JSON(agent.Plan{Goal: "dt", Steps: []agent.Step{{Title: "look up", Action: "search memory", Tool: "search_memory", Checkpoint: "a bound on dt"}}})
		}},
		call("search_memory", `{"query": "stiff decay explicit Euler dt"}`),
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if m := c.Request.Messages[len(c.Request.Messages)-1]; m.IsError || !strings.Contains(m.Content, "dt must stay below 0.04") || !strings.Contains(m.Content, "[skill integrate-stiff-decay,") {
				t.Errorf("search_memory returned %+v", m)
			}
			return call(agent.ToolFinalAnswer, `{"answer": "dt < 0.04"}`)
		}},
	)
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+t.TempDir(), "LABMATE_MEMORY="+memPath)
	out, errOut, code := labmateEnv(t, env, dir, "", "run", "--json", "Integrate y' = -50 y, y(0) = 1 to t = 1 with explicit Euler (stiff decay)")
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, errOut)
	}
	evs := ndjson(t, out)
	runID := evs[0].RunID
	var opID string
	for _, e := range evs {
		if e.Type == agent.EventToolResult && e.Tool.Operation != nil {
			opID = e.Tool.Operation.OperationID
		}
	}

	out, errOut, code = labmateEnv(t, env, dir, "", "run", "explicit Euler step size for stiff decay y' = -50 y")
	if code != 0 || !strings.HasPrefix(out, "dt < 0.04") || srv.Remaining() != 0 {
		t.Fatalf("second run: exit %d, stdout %q, %d turns unused\n%s", code, out, srv.Remaining(), errOut)
	}

	ms, err := memsqlite.Open(context.Background(), memPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	var facts, skills int
	for r, err := range ms.Search(context.Background(), &memory.Query{Namespaces: []string{"user"}}) {
		if err != nil {
			t.Fatal(err)
		}
		var p memory.Provenance
		if r.Fact != nil {
			facts++
			p = r.Fact.Provenance
		} else {
			skills++
			p = r.Skill.Provenance
			if !strings.Contains(r.Skill.Body, stable) || r.Skill.Namespace != "user/skills" {
				t.Errorf("skill %+v does not hold the cell verbatim", r.Skill)
			}
		}
		if p.Session != runID || len(p.Operations) != 1 || p.Operations[0] != opID || p.Model != "openai:fake-model" {
			t.Errorf("provenance %+v, want run %s, operation %s", p, runID, opID)
		}
	}
	if facts != 1 || skills != 1 {
		t.Errorf("memory holds %d facts and %d skills, want 1 and 1", facts, skills)
	}
}
