package llmplanner_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/llmplanner"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
)

const data = `sub,lig,base,yield
A,L1,B1,10
A,L1,B2,20
A,L2,B1,30
A,L2,B2,40
B,L1,B1,5
B,L1,B2,50
B,L2,B1,0
`

func choice(obs, lig, base string) llmtest.Turn {
	return llmtest.JSON(map[string]any{"observation": obs, "choice": map[string]string{"lig": lig, "base": base}})
}

func TestCoscientistProtocol(t *testing.T) {
	tb, err := dataset.Read(strings.NewReader(data), "d.csv", &dataset.Options{Objective: "yield", Vars: []string{"lig", "base"}, Groups: []string{"sub"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := tb.Group("B")
	srv := llmtest.NewServer(t,
		choice("start with L1", "L1", "B1"),
		llmtest.Text("I think L2 is best"), // not JSON: a lost turn
		choice("unknown ligand", "L7", "B1"),
		choice("try the missing well", "L2", "B2"),
		choice("B2 then", "L1", "B2"),
	)
	m := openai.New("fake-gpt", &openai.Options{Provider: "fake", BaseURL: srv.OpenAIBaseURL()})
	prior := []lab.Observation{
		{Group: "A", Conditions: lab.Conditions{"lig": "L2", "base": "B2"}, Value: 40},
		{Group: "A", Conditions: lab.Conditions{"lig": "L1", "base": "B1"}, Value: 10},
	}
	p := llmplanner.New(m, b.Space(), &llmplanner.Options{Prior: prior, Task: "a test reaction"})
	c := &lab.Campaign{ID: "c", Objective: "yield", Group: "B", Planner: "llm", Budget: 5}
	var steps []lab.Step
	for s, err := range lab.Run(context.Background(), b, p, c, nil) {
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, *s)
	}
	if len(steps) != 5 {
		t.Fatalf("%d turns, want 5", len(steps))
	}
	ok := []bool{true, false, false, false, true}
	for i, s := range steps {
		if s.OK != ok[i] {
			t.Errorf("turn %d: ok %v (%s), want %v", i+1, s.OK, s.Error, ok[i])
		}
	}
	if steps[0].Reasoning != "start with L1" || steps[4].Value != 50 {
		t.Errorf("steps: %+v", steps)
	}
	if steps[1].Raw != "I think L2 is best" || !strings.Contains(steps[1].Error, "not valid JSON") {
		t.Errorf("turn 2: %+v", steps[1])
	}
	if !strings.Contains(steps[2].Error, `lig="L7"`) {
		t.Errorf("turn 3: %+v", steps[2])
	}

	calls := srv.Calls()
	if len(calls) != 5 {
		t.Fatalf("%d model calls, want 5", len(calls))
	}
	req := calls[0].Request
	if !strings.Contains(req.System, "lig: L1; L2") || !strings.Contains(req.System, "a test reaction") {
		t.Errorf("system prompt does not list the levels:\n%s", req.System)
	}
	if req.Output == nil || !json.Valid(req.Output.Schema) {
		t.Errorf("no output schema: %+v", req.Output)
	}
	first := req.Messages[0].Content
	if !strings.Contains(first, "base=B2, lig=L2 (A): yield = 40%") || strings.Index(first, "= 40%") > strings.Index(first, "= 10%") {
		t.Errorf("prior rows missing or not best first:\n%s", first)
	}
	last := calls[4].Request.Messages
	var user []string
	for _, msg := range last {
		if msg.Role == "user" {
			user = append(user, msg.Content)
		}
	}
	want := []string{"yield = 5%", "could not be used (lab: invalid proposal: not valid JSON", `could not be used (lab: invalid proposal: lab: unknown level: lig="L7"`, "could not be run: lab: condition not available"}
	if len(user) != 5 {
		t.Fatalf("last request has %d user messages, want 5: %q", len(user), user)
	}
	for i, w := range want {
		if !strings.Contains(user[i+1], w) {
			t.Errorf("feedback %d = %q, want it to contain %q", i+1, user[i+1], w)
		}
	}
}
