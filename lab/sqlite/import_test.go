package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/campaignlog"
	"github.com/labmate/labmate/lab/sqlite"
	"github.com/labmate/labmate/protocol"
	psqlite "github.com/labmate/labmate/protocol/sqlite"
)

// oldCampaigns is campaigns.db as labmate wrote it when it was the data directory's campaign store.
const oldCampaigns = `
CREATE TABLE campaigns (id TEXT PRIMARY KEY, space TEXT NOT NULL, objective TEXT NOT NULL, grp TEXT NOT NULL,
	planner TEXT NOT NULL, seed INTEGER NOT NULL, budget INTEGER NOT NULL, prior TEXT NOT NULL, started INTEGER NOT NULL);
CREATE INDEX campaigns_space ON campaigns(space, objective);
CREATE TABLE steps (campaign_id TEXT NOT NULL REFERENCES campaigns(id), n INTEGER NOT NULL, conditions TEXT NOT NULL,
	value REAL NOT NULL, ok INTEGER NOT NULL, error TEXT NOT NULL, reasoning TEXT NOT NULL, raw TEXT NOT NULL,
	propose_ns INTEGER NOT NULL, time INTEGER NOT NULL, PRIMARY KEY (campaign_id, n));
PRAGMA user_version = 1;
INSERT INTO campaigns VALUES ('cA', 'suzuki', 'yield', 'A', 'bayes', 1, 2, '', 1700000000000000000);
INSERT INTO campaigns VALUES ('cB', 'suzuki', 'yield', 'B', 'random', 2, 3, '', 1700000100000000000);
INSERT INTO campaigns VALUES ('logged', 'suzuki', 'yield', 'C', 'random', 1, 1, '', 1700000200000000000);
INSERT INTO steps VALUES ('cA', 1, '{"ligand":"L1"}', 41.5, 1, '', 'try L1', '', 1000, 1700000001000000000);
INSERT INTO steps VALUES ('cA', 2, '{"ligand":"L2"}', 77, 1, '', '', '', 2000, 1700000002000000000);
INSERT INTO steps VALUES ('cB', 1, '{"ligand":"L9"}', 0, 0, 'unknown level', '', '', 0, 1700000101000000000);
INSERT INTO steps VALUES ('logged', 1, '{"ligand":"L3"}', 10, 1, '', '', '', 0, 1700000201000000000);
`

// A campaigns.db the old code wrote is imported once into the log and retired: each campaign
// the stream of its own session (one the log has already is left alone), and the priors read
// from the log are the file's.
func TestImportOldCampaigns(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(data, sqlite.File))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(oldCampaigns); err != nil {
		t.Fatal(err)
	}
	db.Close()
	log, err := psqlite.Open(filepath.Join(data, "labmate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	// Campaign "logged" ran from the command line, which logged it as well as recording it.
	cl := campaignlog.New(nil, log, func(string) lab.Scale { return lab.Scale{Mean: 10, Max: 20} })
	if err := cl.Begin(ctx, &lab.Campaign{ID: "logged", Space: "suzuki", Objective: "yield", Group: "C", Planner: "random", Budget: 1, Started: time.Unix(1700000200, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Record(ctx, &lab.Step{Campaign: "logged", N: 1, Conditions: lab.Conditions{"ligand": "L3"}, Value: 10, OK: true}); err != nil {
		t.Fatal(err)
	}
	if err := cl.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	n, err := sqlite.Import(ctx, data, log)
	if err != nil || n != 2 {
		t.Fatalf("Import = %d, %v; want 2 campaigns", n, err)
	}
	var got []string
	for s, err := range campaignlog.Steps(ctx, log, &lab.Query{Space: "suzuki", Objective: "yield", ExcludeGroup: "B"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s.Campaign+"/"+s.Group+"/"+s.Conditions["ligand"])
	}
	if strings.Join(got, " ") != "cA/A/L1 cA/A/L2 logged/C/L3" {
		t.Errorf("the priors from the log: %v", got)
	}
	obs, err := lab.Prior(ctx, cl, "suzuki", "yield", "A")
	if err != nil || len(obs) != 1 || obs[0].Group != "C" { // B's one step measured nothing
		t.Errorf("Prior outside A = %+v, %v", obs, err)
	}
	var end protocol.RunEnd
	for m, err := range log.Operation(ctx, "cB", "cB") {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeRunEnd {
			m.Decode(&end)
		}
	}
	if end.Reason != campaignlog.EndExhausted {
		t.Errorf("cB's run_end = %+v: one step of a budget of 3", end)
	}
	if _, err := os.Stat(filepath.Join(data, sqlite.File)); !os.IsNotExist(err) {
		t.Errorf("campaigns.db is still there: %v", err)
	}
	if note, err := os.ReadFile(filepath.Join(data, sqlite.File+".imported.txt")); err != nil || !strings.Contains(string(note), "2 campaigns") {
		t.Errorf("the note: %q, %v", note, err)
	}
	if n, err := sqlite.Import(ctx, data, log); n != 0 || err != nil {
		t.Errorf("a second Import = %d, %v", n, err)
	}
}
