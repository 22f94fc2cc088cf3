// Package sqlite checkpoints agent runs in one SQLite file (modernc.org/sqlite, pure Go): the
// run's State after each change, so that a run killed mid-way resumes where it stood. A run's
// events are its stream in the protocol log (agent.LogRun), not here.
//
// # Durability
//
// The file is in WAL mode with synchronous=NORMAL: a committed Save survives a crash of the
// process (kill -9 included), not necessarily a power loss, which may take the last saves back
// without corrupting the file. Each Save is one transaction.
//
// # Schema (version 1, kept in PRAGMA user_version)
//
//	runs(run_id PRIMARY KEY, goal, mode, phase, seq, state JSON, created, updated)
//
// Times are Unix seconds (REAL). Files written before runs were logged also hold a table of
// events, which nothing reads. A file with a newer schema version is refused.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/labmate/labmate/agent"

	"github.com/labmate/labmate/internal/sqlitefile"
)

const schemaVersion = 1

const schema = `
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
`

// ErrNewerSchema is wrapped by Open for a file written by a newer labmate.
var ErrNewerSchema = sqlitefile.ErrNewerSchema

// Store is an agent.Store in one SQLite file. Create it with Open.
type Store struct {
	path string
	db   *sql.DB
}

var _ agent.Store = (*Store)(nil)

// Open opens (creating when needed) the checkpoint file at path.
func Open(path string) (*Store, error) {
	db, err := sqlitefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("agent/sqlite: %w", err)
	}
	db.SetMaxOpenConns(1) // one writer; saves are small and sequential per run
	if err := sqlitefile.Migrate(context.Background(), db, schema, schemaVersion); err != nil {
		db.Close()
		return nil, fmt.Errorf("agent/sqlite: %s: %w", path, err)
	}
	return &Store{path: path, db: db}, nil
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// Save implements agent.Store.
func (s *Store) Save(ctx context.Context, st *agent.State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("agent/sqlite: encoding the state of run %s: %w", st.RunID, err)
	}
	now := unix(time.Now())
	if _, err := s.db.ExecContext(ctx, `INSERT INTO runs (run_id, goal, mode, phase, seq, state, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET phase = excluded.phase, seq = excluded.seq, state = excluded.state, updated = excluded.updated`,
		st.RunID, st.Task.Goal, string(st.Task.Mode), string(st.Phase), st.Seq, b, now, now); err != nil {
		return fmt.Errorf("agent/sqlite: %s: saving the state of run %s: %w", s.path, st.RunID, err)
	}
	return nil
}

// Load implements agent.Store.
func (s *Store) Load(ctx context.Context, runID string) (*agent.State, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, "SELECT state FROM runs WHERE run_id = ?", runID).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q is not in %s", agent.ErrUnknownRun, runID, s.path)
	}
	if err != nil {
		return nil, fmt.Errorf("agent/sqlite: loading run %s: %w", runID, err)
	}
	var st agent.State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("agent/sqlite: %s: the state of run %s is unreadable: %w", s.path, runID, err)
	}
	return &st, nil
}

// Run is one row of Runs: a run as a list shows it.
type Run struct {
	ID    string `json:"id"`
	Goal  string `json:"goal"`
	Mode  string `json:"mode"`
	Phase string `json:"phase"`
	Model string `json:"model,omitempty"`
	// Stop is why the run stopped last; empty while it has not. Resumable says it stopped
	// keeping its phase (interrupted, or its provider failed): Resume continues it.
	Stop      agent.StopReason `json:"stop,omitempty"`
	Resumable bool             `json:"resumable,omitempty"`
	Tokens    int64            `json:"tokens"` // input and output, every module
	Events    int64            `json:"events"`
	Created   time.Time        `json:"created"`
	Updated   time.Time        `json:"updated"`
}

// Runs lists the runs, the latest first.
func (s *Store) Runs(ctx context.Context) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT run_id, goal, mode, phase, seq, state, created, updated FROM runs ORDER BY updated DESC")
	if err != nil {
		return nil, fmt.Errorf("agent/sqlite: listing runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var c, u float64
		var b []byte
		if err := rows.Scan(&r.ID, &r.Goal, &r.Mode, &r.Phase, &r.Events, &b, &c, &u); err != nil {
			return nil, fmt.Errorf("agent/sqlite: listing runs: %w", err)
		}
		var st agent.State
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("agent/sqlite: %s: the state of run %s is unreadable: %w", s.path, r.ID, err)
		}
		r.Model = st.Model
		if st.Stop != nil {
			r.Stop, r.Resumable = st.Stop.Reason, st.Phase != agent.PhaseDone
		}
		for _, mu := range st.Usage {
			r.Tokens += mu.Total()
		}
		r.Created, r.Updated = fromUnix(c), fromUnix(u)
		out = append(out, r)
	}
	return out, rows.Err()
}

func fromUnix(f float64) time.Time { return time.Unix(0, int64(f*1e9)) }

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }
