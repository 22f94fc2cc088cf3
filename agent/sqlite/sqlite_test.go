package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/sqlite"
	"github.com/labmate/labmate/llm"
)

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	agenttest.RunStore(t, func(t *testing.T) agent.Store { return open(t, filepath.Join(t.TempDir(), "runs.db")) })
}

// What one process committed, the next one reads: a run killed mid-way resumes from the file.
func TestReopenRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st := &agent.State{RunID: "r1", Task: agent.Task{Goal: "integrate", Mode: agent.ModeAgent}, Phase: agent.PhaseCode, Seq: 2,
		Model: "openai:gpt-4.1", Stop: &agent.Stop{Reason: agent.StopError, Resumable: true},
		Usage: map[string]*llm.ModuleUsage{"plan": {Module: "plan", Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}, "code": {Module: "code", Usage: llm.Usage{InputTokens: 5}}}}
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, path)
	got, err := s.Load(ctx, "r1")
	if err != nil || got.Seq != 2 || got.Phase != agent.PhaseCode {
		t.Fatalf("Load after reopening = %+v, %v", got, err)
	}
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != "r1" || runs[0].Phase != "code" || runs[0].Goal != "integrate" ||
		runs[0].Model != "openai:gpt-4.1" || runs[0].Stop != agent.StopError || !runs[0].Resumable || runs[0].Tokens != 125 {
		t.Errorf("Runs = %+v, %v", runs, err)
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
