package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/sqlite"
	"github.com/labmate/labmate/llm"
)

func TestSaveLoadEvents(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st := &agent.State{RunID: "r1", Task: agent.Task{Goal: "integrate", Kernel: "python", Mode: agent.ModeAgent},
		Phase: agent.PhaseCode, Seq: 2, Plan: &agent.Plan{Goal: "g", Steps: []agent.Step{{Title: "a", Action: "b", Tool: "run_code", Checkpoint: "c"}}},
		Conversation: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_code", Arguments: []byte(`{"code":"1"}`)}}}},
		Usage:        map[string]*llm.ModuleUsage{"plan": {Module: "plan", Calls: 1, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}}}
	now := time.Now().Round(time.Microsecond)
	if err := s.Save(ctx, nil, &agent.Event{RunID: "r1", Seq: 1, Type: agent.EventStart, Time: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, st, &agent.Event{RunID: "r1", Seq: 2, Type: agent.EventPlan, Time: now, Plan: st.Plan}); err != nil {
		t.Fatal(err)
	}
	// An event saved after the last state (an operation message) moves the seq on.
	if err := s.Save(ctx, nil, &agent.Event{RunID: "r1", Seq: 3, Type: agent.EventOperation, Time: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, nil, &agent.Event{RunID: "r1", Seq: 3, Type: agent.EventOperation, Time: now}); err == nil {
		t.Error("saving seq 3 twice succeeded")
	}
	s.Close()

	s, err = sqlite.Open(path) // a new process reads what the killed one committed
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Load(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := *st
	want.Seq = 3
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("Load (-want +got):\n%s", d)
	}
	var types []agent.EventType
	for ev, err := range s.Events(ctx, "r1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	if d := cmp.Diff([]agent.EventType{agent.EventPlan, agent.EventOperation}, types); d != "" {
		t.Errorf("Events after 1 (-want +got):\n%s", d)
	}
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != "r1" || runs[0].Phase != "code" {
		t.Errorf("Runs = %+v, %v", runs, err)
	}
	if _, err := s.Load(ctx, "nope"); !errors.Is(err, agent.ErrUnknownRun) {
		t.Errorf("Load(nope) = %v, want ErrUnknownRun", err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sqlOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := sqlite.Open(path); !errors.Is(err, sqlite.ErrNewerSchema) {
		t.Fatalf("Open of a version-99 file = %v, want ErrNewerSchema", err)
	}
}
