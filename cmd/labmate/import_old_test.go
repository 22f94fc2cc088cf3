package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
)

// The first command that opens a data directory an earlier labmate wrote imports its runs.db
// and campaigns.db into the log and retires them: labmate run list lists the old runs, a
// campaign's steps are in the log, and both files are kept aside with a note.
func TestImportOldStores(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	exec := func(path, script string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(script); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := json.Marshal(&agent.State{RunID: "old-run", Task: agent.Task{ID: "old-run", Goal: "an old task", Mode: agent.ModeAgent},
		Phase: agent.PhaseCode, Seq: 4, Model: "openai:old", Stop: &agent.Stop{Reason: agent.StopCancelled, Resumable: true}})
	exec(filepath.Join(data, "runs.db"), `CREATE TABLE runs (run_id TEXT PRIMARY KEY, goal TEXT NOT NULL, mode TEXT NOT NULL,
		phase TEXT NOT NULL, seq INTEGER NOT NULL, state BLOB NOT NULL, created REAL NOT NULL, updated REAL NOT NULL);
		PRAGMA user_version = 1;
		INSERT INTO runs VALUES ('old-run', 'an old task', 'agent', 'code', 4, '`+string(st)+`', 1.7e9, 1.7e9);`)
	exec(filepath.Join(data, "campaigns.db"), `CREATE TABLE campaigns (id TEXT PRIMARY KEY, space TEXT NOT NULL, objective TEXT NOT NULL,
		grp TEXT NOT NULL, planner TEXT NOT NULL, seed INTEGER NOT NULL, budget INTEGER NOT NULL, prior TEXT NOT NULL, started INTEGER NOT NULL);
		CREATE TABLE steps (campaign_id TEXT NOT NULL REFERENCES campaigns(id), n INTEGER NOT NULL, conditions TEXT NOT NULL,
		value REAL NOT NULL, ok INTEGER NOT NULL, error TEXT NOT NULL, reasoning TEXT NOT NULL, raw TEXT NOT NULL,
		propose_ns INTEGER NOT NULL, time INTEGER NOT NULL, PRIMARY KEY (campaign_id, n));
		PRAGMA user_version = 1;
		INSERT INTO campaigns VALUES ('old-campaign', 'suzuki', 'yield', 'A', 'bayes', 1, 1, '', 1700000000000000000);
		INSERT INTO steps VALUES ('old-campaign', 1, '{"ligand":"L1"}', 41.5, 1, '', '', '', 0, 1700000001000000000);`)

	out, errOut, code := labmate(t, dir, "", "run", "list", "--json", "--data", data)
	var runs []agent.RunSummary
	if err := json.Unmarshal([]byte(out), &runs); err != nil || code != 0 {
		t.Fatalf("run list --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if len(runs) != 1 || runs[0].ID != "old-run" || runs[0].Goal != "an old task" || runs[0].Stop != agent.StopCancelled || !runs[0].Resumable {
		t.Errorf("run list after the import = %+v", runs)
	}
	for _, want := range []string{"imported 1 agent runs of " + filepath.Join(data, "runs.db"), "imported 1 campaigns of " + filepath.Join(data, "campaigns.db")} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, f := range []string{"runs.db", "campaigns.db"} {
		if _, err := os.Stat(filepath.Join(data, f)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", f, err)
		}
		for _, kept := range []string{f + ".imported", f + ".imported.txt"} {
			if _, err := os.Stat(filepath.Join(data, kept)); err != nil {
				t.Errorf("%s: %v", kept, err)
			}
		}
	}
	out, errOut, code = labmate(t, dir, "", "run", "show", "old-run", "--json", "--data", data)
	if code != 0 || !strings.Contains(out, `"an old task"`) || strings.Contains(errOut, "imported") {
		t.Errorf("run show after the import: exit %d\n%s\n%s", code, out, errOut)
	}
}
