// Package sqlstore is the memory.Store both SQL backends share: one schema shape, one set of
// queries, with a Dialect for what differs (placeholders, schema, full-text search, write
// locking). memory/sqlite and memory/postgres are thin wrappers that open the database.
//
// Every entry is one row of entries whose data column holds the entry as JSON (the source of
// truth, so that export reproduces exactly what was imported); the other columns are copies
// for filtering. Times are Unix nanoseconds. Nothing is ever deleted.
//
// The files follow the concerns: sqlstore.go opens, migrates, closes and runs transactions;
// rows.go is an entry as stored and the row-level writes every change shares; write.go adds,
// updates, invalidates and uses entries; search.go gets and searches them; history.go is the
// history, namespaces, freezing and import; graph.go the entity graph.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labmate/labmate/memory"
)

// SchemaVersion is the version of the schema this package writes, kept in memory_meta.
// Version 2 added the entity graph and a finer duplicate key (see statement.Normalize); a
// version-1 store is migrated when it is opened.
const SchemaVersion = 2

// Dialect is what differs between SQL databases.
type Dialect struct {
	Name string
	// Rebind turns a query written with ? placeholders into the database's own.
	Rebind func(query string) string
	// Schema creates the tables in an empty database; it runs in one transaction.
	Schema []string
	// TextSearch returns the FROM clause (joining entries as e), the condition and the score
	// expression (higher is better) of a full-text search for terms (already normalised
	// words), with the single argument the FROM clause or condition takes. docs are TermDocs's
	// counts of the terms (nil without TermDocs, or for one term), for a ranking that weighs
	// rare terms more.
	TextSearch func(terms []string, docs []int) (from, where, score string, arg any)
	// Candidates, when set, is a query over the full-text index alone yielding (key, score),
	// best first, for terms (and docs, as TextSearch takes them); it takes the argument it
	// returns, then a LIMIT. Key names the entries column its keys match (read as text).
	Candidates func(terms []string, docs []int) (query string, arg any)
	Key        string
	// TermDocs, when set, counts (or estimates) the entries each term matches, so that very
	// common terms can be left out of the ranking (see pruneTerms).
	TermDocs func(ctx context.Context, db *sql.DB, terms []string) ([]int, error)
	// ExactTermDocs says that TermDocs counts exactly: a count of 0 means no entry has the term,
	// which can then be left out of a search without changing any score (SQLite). Without it a
	// 0 means unknown (PostgreSQL's statistics know only the common lexemes).
	ExactTermDocs bool
	// IndexVersion, when set, is a query (no arguments) yielding a value that changes whenever
	// the full-text index changes, whichever process wrote it (SQLite: FTS5's structure record,
	// which every write rewrites: its segments, a write counter). While it holds, term counts
	// and candidate rankings read from the index are reused exactly; without it they are kept
	// until this store writes, at most termCountsAge.
	IndexVersion string
	// Lock is run first in every write transaction (PostgreSQL takes an advisory lock; SQLite
	// starts its transactions IMMEDIATE and needs nothing).
	Lock func(ctx context.Context, tx *sql.Tx) error
	// Retryable reports a transient error (busy, serialisation failure) worth retrying.
	Retryable func(err error) bool
	// Unique reports a unique-constraint violation.
	Unique func(err error) bool
	// FTSInsert and FTSDelete, when set, maintain an external full-text index by hand (SQLite:
	// a trigger would make every statement a savepoint, and FTS5 flushes its buffer at each):
	// FTSInsert takes (rowid n, search), FTSDelete (rowid n, old search).
	FTSInsert, FTSDelete string
	// AfterWrite, when set, is run at the end of every write transaction (SQLite: an FTS5
	// merge of a few pages, so that an index written one entry at a time keeps few segments:
	// a search looks every term up in every segment).
	AfterWrite string
	// SerialWrites makes the writers of one process take turns before they ask the database
	// (SQLite's busy handler polls with sleeps, which is slow when many goroutines contend).
	SerialWrites bool
}

// Options configure a Store.
type Options struct {
	Embedder memory.Embedder  // nil: BM25 only
	Now      func() time.Time // nil: time.Now
}

// Store is a memory.Store over database/sql.
type Store struct {
	db     *sql.DB
	d      *Dialect
	emb    memory.Embedder
	now    func() time.Time
	closed atomic.Bool
	close  func() error
	wmu    sync.Mutex // with Dialect.SerialWrites
	// afterWrite is Dialect.AfterWrite once the schema exists.
	afterWrite string
	stmts      sync.Map     // query → *sql.Stmt
	writes     atomic.Int64 // write transactions committed

	termMu     sync.Mutex
	termCounts map[string]int // Dialect.TermDocs's counts, as of termWrites, termVer and termRead
	termWrites int64
	termRead   time.Time
	termVer    string
	candidates map[string][]candidate // Dialect.Candidates's rankings, as valid as termCounts; key: query, argument
}

// candidate is one row of a Dialect.Candidates ranking.
type candidate struct {
	key   string
	score float64
}

var _ memory.Store = (*Store)(nil)

// Open creates the schema if the database has none (every statement of Dialect.Schema is
// idempotent), refuses a newer one, and returns the store. closeFn releases what the caller
// opened (nil: db.Close).
func Open(ctx context.Context, db *sql.DB, d *Dialect, opts *Options, closeFn func() error) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Store{db: db, d: d, emb: opts.Embedder, now: opts.Now, close: closeFn}
	if s.now == nil {
		s.now = time.Now
	}
	if s.close == nil {
		s.close = db.Close
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, stmt := range s.d.Schema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("creating the schema: %q: %w", firstLine(stmt), err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q("INSERT INTO memory_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"), "schema_version", SchemaVersion); err != nil {
			return err
		}
		var version int
		if err := tx.QueryRowContext(ctx, "SELECT value FROM memory_meta WHERE key = 'schema_version'").Scan(&version); err != nil {
			return err
		}
		if version > SchemaVersion {
			return fmt.Errorf("%w: version %d, this labmate knows up to %d", memory.ErrNewerStore, version, SchemaVersion)
		}
		if version < SchemaVersion {
			if err := s.migrate(ctx, tx); err != nil {
				return fmt.Errorf("migrating the store from version %d to %d: %w", version, SchemaVersion, err)
			}
			if _, err := tx.ExecContext(ctx, s.q("UPDATE memory_meta SET value = ? WHERE key = 'schema_version'"), SchemaVersion); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.afterWrite = d.AfterWrite
	return s, nil
}

// migrate brings a version-1 store to version 2: the duplicate key of every active fact is
// recomputed with the finer normalisation (which never joins two keys that were apart), and
// every entry is linked to its entities.
func (s *Store) migrate(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT kind, data FROM entries")
	if err != nil {
		return err
	}
	var all []row
	for rows.Next() {
		var kind string
		var data []byte
		if err := rows.Scan(&kind, &data); err != nil {
			rows.Close()
			return err
		}
		r, err := decode(kind, data)
		if err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	now := s.stamp()
	for _, r := range all {
		if f := r.fact; f != nil && f.Status == memory.StatusActive {
			if _, err := s.exec(ctx, tx, "UPDATE entries SET norm = ? WHERE id = ?", normKey(f.Text), f.ID); err != nil {
				return err
			}
		}
		if err := s.link(ctx, tx, r, true, now); err != nil {
			return err
		}
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Close releases the database. Closing twice is not an error.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stmts.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	return s.close()
}

// DB is the underlying database, for benchmarks and tests.
func (s *Store) DB() *sql.DB { return s.db }

// write runs fn in a write transaction, retrying transient failures.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.closed.Load() {
		return memory.ErrClosed
	}
	backoff := time.Millisecond
	for attempt := 0; ; attempt++ {
		err := s.tryWrite(ctx, fn)
		if err == nil || attempt >= 20 || s.d.Retryable == nil || !s.d.Retryable(err) || ctx.Err() != nil {
			return err
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 100*time.Millisecond)
	}
}

func (s *Store) tryWrite(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.d.SerialWrites {
		s.wmu.Lock()
		defer s.wmu.Unlock()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if s.d.Lock != nil {
		if err := s.d.Lock(ctx, tx); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if s.afterWrite != "" {
		if _, err := s.exec(ctx, tx, s.afterWrite); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.writes.Add(1)
	return nil
}

func (s *Store) q(query string) string { return s.d.Rebind(query) }

// stmt is query (with ? placeholders) prepared once on the database: parsing SQL again for
// every statement would cost more than running it.
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, s.q(query))
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

func (s *Store) queryRow(ctx context.Context, q queryer, query string, args ...any) *sql.Row {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return q.QueryRowContext(ctx, s.q(query), args...) // reports the same error
	}
	if tx, ok := q.(*sql.Tx); ok {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (s *Store) stamp() time.Time { return s.now().UTC().Round(time.Microsecond) }
