package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/sqlite"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/protocol"
	psqlite "github.com/labmate/labmate/protocol/sqlite"
)

// oldSchema is runs.db as labmate wrote it before checkpoints were in the log (version 1).
const oldSchema = `
CREATE TABLE runs (
	run_id  TEXT PRIMARY KEY,
	goal    TEXT NOT NULL,
	mode    TEXT NOT NULL,
	phase   TEXT NOT NULL,
	seq     INTEGER NOT NULL,
	state   BLOB NOT NULL,
	created REAL NOT NULL,
	updated REAL NOT NULL
);
CREATE TABLE events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, event BLOB NOT NULL, PRIMARY KEY (run_id, seq));
PRAGMA user_version = 1;
`

// writeOld writes a runs.db of the old schema holding states, as the old code's Save did.
func writeOld(t *testing.T, path string, states ...*agent.State) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(oldSchema); err != nil {
		t.Fatal(err)
	}
	for i, st := range states {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO runs (run_id, goal, mode, phase, seq, state, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			st.RunID, st.Task.Goal, string(st.Task.Mode), string(st.Phase), st.Seq, b, 1.7e9+float64(i), 1.7e9+float64(i)+0.5); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckpointsStore(t *testing.T) {
	agenttest.RunStore(t, func(t *testing.T) agent.Store {
		log, err := psqlite.Open(filepath.Join(t.TempDir(), "labmate.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		return agent.NewCheckpoints(log)
	})
}

// A runs.db the old code wrote is imported once into the log and retired: each run's state is
// its stream's checkpoint (a run the log already had keeps its events), run list shows the
// same runs, a resumable run resumes, and the file is kept aside with a note.
func TestImportOldRuns(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	usage := map[string]*llm.ModuleUsage{"plan": {Module: "plan", Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}}
	cancelled := &agent.State{RunID: "r-cancelled", Task: agent.Task{ID: "r-cancelled", Goal: "integrate", Mode: agent.ModeAgent},
		Phase: agent.PhaseCode, Seq: 7, Model: "openai:gpt-4.1", Usage: usage,
		Stop: &agent.Stop{Reason: agent.StopCancelled, Resumable: true}}
	answered := &agent.State{RunID: "r-answered", Task: agent.Task{ID: "r-answered", Goal: "2+2", Mode: agent.ModeDirect},
		Phase: agent.PhaseDone, Seq: 3, Stop: &agent.Stop{Reason: agent.StopAnswered}}
	killed := &agent.State{RunID: "r-killed", Task: agent.Task{ID: "r-killed", Goal: "fit", Mode: agent.ModeAgent}, Phase: agent.PhasePlan, Seq: 1}
	writeOld(t, filepath.Join(data, sqlite.File), cancelled, answered, killed)

	log, err := psqlite.Open(filepath.Join(data, "labmate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	// The cancelled run's events were logged already (since runs were logged), without a checkpoint.
	for _, m := range []*protocol.EnhancedMessage{
		mustMessage(t, protocol.TypeRunEvent, "r-cancelled", &agent.Event{RunID: "r-cancelled", Seq: 1, Type: agent.EventStart}),
		mustMessage(t, protocol.TypeRunEnd, "r-cancelled", &protocol.RunEnd{Reason: protocol.Reason("cancelled"), Resumable: true}),
	} {
		if _, err := log.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	cp := agent.NewCheckpoints(log)
	n, err := sqlite.Import(ctx, data, cp)
	if err != nil || n != 3 {
		t.Fatalf("Import = %d, %v; want 3 runs", n, err)
	}
	for _, want := range []*agent.State{cancelled, answered, killed} {
		got, err := cp.Load(ctx, want.RunID)
		if err != nil || got.Phase != want.Phase || got.Seq != want.Seq || got.Task.Goal != want.Task.Goal {
			t.Errorf("Load(%s) = %+v, %v", want.RunID, got, err)
		}
	}
	runs, err := cp.Runs(ctx)
	if err != nil || len(runs) != 3 {
		t.Fatalf("Runs = %+v, %v", runs, err)
	}
	byID := map[string]agent.RunSummary{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	if r := byID["r-cancelled"]; r.Stop != agent.StopCancelled || !r.Resumable || r.Tokens != 120 || r.Model != "openai:gpt-4.1" || r.Events != 7 {
		t.Errorf("the cancelled run is listed as %+v", r)
	}
	if r := byID["r-answered"]; r.Stop != agent.StopAnswered || r.Resumable || r.Phase != "done" {
		t.Errorf("the answered run is listed as %+v", r)
	}
	// The logged run kept its events; the runs the log did not have end as they stopped.
	types := func(id string) (out []string) {
		for m, err := range log.Operation(ctx, id, id) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(m.Type))
		}
		return out
	}
	if got := strings.Join(types("r-cancelled"), " "); got != "run_event run_end run_checkpoint" {
		t.Errorf("the logged run's stream: %s", got)
	}
	var end protocol.RunEnd
	for m := range log.Operation(ctx, "r-killed", "r-killed") {
		if m.Type == protocol.TypeRunEnd {
			m.Decode(&end)
		}
	}
	if !end.Resumable || end.Reason != protocol.ReasonProcessDied {
		t.Errorf("the killed run's run_end = %+v, want a resumable process_died", end)
	}
	// A resume appends after the imported checkpoint.
	if m, err := log.Append(ctx, mustMessage(t, protocol.TypeRunResume, "r-killed", &protocol.RunResume{By: "test"})); err != nil || m == nil {
		t.Errorf("resuming the imported run: %v", err)
	}
	// The file is retired, with a note; a second import finds nothing.
	if _, err := os.Stat(filepath.Join(data, sqlite.File)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runs.db is still there: %v", err)
	}
	note, err := os.ReadFile(filepath.Join(data, sqlite.File+".imported.txt"))
	if err != nil || !strings.Contains(string(note), "3 runs") {
		t.Errorf("the note: %q, %v", note, err)
	}
	if _, err := os.Stat(filepath.Join(data, sqlite.File+".imported")); err != nil {
		t.Errorf("the retired file: %v", err)
	}
	if n, err := sqlite.Import(ctx, data, cp); n != 0 || err != nil {
		t.Errorf("a second Import = %d, %v", n, err)
	}
}

// A file of another schema version is not imported and stays where it was, for a later labmate.
func TestImportRefusesOtherVersion(t *testing.T) {
	data := t.TempDir()
	path := filepath.Join(data, sqlite.File)
	writeOld(t, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 2"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	log, err := psqlite.Open(filepath.Join(data, "labmate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if _, err := sqlite.Import(context.Background(), data, agent.NewCheckpoints(log)); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("Import of a version-2 file = %v", err)
	}
}

func mustMessage(t *testing.T, typ protocol.Type, id string, payload any) *protocol.EnhancedMessage {
	t.Helper()
	m, err := protocol.NewMessage(typ, id, id, payload)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
