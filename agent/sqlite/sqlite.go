// Package sqlite reads the file labmate kept agent checkpoints in before they were events of
// the runs' streams in the protocol log (DATA/runs.db), to import it once: Import moves every
// run's last State into the log (agent.Checkpoints.ImportRun) and retires the file, renamed
// runs.db.imported with a note beside it. Nothing writes such a file any more.
//
// # Schema (version 1, kept in PRAGMA user_version)
//
//	runs(run_id PRIMARY KEY, goal, mode, phase, seq, state JSON, created, updated)
//
// Times are Unix seconds (REAL). Files written before runs were logged also hold a table of
// events, which nothing reads.
package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/labmate/labmate/agent"

	"github.com/labmate/labmate/internal/sqlitefile"
)

// File is the old checkpoint file's name in a data directory.
const File = "runs.db"

// Import imports the checkpoint file of data directory data (File), if there is one, into cp
// and retires it. It returns how many runs it imported; runs whose stream has a checkpoint
// already are left as they are.
func Import(ctx context.Context, data string, cp *agent.Checkpoints) (int, error) {
	path := filepath.Join(data, File)
	taken, release, err := sqlitefile.Adopt(path)
	if err != nil || taken == "" {
		return 0, err
	}
	defer release()
	n, err := importFile(ctx, taken, cp)
	if err != nil {
		return n, fmt.Errorf("agent/sqlite: importing %s into the log: %w (it is kept as %s; the next start tries again)", path, err, taken)
	}
	note := fmt.Sprintf("labmate imported the agent runs of %s (%d runs) into %s on %s:\n"+
		"their checkpoints are now events of the runs' streams there. This file is kept for reference\n"+
		"and is never read again; delete it when you no longer need it.\n",
		File, n, "labmate.db", time.Now().UTC().Format(time.RFC3339))
	return n, sqlitefile.Retire(taken, path, note)
}

func importFile(ctx context.Context, path string, cp *agent.Checkpoints) (int, error) {
	db, err := sqlitefile.Open(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, err
	}
	if v != 1 {
		return 0, fmt.Errorf("schema version %d: this labmate imports version 1", v)
	}
	rows, err := db.QueryContext(ctx, "SELECT run_id, state, updated FROM runs ORDER BY updated")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var b []byte
		var updated float64
		if err := rows.Scan(&id, &b, &updated); err != nil {
			return n, err
		}
		var st agent.State
		if err := json.Unmarshal(b, &st); err != nil {
			return n, fmt.Errorf("the state of run %s is unreadable: %w", id, err)
		}
		st.RunID = id
		done, err := cp.ImportRun(ctx, &st, time.Unix(0, int64(updated*1e9)))
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, rows.Err()
}
