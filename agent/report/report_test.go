package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/report"
	"github.com/labmate/labmate/llm"
)

func TestRunsStates(t *testing.T) {
	now := time.Now()
	runs := []agent.RunSummary{
		{ID: "a", Goal: "answered", Phase: "done", Stop: agent.StopAnswered, Model: "openai:m", Tokens: 42, Updated: now},
		{ID: "b", Goal: "provider down", Phase: "code", Stop: agent.StopError, Resumable: true, Updated: now},
		{ID: "c", Goal: "killed\nsecond line", Phase: "reflect", Updated: now},
		{ID: "d", Goal: "interrupted", Phase: "code", Stop: agent.StopCancelled, Updated: now},
	}
	var b strings.Builder
	if err := report.Runs(&b, runs, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"a   answered", "openai:m  42", "b   error, resumable", "c   reflect", "killed\n", "d   cancelled, resumable"} {
		if !strings.Contains(out, want) {
			t.Errorf("the list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "second line") {
		t.Errorf("a task's second line is listed:\n%s", out)
	}
	b.Reset()
	report.Runs(&b, nil, true)
	if b.String() != "[]\n" {
		t.Errorf("no runs as JSON: %q", b.String())
	}
}

func TestShow(t *testing.T) {
	st := &agent.State{RunID: "r1", Task: agent.Task{Goal: "x", Mode: agent.ModeAgent, Kernel: "python"}, Phase: agent.PhaseReflect, Step: 1,
		Model: "openai:m", Plan: &agent.Plan{Goal: "x", Steps: []agent.Step{{Title: "a", Tool: "run_code", Checkpoint: "a = 1"}, {Title: "b", Tool: "run_code", Checkpoint: "b = 2"}}},
		Usage: map[string]*llm.ModuleUsage{"plan": {Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}}, Turns: 3}
	evs := func(yield func(*agent.Event, error) bool) {
		for _, ev := range []*agent.Event{
			{Type: agent.EventStart, Time: time.Unix(100, 0)},
			{Type: agent.EventToolResult, Step: 0, Tool: &agent.ToolEvent{Operation: &agent.Outcome{OperationID: "op1", OK: true, DurationS: 0.5}}},
			{Type: agent.EventToolResult, Step: 1, Attempt: 1, Tool: &agent.ToolEvent{Operation: &agent.Outcome{OperationID: "op2", Reason: "error", Error: "NameError\nmore", DurationS: 1}}},
			{Type: agent.EventToolResult, Tool: &agent.ToolEvent{Name: "search_docs"}},
		} {
			if !yield(ev, nil) {
				return
			}
		}
	}
	r, err := report.NewRecord(st, evs)
	if err != nil || len(r.Operations) != 2 || !r.Started.Equal(time.Unix(100, 0)) {
		t.Fatalf("NewRecord = %+v, %v", r, err)
	}
	var b strings.Builder
	report.Show(&b, r, false)
	for _, want := range []string{"run r1: x", "model openai:m, agent mode, python kernel", "[x] 1. a", "[ ] 2. b", "operations: 2",
		"step 1, attempt 1: op1 ok in 0.50s", "step 2, attempt 2: op2 error after 1.00s: NameError\n", "tokens 15 in 3 model calls",
		"outcome: not stopped (phase reflect)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, b.String())
		}
	}
}
