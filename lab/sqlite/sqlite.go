// Package sqlite is the embedded lab.Store: campaigns and their steps in one SQLite file
// (modernc.org/sqlite, pure Go), so that later campaigns can read earlier ones as a prior.
//
// # Schema (version 1, kept in PRAGMA user_version)
//
//	campaigns(id PRIMARY KEY, space, objective, grp, planner, seed, budget, prior, started)
//	steps(campaign_id, n, conditions JSON, value, ok, error, reasoning, raw, propose_ns, time,
//	      PRIMARY KEY(campaign_id, n))
//
// started and time are Unix nanoseconds. A file with a newer schema is refused.
//
// labmate's data directory keeps campaigns in the protocol log (lab/campaignlog) and no longer
// in DATA/campaigns.db: Import moves such a file there once. A store of this package remains
// for those who name one (labmate campaign run --store, the campaign eval).
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/campaignlog"

	"github.com/labmate/labmate/internal/sqlitefile"
)

const schemaVersion = 1

const schema = `
CREATE TABLE campaigns (
	id        TEXT PRIMARY KEY,
	space     TEXT NOT NULL,
	objective TEXT NOT NULL,
	grp       TEXT NOT NULL,
	planner   TEXT NOT NULL,
	seed      INTEGER NOT NULL,
	budget    INTEGER NOT NULL,
	prior     TEXT NOT NULL,
	started   INTEGER NOT NULL
);
CREATE INDEX campaigns_space ON campaigns(space, objective);
CREATE TABLE steps (
	campaign_id TEXT NOT NULL REFERENCES campaigns(id),
	n           INTEGER NOT NULL,
	conditions  TEXT NOT NULL,
	value       REAL NOT NULL,
	ok          INTEGER NOT NULL,
	error       TEXT NOT NULL,
	reasoning   TEXT NOT NULL,
	raw         TEXT NOT NULL,
	propose_ns  INTEGER NOT NULL,
	time        INTEGER NOT NULL,
	PRIMARY KEY (campaign_id, n)
);
`

// ErrNewerSchema: the file was written by a newer labmate.
var ErrNewerSchema = sqlitefile.ErrNewerSchema

// Store is a lab.Store in a SQLite file. It is safe for concurrent use.
type Store struct {
	db *sql.DB
}

var _ lab.Store = (*Store)(nil)

// Open opens or creates the store at path (its directory is created).
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lab/sqlite: %w", err)
	}
	db, err := sqlitefile.Open(path, "_pragma=foreign_keys(1)")
	if err != nil {
		return nil, fmt.Errorf("lab/sqlite: %w", err)
	}
	if err := sqlitefile.Migrate(context.Background(), db, schema, schemaVersion); err != nil {
		db.Close()
		return nil, fmt.Errorf("lab/sqlite: %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Begin records a campaign.
func (s *Store) Begin(ctx context.Context, c *lab.Campaign) error {
	if c.ID == "" {
		return fmt.Errorf("lab/sqlite: campaign without an id")
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO campaigns(id, space, objective, grp, planner, seed, budget, prior, started)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, c.Space, c.Objective, c.Group, c.Planner, c.Seed, c.Budget, c.Prior, c.Started.UnixNano())
	if err != nil {
		return fmt.Errorf("lab/sqlite: begin campaign %s: %w", c.ID, err)
	}
	return nil
}

// Record records a step of a begun campaign.
func (s *Store) Record(ctx context.Context, st *lab.Step) error {
	cond, err := json.Marshal(st.Conditions)
	if err != nil {
		return fmt.Errorf("lab/sqlite: step %s/%d: %w", st.Campaign, st.N, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO steps(campaign_id, n, conditions, value, ok, error, reasoning, raw, propose_ns, time)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, st.Campaign, st.N, string(cond), st.Value, st.OK, st.Error, st.Reasoning, st.Raw,
		st.Propose.Nanoseconds(), st.Time.UnixNano())
	if err != nil {
		return fmt.Errorf("lab/sqlite: record step %s/%d: %w", st.Campaign, st.N, err)
	}
	return nil
}

// Steps yields the steps of the campaigns on q.Space and q.Objective outside q.ExcludeGroup.
func (s *Store) Steps(ctx context.Context, q *lab.Query) iter.Seq2[*lab.Step, error] {
	return s.steps(ctx, "c.space = ? AND c.objective = ? AND c.grp <> ?", q.Space, q.Objective, q.ExcludeGroup)
}

// steps yields the steps where says, in campaign then turn order.
func (s *Store) steps(ctx context.Context, where string, args ...any) iter.Seq2[*lab.Step, error] {
	return func(yield func(*lab.Step, error) bool) {
		rows, err := s.db.QueryContext(ctx, `SELECT s.campaign_id, c.grp, s.n, s.conditions, s.value, s.ok, s.error,
			s.reasoning, s.raw, s.propose_ns, s.time
			FROM steps s JOIN campaigns c ON c.id = s.campaign_id
			WHERE `+where+`
			ORDER BY c.started, c.id, s.n`, args...)
		if err != nil {
			yield(nil, fmt.Errorf("lab/sqlite: steps: %w", err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var st lab.Step
			var cond string
			var prop, t int64
			if err := rows.Scan(&st.Campaign, &st.Group, &st.N, &cond, &st.Value, &st.OK, &st.Error,
				&st.Reasoning, &st.Raw, &prop, &t); err != nil {
				yield(nil, fmt.Errorf("lab/sqlite: steps: %w", err))
				return
			}
			if err := json.Unmarshal([]byte(cond), &st.Conditions); err != nil {
				yield(nil, fmt.Errorf("lab/sqlite: step %s/%d: conditions: %w", st.Campaign, st.N, err))
				return
			}
			st.Propose, st.Time = time.Duration(prop), time.Unix(0, t)
			if !yield(&st, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(nil, fmt.Errorf("lab/sqlite: steps: %w", err))
		}
	}
}

// File is the campaign store's name in a data directory, before campaigns were only in the
// protocol log (Import).
const File = "campaigns.db"

// Import imports the campaign store of data directory data (File), if there is one, into
// log — each campaign the stream of its own session, as labmate logs campaigns
// (campaignlog.Import), unless log has it already — and retires the file, renamed
// campaigns.db.imported with a note beside it. It returns how many campaigns it imported.
func Import(ctx context.Context, data string, log campaignlog.ImportLog) (int, error) {
	path := filepath.Join(data, File)
	taken, release, err := sqlitefile.Adopt(path)
	if err != nil || taken == "" {
		return 0, err
	}
	defer release()
	n, err := importFile(ctx, taken, log)
	if err != nil {
		return n, fmt.Errorf("lab/sqlite: importing %s into the log: %w (it is kept as %s; the next start tries again)", path, err, taken)
	}
	note := fmt.Sprintf("labmate imported the campaigns of %s (%d campaigns) into labmate.db on %s:\n"+
		"each is the stream of its own session there, which later campaigns' priors read. This file is\n"+
		"kept for reference and is never read again; delete it when you no longer need it.\n",
		File, n, time.Now().UTC().Format(time.RFC3339))
	return n, sqlitefile.Retire(taken, path, note)
}

func importFile(ctx context.Context, path string, log campaignlog.ImportLog) (int, error) {
	st, err := Open(path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	rows, err := st.db.QueryContext(ctx, `SELECT id, space, objective, grp, planner, seed, budget, prior, started FROM campaigns ORDER BY started, id`)
	if err != nil {
		return 0, err
	}
	var camps []*lab.Campaign
	for rows.Next() {
		c := &lab.Campaign{}
		var started int64
		if err := rows.Scan(&c.ID, &c.Space, &c.Objective, &c.Group, &c.Planner, &c.Seed, &c.Budget, &c.Prior, &started); err != nil {
			rows.Close()
			return 0, err
		}
		c.Started = time.Unix(0, started)
		camps = append(camps, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, c := range camps {
		var steps []lab.Step
		for s, err := range st.steps(ctx, "s.campaign_id = ?", c.ID) {
			if err != nil {
				return n, err
			}
			steps = append(steps, *s)
		}
		done, err := campaignlog.Import(ctx, log, c, steps)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}
