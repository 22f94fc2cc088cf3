package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/sqlite"
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
func TestReopenEventsAndRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st := &agent.State{RunID: "r1", Task: agent.Task{Goal: "integrate", Mode: agent.ModeAgent}, Phase: agent.PhaseCode, Seq: 2}
	for seq, typ := range []agent.EventType{agent.EventStart, agent.EventPlan, agent.EventOperation} {
		var save *agent.State
		if typ == agent.EventPlan {
			save = st
		}
		if err := s.Save(ctx, save, &agent.Event{RunID: "r1", Seq: int64(seq + 1), Type: typ, Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = open(t, path)
	got, err := s.Load(ctx, "r1")
	if err != nil || got.Seq != 3 || got.Phase != agent.PhaseCode {
		t.Fatalf("Load after reopening = %+v, %v", got, err)
	}
	var types []agent.EventType
	for ev, err := range s.Events(ctx, "r1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	if len(types) != 2 || types[0] != agent.EventPlan || types[1] != agent.EventOperation {
		t.Errorf("Events after 1 = %v", types)
	}
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != "r1" || runs[0].Phase != "code" || runs[0].Goal != "integrate" {
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
