package agent_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/operation"
)

// properties are the names of a JSON Schema's properties, sorted.
func properties(t *testing.T, raw []byte) []string {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// run_code is the shared exec cell (operation.Cell, MCP's exec has it too): the model sees
// its schema, profile and follow included.
func TestRunCodeIsTheCell(t *testing.T) {
	cell, err := jsonschema.For[operation.Cell](nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(cell)
	want := properties(t, raw)
	var got []string
	capture := llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
		for _, s := range c.Request.Tools {
			if s.Name == agent.ToolRunCode {
				got = properties(t, s.InputSchema)
			}
		}
		return llmtest.CallTool(agent.ToolRunCode, agenttest.Args(agent.RunCode{Code: "print('energy =', -1.5)", Profile: "generic"}))
	}}
	srv := llmtest.NewServer(t,
		agenttest.Plan("print", "print the energy", "energy printed"),
		capture,
		expect(t, "reflect", accept("printed"), "energy = -1.5"),
		agenttest.FinalAnswer("-1.5"),
	)
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "Print the energy.", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run_code's properties are not operation.Cell's (-cell +run_code):\n%s", diff)
	}
	if !slices.Contains(got, "profile") || !slices.Contains(got, "follow") {
		t.Errorf("run_code's properties %v lack profile or follow", got)
	}
	if ops := outcomes(evs); len(ops) != 1 || !ops[0].OK {
		t.Errorf("operations = %+v, want one that completed", ops)
	}
}
