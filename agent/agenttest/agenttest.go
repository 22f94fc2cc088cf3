// Package agenttest is the one test suite every agent.Store passes: checkpoints only.
package agenttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm"
)

// RunStore tests the store that open returns (a fresh, empty one per call).
func RunStore(t *testing.T, open func(t *testing.T) agent.Store) {
	ctx := context.Background()
	t.Run("RoundTrip", func(t *testing.T) {
		s := open(t)
		st := &agent.State{RunID: "r1", Task: agent.Task{Goal: "integrate", Kernel: "python", Mode: agent.ModeAgent},
			Phase: agent.PhaseCode, Seq: 2, Step: 1, Done: []string{"a: a = 1"}, Attempts: 2,
			Plan: &agent.Plan{Goal: "g", Steps: []agent.Step{{Title: "a", Action: "b", Tool: "run_code", Checkpoint: "c", Substeps: []string{"s"}}}},
			Conversation: []llm.Message{
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_code", Arguments: []byte(`{"code":"1"}`)}}},
				{Role: llm.RoleTool, ToolCallID: "c1", Content: "FAILED", IsError: true},
			},
			Last:    &agent.Outcome{OperationID: "op", Kernel: "python", Code: "1", Reason: "error", Output: "x\n"},
			Usage:   map[string]*llm.ModuleUsage{"plan": {Module: "plan", Calls: 1, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}},
			Elapsed: 3 * time.Second, Turns: 4, Operations: 2, HotFixes: 1, Repairs: 2}
		if err := s.Save(ctx, st); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(st, got); d != "" {
			t.Errorf("Load (-saved +loaded):\n%s", d)
		}
	})
	t.Run("StateAlone", func(t *testing.T) {
		s := open(t)
		st := &agent.State{RunID: "r3", Task: agent.Task{Goal: "g"}, Phase: agent.PhasePlan}
		if err := s.Save(ctx, st); err != nil {
			t.Fatal(err)
		}
		st.Phase = agent.PhaseDone
		if err := s.Save(ctx, st); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Load(ctx, "r3"); err != nil || got.Phase != agent.PhaseDone {
			t.Fatalf("Load = %+v, %v; want the latest state", got, err)
		}
	})
	t.Run("UnknownRun", func(t *testing.T) {
		if _, err := open(t).Load(ctx, "nope"); !errors.Is(err, agent.ErrUnknownRun) {
			t.Errorf("Load(nope) = %v, want ErrUnknownRun", err)
		}
	})
}
