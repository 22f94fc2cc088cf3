// Package sqlstore is the memory.Store both SQL backends share: one schema shape, one set of
// queries, with a Dialect for what differs (placeholders, schema, full-text search, write
// locking). memory/sqlite and memory/postgres are thin wrappers that open the database.
//
// Every entry is one row of entries whose data column holds the entry as JSON (the source of
// truth, so that export reproduces exactly what was imported); the other columns are copies
// for filtering. Times are Unix nanoseconds. Nothing is ever deleted.
package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/internal/rank"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
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

// row is an entry as stored.
type row struct {
	fact  *memory.Fact
	skill *memory.Skill
}

func (r row) entry() *memory.Entry { return &memory.Entry{Fact: r.fact, Skill: r.skill} }

func (r row) id() string {
	if r.skill != nil {
		return r.skill.ID
	}
	return r.fact.ID
}

func (r row) namespace() string {
	if r.skill != nil {
		return r.skill.Namespace
	}
	return r.fact.Namespace
}

func decode(kind string, data []byte) (row, error) {
	if kind == string(memory.KindSkill) {
		var sk memory.Skill
		if err := json.Unmarshal(data, &sk); err != nil {
			return row{}, fmt.Errorf("decoding a stored skill: %w", err)
		}
		return row{skill: &sk}, nil
	}
	var f memory.Fact
	if err := json.Unmarshal(data, &f); err != nil {
		return row{}, fmt.Errorf("decoding a stored fact: %w", err)
	}
	return row{fact: &f}, nil
}

// queryer is a *sql.DB or *sql.Tx.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Store) get(ctx context.Context, q queryer, id string) (row, error) {
	var kind string
	var data []byte
	err := s.queryRow(ctx, q, "SELECT kind, data FROM entries WHERE id = ?", id).Scan(&kind, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, fmt.Errorf("%w: entry %q", memory.ErrNotFound, id)
	}
	if err != nil {
		return row{}, err
	}
	return decode(kind, data)
}

// frozen fails with ErrFrozen when ns or one of its parents is frozen.
func (s *Store) frozen(ctx context.Context, q queryer, ns string) error {
	var name string
	err := s.queryRow(ctx, q, `SELECT name FROM namespaces WHERE frozen = 1 AND (name = ? OR name = substr(?, 1, length(name)) AND substr(?, length(name) + 1, 1) = '/') ORDER BY name LIMIT 1`, ns, ns, ns).Scan(&name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case name == ns:
		return fmt.Errorf("%w: %s", memory.ErrFrozen, ns)
	default:
		return fmt.Errorf("%w: %s (inside frozen %s)", memory.ErrFrozen, ns, name)
	}
}

func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// searchText is what full-text search and embeddings index.
func (r row) searchText() string {
	if sk := r.skill; sk != nil {
		return strings.Join(append([]string{sk.Name, sk.Description, sk.Body}, sk.Tags...), "\n")
	}
	return strings.Join(append([]string{r.fact.Text}, r.fact.Tags...), "\n")
}

func (r row) tags() []string {
	if r.skill != nil {
		return r.skill.Tags
	}
	return r.fact.Tags
}

// put inserts or replaces the entry's row and its tags.
func (s *Store) put(ctx context.Context, tx *sql.Tx, r row, insert bool) error {
	var (
		kind, name, norm, status  string
		created, updated, validAt time.Time
		invalidAt                 time.Time
		data                      []byte
		err                       error
	)
	if sk := r.skill; sk != nil {
		kind, name, status = string(memory.KindSkill), sk.Name, string(sk.Status)
		created, updated, validAt = sk.CreatedAt, sk.UpdatedAt, sk.CreatedAt
		data, err = json.Marshal(sk)
	} else {
		f := r.fact
		kind, norm, status = string(f.Kind), normKey(f.Text), string(f.Status)
		created, updated, validAt, invalidAt = f.CreatedAt, f.UpdatedAt, f.ValidFrom, f.InvalidAt
		data, err = json.Marshal(f)
	}
	if err != nil {
		return err
	}
	var nameArg, normArg any
	if name != "" {
		nameArg = name
	}
	if norm != "" && status == string(memory.StatusActive) {
		normArg = norm // only active facts take part in exact-duplicate detection
	}
	search := r.searchText()
	if insert {
		var res sql.Result
		res, err = s.exec(ctx, tx, `INSERT INTO entries (id, namespace, kind, name, norm, status, search, data, created, updated, valid_from, invalid_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.id(), r.namespace(), kind, nameArg, normArg, status, search, data, nanos(created), nanos(updated), nanos(validAt), nanos(invalidAt))
		if err == nil && s.d.FTSInsert != "" {
			var n int64
			if n, err = res.LastInsertId(); err == nil {
				_, err = s.exec(ctx, tx, s.d.FTSInsert, n, search)
			}
		}
	} else {
		if s.d.FTSInsert != "" {
			var n int64
			var old string
			if err = s.queryRow(ctx, tx, "SELECT n, search FROM entries WHERE id = ?", r.id()).Scan(&n, &old); err == nil && old != search {
				if _, err = s.exec(ctx, tx, s.d.FTSDelete, n, old); err == nil {
					_, err = s.exec(ctx, tx, s.d.FTSInsert, n, search)
				}
			}
		}
		if err == nil {
			_, err = s.exec(ctx, tx, `UPDATE entries SET namespace = ?, kind = ?, name = ?, norm = ?, status = ?, search = ?, data = ?,
			created = ?, updated = ?, valid_from = ?, invalid_at = ? WHERE id = ?`,
				r.namespace(), kind, nameArg, normArg, status, search, data, nanos(created), nanos(updated), nanos(validAt), nanos(invalidAt), r.id())
		}
		if err == nil {
			_, err = s.exec(ctx, tx, "DELETE FROM entry_tags WHERE entry_id = ?", r.id())
		}
	}
	if err != nil {
		if s.d.Unique != nil && s.d.Unique(err) {
			return fmt.Errorf("%w: %s %q in %s: another active entry has the same key: %w", memory.ErrConflict, kind, r.id(), r.namespace(), err)
		}
		return err
	}
	for _, tag := range uniq(r.tags()) {
		if _, err := s.exec(ctx, tx, "INSERT INTO entry_tags (entry_id, tag) VALUES (?, ?)", r.id(), tag); err != nil {
			return err
		}
	}
	return s.link(ctx, tx, r, insert, s.stamp())
}

func uniq(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// union appends the elements of b missing from a, keeping a's order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func (s *Store) log(ctx context.Context, tx *sql.Tx, c *memory.Change) error {
	_, err := s.exec(ctx, tx, `INSERT INTO history (entry_id, namespace, event, old, new, actor, reason, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		c.EntryID, c.Namespace, string(c.Event), c.Old, c.New, c.Actor, c.Reason, c.Time.UnixNano())
	return err
}

// vector embeds text when the store has an embedder.
func (s *Store) vector(ctx context.Context, text string) ([]float32, error) {
	if s.emb == nil {
		return nil, nil
	}
	vs, err := s.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embedding with %s: %w", s.emb.Name(), err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embedding with %s: %d vectors for 1 text", s.emb.Name(), len(vs))
	}
	return vs[0], nil
}

func (s *Store) putVector(ctx context.Context, tx *sql.Tx, id string, v []float32) error {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	if _, err := s.exec(ctx, tx, "DELETE FROM vectors WHERE entry_id = ?", id); err != nil {
		return err
	}
	_, err := s.exec(ctx, tx, "INSERT INTO vectors (entry_id, model, vec) VALUES (?, ?, ?)", id, s.emb.Name(), b)
	return err
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// normKey is the exact-duplicate key of a fact's text: a digest of statement.Normalize, so that
// the unique index stays small however long the text (PostgreSQL's B-tree rows are limited).
func normKey(text string) string {
	sum := sha256.Sum256([]byte(statement.Normalize(text)))
	return hex.EncodeToString(sum[:16])
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// AddFact implements memory.Store.
func (s *Store) AddFact(ctx context.Context, p *memory.AddFactParams) (*memory.AddFactResult, error) {
	if p == nil || p.Fact == nil {
		return nil, fmt.Errorf("%w: AddFact without a fact", memory.ErrInvalid)
	}
	f := *p.Fact
	f.Tags, f.Evidence = slices.Clone(f.Tags), slices.Clone(f.Evidence)
	f.Provenance.Operations = slices.Clone(f.Provenance.Operations)
	if f.Kind == "" {
		f.Kind = memory.KindObservation
	}
	f.Status, f.Reason, f.SupersededBy, f.InvalidAt = memory.StatusActive, "", "", time.Time{}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if f.ID == "" {
		f.ID = newID()
	}
	vec, err := s.vector(ctx, row{fact: &f}.searchText())
	if err != nil {
		return nil, err
	}
	var res memory.AddFactResult
	err = s.write(ctx, func(tx *sql.Tx) error {
		now := s.stamp()
		if err := s.frozen(ctx, tx, f.Namespace); err != nil {
			return err
		}
		var id string
		err := s.queryRow(ctx, tx, "SELECT id FROM entries WHERE namespace = ? AND norm = ?", f.Namespace, normKey(f.Text)).Scan(&id)
		if err == nil { // an exact duplicate: merge into it
			old, err := s.get(ctx, tx, id)
			if err != nil {
				return err
			}
			m := old.fact
			m.Tags = union(m.Tags, f.Tags)
			m.Evidence = union(m.Evidence, f.Evidence)
			m.Tried, m.Worked = union(m.Tried, f.Tried), union(m.Worked, f.Worked)
			m.Provenance.Absorb(f.Provenance)
			m.Confidence = max(m.Confidence, f.Confidence)
			m.UpdatedAt = now
			if err := s.put(ctx, tx, row{fact: m}, false); err != nil {
				return err
			}
			res = memory.AddFactResult{Fact: m, Merged: true}
			return s.log(ctx, tx, &memory.Change{EntryID: m.ID, Namespace: m.Namespace, Event: memory.EventMerge,
				Old: m.Text, New: f.Text, Actor: p.Actor, Reason: orDefault(p.Reason, "exact duplicate"), Time: now})
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		g := f
		g.CreatedAt, g.UpdatedAt = now, now
		if g.ValidFrom.IsZero() {
			g.ValidFrom = now
		}
		if err := s.put(ctx, tx, row{fact: &g}, true); err != nil {
			return err
		}
		if err := s.putVector(ctx, tx, g.ID, vec); err != nil {
			return err
		}
		res = memory.AddFactResult{Fact: &g}
		return s.log(ctx, tx, &memory.Change{EntryID: g.ID, Namespace: g.Namespace, Event: memory.EventAdd,
			New: g.Text, Actor: p.Actor, Reason: p.Reason, Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("adding a fact to %s: %w", f.Namespace, err)
	}
	return &res, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// UpdateFact implements memory.Store.
func (s *Store) UpdateFact(ctx context.Context, p *memory.UpdateFactParams) (*memory.Fact, error) {
	if p == nil || p.ID == "" {
		return nil, fmt.Errorf("%w: UpdateFact without an id", memory.ErrInvalid)
	}
	var vec []float32
	if p.Text != "" || p.Tags != nil {
		// Embed before the transaction; the text may still be refused below.
		cur, err := s.Get(ctx, &memory.GetParams{ID: p.ID})
		if err == nil && cur.Fact != nil {
			f := *cur.Fact
			if p.Text != "" {
				f.Text = p.Text
			}
			if p.Tags != nil {
				f.Tags = p.Tags
			}
			if vec, err = s.vector(ctx, row{fact: &f}.searchText()); err != nil {
				return nil, err
			}
		}
	}
	var out *memory.Fact
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := s.get(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if r.fact == nil {
			return fmt.Errorf("%w: %q is a skill, not a fact", memory.ErrInvalid, p.ID)
		}
		f := r.fact
		if err := s.frozen(ctx, tx, f.Namespace); err != nil {
			return err
		}
		if f.Status != memory.StatusActive {
			return fmt.Errorf("%w: fact %q is %s", memory.ErrNotActive, f.ID, f.Status)
		}
		old := f.Text
		if p.Text != "" {
			f.Text = p.Text
		}
		if p.Kind != "" {
			f.Kind = p.Kind
		}
		if p.Tags != nil {
			f.Tags = slices.Clone(p.Tags)
		}
		f.Evidence = union(f.Evidence, p.Evidence)
		f.Tried, f.Worked = union(f.Tried, p.Tried), union(f.Worked, p.Worked)
		event := memory.EventUpdate
		if p.Merge != nil {
			f.Provenance.Absorb(*p.Merge)
			event = memory.EventMerge
		}
		if p.Confidence != 0 {
			f.Confidence = p.Confidence
		}
		if err := f.Validate(); err != nil {
			return err
		}
		f.UpdatedAt = s.stamp()
		if err := s.put(ctx, tx, r, false); err != nil {
			return err
		}
		if err := s.putVector(ctx, tx, f.ID, vec); err != nil {
			return err
		}
		out = f
		return s.log(ctx, tx, &memory.Change{EntryID: f.ID, Namespace: f.Namespace, Event: event,
			Old: old, New: f.Text, Actor: p.Actor, Reason: p.Reason, Time: f.UpdatedAt})
	})
	if err != nil {
		return nil, fmt.Errorf("updating fact %s: %w", p.ID, err)
	}
	return out, nil
}

// Invalidate implements memory.Store.
func (s *Store) Invalidate(ctx context.Context, p *memory.InvalidateParams) (*memory.Entry, error) {
	if p == nil || p.ID == "" {
		return nil, fmt.Errorf("%w: Invalidate without an id", memory.ErrInvalid)
	}
	if strings.TrimSpace(p.Reason) == "" {
		return nil, fmt.Errorf("%w: invalidating %s: a reason is required", memory.ErrInvalid, p.ID)
	}
	if p.SupersededBy == p.ID {
		return nil, fmt.Errorf("%w: %s cannot supersede itself", memory.ErrInvalid, p.ID)
	}
	var out *memory.Entry
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := s.get(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if err := s.frozen(ctx, tx, r.namespace()); err != nil {
			return err
		}
		if p.SupersededBy != "" {
			if _, err := s.get(ctx, tx, p.SupersededBy); err != nil {
				return fmt.Errorf("superseded by: %w", err)
			}
		}
		now := s.stamp()
		at := p.At.UTC()
		if p.At.IsZero() {
			at = now
		}
		status, event := memory.StatusInvalidated, memory.EventInvalidate
		if p.SupersededBy != "" {
			status, event = memory.StatusSuperseded, memory.EventSupersede
		}
		var text string
		if f := r.fact; f != nil {
			if f.Status != memory.StatusActive {
				return fmt.Errorf("%w: fact %q is already %s", memory.ErrNotActive, f.ID, f.Status)
			}
			f.Status, f.Reason, f.SupersededBy, f.InvalidAt, f.UpdatedAt = status, p.Reason, p.SupersededBy, at, now
			text = f.Text
		} else {
			sk := r.skill
			if sk.Status != memory.StatusActive {
				return fmt.Errorf("%w: skill %q is already %s", memory.ErrNotActive, sk.Name, sk.Status)
			}
			sk.Status, sk.Reason, sk.UpdatedAt = status, p.Reason, now
			text = sk.Body
		}
		if err := s.put(ctx, tx, r, false); err != nil {
			return err
		}
		out = r.entry()
		return s.log(ctx, tx, &memory.Change{EntryID: r.id(), Namespace: r.namespace(), Event: event,
			Old: text, Actor: p.Actor, Reason: p.Reason, Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("invalidating %s: %w", p.ID, err)
	}
	return out, nil
}

// skillContent is what versions a skill.
func skillContent(sk *memory.Skill) string {
	b, _ := json.Marshal([]any{sk.Description, sk.Body, sk.License, sk.Compatibility, sk.AllowedTools, sk.Metadata, uniq(sk.Tags)})
	return string(b)
}

// PutSkill implements memory.Store.
func (s *Store) PutSkill(ctx context.Context, p *memory.PutSkillParams) (*memory.PutSkillResult, error) {
	if p == nil || p.Skill == nil {
		return nil, fmt.Errorf("%w: PutSkill without a skill", memory.ErrInvalid)
	}
	in := *p.Skill
	in.Status = memory.StatusActive
	if err := in.Validate(); err != nil {
		return nil, err
	}
	vec, err := s.vector(ctx, row{skill: &in}.searchText())
	if err != nil {
		return nil, err
	}
	var res memory.PutSkillResult
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := s.frozen(ctx, tx, in.Namespace); err != nil {
			return err
		}
		now := s.stamp()
		var id string
		err := s.queryRow(ctx, tx, "SELECT id FROM entries WHERE namespace = ? AND name = ?", in.Namespace, in.Name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			sk := in
			if sk.ID == "" {
				sk.ID = newID()
			}
			sk.Version, sk.Uses, sk.Successes, sk.Failures, sk.Reason = 1, 0, 0, 0, ""
			sk.CreatedAt, sk.UpdatedAt = now, now
			if err := s.put(ctx, tx, row{skill: &sk}, true); err != nil {
				return err
			}
			if err := s.putVector(ctx, tx, sk.ID, vec); err != nil {
				return err
			}
			res = memory.PutSkillResult{Skill: &sk, Created: true, Changed: true}
			return s.log(ctx, tx, &memory.Change{EntryID: sk.ID, Namespace: sk.Namespace, Event: memory.EventAdd,
				New: sk.Body, Actor: p.Actor, Reason: p.Reason, Time: now})
		}
		if err != nil {
			return err
		}
		r, err := s.get(ctx, tx, id)
		if err != nil {
			return err
		}
		cur := r.skill
		if skillContent(cur) == skillContent(&in) && cur.Status == memory.StatusActive {
			res = memory.PutSkillResult{Skill: cur}
			return nil
		}
		sk := in
		sk.ID, sk.CreatedAt, sk.UpdatedAt = cur.ID, cur.CreatedAt, now
		sk.Version, sk.Uses, sk.Successes, sk.Failures = cur.Version+1, cur.Uses, cur.Successes, cur.Failures
		if sk.Provenance.Operations == nil && sk.Provenance.Session == "" && sk.Provenance.Model == "" && sk.Provenance.Source == "" {
			sk.Provenance = cur.Provenance
		}
		if err := s.put(ctx, tx, row{skill: &sk}, false); err != nil {
			return err
		}
		if err := s.putVector(ctx, tx, sk.ID, vec); err != nil {
			return err
		}
		res = memory.PutSkillResult{Skill: &sk, Changed: true}
		return s.log(ctx, tx, &memory.Change{EntryID: sk.ID, Namespace: sk.Namespace, Event: memory.EventVersion,
			Old: cur.Body, New: sk.Body, Actor: p.Actor, Reason: orDefault(p.Reason, fmt.Sprintf("version %d", sk.Version)), Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("storing skill %s/%s: %w", in.Namespace, in.Name, err)
	}
	return &res, nil
}

// Use implements memory.Store.
func (s *Store) Use(ctx context.Context, p *memory.UseParams) (*memory.Entry, error) {
	if p == nil || p.ID == "" {
		return nil, fmt.Errorf("%w: Use without an id", memory.ErrInvalid)
	}
	var out *memory.Entry
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := s.get(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if err := s.frozen(ctx, tx, r.namespace()); err != nil {
			return err
		}
		now := s.stamp()
		outcome := "failure"
		if p.Success {
			outcome = "success"
		}
		if f := r.fact; f != nil {
			if p.Success {
				f.Successes++
			} else {
				f.Failures++
			}
			f.UpdatedAt = now
		} else {
			sk := r.skill
			sk.Uses++
			if p.Success {
				sk.Successes++
			} else {
				sk.Failures++
			}
			sk.UpdatedAt = now
		}
		if err := s.put(ctx, tx, r, false); err != nil {
			return err
		}
		out = r.entry()
		return s.log(ctx, tx, &memory.Change{EntryID: r.id(), Namespace: r.namespace(), Event: memory.EventUse,
			Actor: p.Actor, Reason: outcome, Time: now})
	})
	if err != nil {
		return nil, fmt.Errorf("recording a use of %s: %w", p.ID, err)
	}
	return out, nil
}

// Get implements memory.Store.
func (s *Store) Get(ctx context.Context, p *memory.GetParams) (*memory.Entry, error) {
	if s.closed.Load() {
		return nil, memory.ErrClosed
	}
	if p == nil {
		return nil, fmt.Errorf("%w: Get without parameters", memory.ErrInvalid)
	}
	id := p.ID
	if id == "" {
		if p.Namespace == "" || p.Name == "" {
			return nil, fmt.Errorf("%w: Get needs an id, or a namespace and a skill name", memory.ErrInvalid)
		}
		err := s.queryRow(ctx, s.db, "SELECT id FROM entries WHERE namespace = ? AND name = ?", p.Namespace, p.Name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%w: skill %s in %s", memory.ErrNotFound, p.Name, p.Namespace)
		}
		if err != nil {
			return nil, fmt.Errorf("memory: %w", err)
		}
	}
	r, err := s.get(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	return r.entry(), nil
}

// filters is the WHERE clause (without the keyword) of q's filters over entries e.
func filters(q *memory.Query) (string, []any) {
	var conds []string
	var args []any
	if len(q.Namespaces) > 0 {
		var ors []string
		for _, ns := range q.Namespaces {
			ors = append(ors, "e.namespace = ? OR substr(e.namespace, 1, ?) = ?")
			args = append(args, ns, len(ns)+1, ns+"/")
		}
		conds = append(conds, "("+strings.Join(ors, " OR ")+")")
	}
	if len(q.Kinds) > 0 {
		conds = append(conds, "e.kind IN ("+marks(len(q.Kinds))+")")
		for _, k := range q.Kinds {
			args = append(args, string(k))
		}
	}
	for _, tag := range q.Tags {
		conds = append(conds, "e.id IN (SELECT entry_id FROM entry_tags WHERE tag = ?)")
		args = append(args, tag)
	}
	status := q.Status
	if len(status) == 0 {
		status = []memory.Status{memory.StatusActive}
	}
	conds = append(conds, "e.status IN ("+marks(len(status))+")")
	for _, st := range status {
		args = append(args, string(st))
	}
	if !q.Since.IsZero() {
		conds = append(conds, "e.updated >= ?")
		args = append(args, q.Since.UnixNano())
	}
	if !q.Until.IsZero() {
		conds = append(conds, "e.updated < ?")
		args = append(args, q.Until.UnixNano())
	}
	if !q.ValidAt.IsZero() {
		conds = append(conds, "e.valid_from <= ? AND (e.invalid_at IS NULL OR e.invalid_at > ?)")
		args = append(args, q.ValidAt.UnixNano(), q.ValidAt.UnixNano())
	}
	return strings.Join(conds, " AND "), args
}

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// Terms splits a query into the normalised words full-text search looks for.
func Terms(text string) []string {
	return uniqKeepOrder(strings.Fields(statement.Words(text)))
}

func uniqKeepOrder(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Search implements memory.Store.
func (s *Store) Search(ctx context.Context, q *memory.Query) iter.Seq2[*memory.Result, error] {
	return func(yield func(*memory.Result, error) bool) {
		res, err := s.search(ctx, q)
		if err != nil {
			yield(nil, fmt.Errorf("memory: searching: %w", err))
			return
		}
		for _, r := range res {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func (s *Store) search(ctx context.Context, q *memory.Query) ([]*memory.Result, error) {
	if s.closed.Load() {
		return nil, memory.ErrClosed
	}
	if q == nil {
		q = &memory.Query{}
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("%w: limit %d", memory.ErrBadQuery, q.Limit)
	}
	where, args := filters(q)
	if strings.TrimSpace(q.Text) == "" {
		query := "SELECT e.kind, e.data FROM entries e WHERE " + where + " ORDER BY e.updated DESC, e.id"
		if q.Limit > 0 {
			query += fmt.Sprintf(" LIMIT %d", q.Limit)
		}
		rows, err := s.db.QueryContext(ctx, s.q(query), args...)
		if err != nil {
			return nil, err
		}
		var out []*memory.Result
		for rows.Next() {
			var kind string
			var data []byte
			if err := rows.Scan(&kind, &data); err != nil {
				rows.Close()
				return nil, err
			}
			r, err := decode(kind, data)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, &memory.Result{Fact: r.fact, Skill: r.skill, Rank: len(out) + 1})
		}
		return out, errors.Join(rows.Err(), rows.Close())
	}
	limit := q.Limit
	if limit == 0 {
		limit = 10
	}
	depth := limit
	if s.emb != nil {
		depth = max(4*limit, 50) // candidates for fusion
	}
	type hit struct {
		r         row
		bm25, cos float64
	}
	hits := map[string]*hit{}
	var textIDs []string
	if terms := Terms(q.Text); len(terms) > 0 {
		at := q.ValidAt
		if at.IsZero() {
			at = s.now()
		}
		more, err := s.expand(ctx, q.Text, terms, at)
		if err != nil {
			return nil, err
		}
		found, err := s.textSearch(ctx, append(terms, more...), where, args, depth)
		if err != nil {
			return nil, err
		}
		for _, h := range found {
			hits[h.r.id()] = &hit{r: h.r, bm25: h.score}
			textIDs = append(textIDs, h.r.id())
		}
	}
	var vecIDs []string
	if s.emb != nil {
		qv, err := s.vector(ctx, q.Text)
		if err != nil {
			return nil, err
		}
		rows, err := s.db.QueryContext(ctx, s.q("SELECT e.id, v.vec FROM entries e JOIN vectors v ON v.entry_id = e.id WHERE v.model = ? AND "+where),
			append([]any{s.emb.Name()}, args...)...)
		if err != nil {
			return nil, err
		}
		type sc struct {
			id  string
			cos float64
		}
		var all []sc
		for rows.Next() {
			var id string
			var b []byte
			if err := rows.Scan(&id, &b); err != nil {
				rows.Close()
				return nil, err
			}
			all = append(all, sc{id, rank.Cosine(qv, decodeVector(b))})
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
		slices.SortStableFunc(all, func(a, b sc) int {
			if a.cos != b.cos {
				if a.cos > b.cos {
					return -1
				}
				return 1
			}
			return strings.Compare(a.id, b.id)
		})
		for _, x := range all[:min(depth, len(all))] {
			vecIDs = append(vecIDs, x.id)
			if h, ok := hits[x.id]; ok {
				h.cos = x.cos
				continue
			}
			r, err := s.get(ctx, s.db, x.id)
			if err != nil {
				return nil, err
			}
			hits[x.id] = &hit{r: r, cos: x.cos}
		}
	}
	var out []*memory.Result
	if s.emb == nil {
		for _, id := range textIDs {
			h := hits[id]
			out = append(out, &memory.Result{Fact: h.r.fact, Skill: h.r.skill, Score: h.bm25, BM25: h.bm25})
		}
	} else {
		for _, f := range rank.Fuse(60, textIDs, vecIDs) {
			h := hits[f.ID]
			out = append(out, &memory.Result{Fact: h.r.fact, Skill: h.r.skill, Score: f.Score, BM25: h.bm25, Cosine: h.cos})
		}
	}
	out = out[:min(limit, len(out))]
	for i, r := range out {
		r.Rank = i + 1
	}
	return out, nil
}

type scored struct {
	r     row
	score float64
}

// textSearch returns the depth best full-text matches that pass the filters. It first ranks
// the full-text index alone (fast: the database keeps only the top candidates) and then
// filters those, widening the candidate window while filters reject too many; past a point it
// runs one query that filters and ranks together.
func (s *Store) textSearch(ctx context.Context, terms []string, where string, args []any, depth int) ([]scored, error) {
	version, err := s.indexVersion(ctx)
	if err != nil {
		return nil, err
	}
	if s.d.Candidates != nil {
		kept, docs, err := s.pruneTerms(ctx, terms, version)
		if err != nil {
			return nil, err
		}
		cq, arg := s.d.Candidates(kept, docs)
		for window := 4 * depth; window <= 4096; window *= 8 {
			ranked, err := s.rank(ctx, cq, arg, window, version)
			if err != nil {
				return nil, err
			}
			var keys []any
			score := map[string]float64{}
			for _, c := range ranked {
				keys = append(keys, c.key)
				score[c.key] = c.score
			}
			var out []scored
			if len(keys) > 0 {
				query := "SELECT e." + s.d.Key + ", e.kind, e.data FROM entries e WHERE e." + s.d.Key + " IN (" + marks(len(keys)) + ") AND " + where
				rows, err := s.db.QueryContext(ctx, s.q(query), append(keys, args...)...)
				if err != nil {
					return nil, err
				}
				byKey := map[string]row{}
				for rows.Next() {
					var key, kind string
					var data []byte
					if err := rows.Scan(&key, &kind, &data); err != nil {
						rows.Close()
						return nil, err
					}
					r, err := decode(kind, data)
					if err != nil {
						rows.Close()
						return nil, err
					}
					byKey[key] = r
				}
				if err := errors.Join(rows.Err(), rows.Close()); err != nil {
					return nil, err
				}
				for _, k := range keys {
					if r, ok := byKey[k.(string)]; ok {
						out = append(out, scored{r, score[k.(string)]})
					}
				}
			}
			if len(out) >= depth || len(keys) < window {
				return out[:min(depth, len(out))], nil
			}
		}
	}
	var docs []int
	if s.d.TermDocs != nil && len(terms) > 1 { // counted already, by pruneTerms
		if docs, err = s.termDocs(ctx, terms, version); err != nil {
			return nil, err
		}
	}
	from, match, score, arg := s.d.TextSearch(terms, docs)
	query := "SELECT e.kind, e.data, " + score + " AS score FROM " + from + " WHERE " + match + " AND " + where +
		fmt.Sprintf(" ORDER BY score DESC, e.id LIMIT %d", depth)
	rows, err := s.db.QueryContext(ctx, s.q(query), append([]any{arg}, args...)...)
	if err != nil {
		return nil, err
	}
	var out []scored
	for rows.Next() {
		var kind string
		var data []byte
		var sc float64
		if err := rows.Scan(&kind, &data, &sc); err != nil {
			rows.Close()
			return nil, err
		}
		r, err := decode(kind, data)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, scored{r, sc})
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// matchBudget bounds the documents the candidate query ranks (SQLite's bm25 costs several
// microseconds a document, PostgreSQL's ts_rank a visit to the row's page).
const matchBudget = 1500

// pruneTerms drops the most common terms of a query while, together, the terms would match
// more than matchBudget documents: like stop words, a term in thousands of entries adds little
// to BM25 and much to its cost. The rarest term is always kept; a small store keeps them all.
// It returns the terms kept and their counts (nil without Dialect.TermDocs).
func (s *Store) pruneTerms(ctx context.Context, terms []string, version string) ([]string, []int, error) {
	if s.d.TermDocs == nil || len(terms) < 2 {
		return terms, nil, nil // one term: there is nothing to weigh it against
	}
	docs, err := s.termDocs(ctx, terms, version)
	if err != nil {
		return nil, nil, err
	}
	type tc struct {
		term string
		n    int
	}
	counts := make([]tc, 0, len(terms))
	total := 0
	for i, t := range terms {
		if docs[i] == 0 && s.d.ExactTermDocs && version != "" {
			continue // in no entry: no score changes without it, and each term costs a lookup
		}
		counts = append(counts, tc{t, docs[i]})
		total += docs[i]
	}
	if len(counts) == 0 {
		return terms[:1], docs[:1], nil // matches nothing, as the whole query would
	}
	if total > matchBudget {
		slices.SortStableFunc(counts, func(a, b tc) int { return a.n - b.n })
		sum, n := 0, 0
		for n < len(counts) && (n == 0 || sum+counts[n].n <= matchBudget) {
			sum += counts[n].n
			n++
		}
		counts = counts[:n]
	}
	kept, keptDocs := make([]string, len(counts)), make([]int, len(counts))
	for i, c := range counts {
		kept[i], keptDocs[i] = c.term, c.n
	}
	return kept, keptDocs, nil
}

// Term counts and candidate rankings are kept while the full-text index is unchanged
// (Dialect.IndexVersion); without a version, until this store writes, at most termCountsAge
// (another process's writes are seen then: the counts only decide which common terms are left
// out). At most maxTermCounts terms and maxCandidates rankings are kept.
const (
	termCountsAge = 10 * time.Second
	maxTermCounts = 10000
	maxCandidates = 16
)

// indexVersion is Dialect.IndexVersion's value ("" without one).
func (s *Store) indexVersion(ctx context.Context) (string, error) {
	if s.d.IndexVersion == "" {
		return "", nil
	}
	var v []byte
	err := s.queryRow(ctx, s.db, s.d.IndexVersion).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "empty", nil
	}
	if err != nil {
		return "", fmt.Errorf("the full-text index's version: %w", err)
	}
	return "v" + string(v), nil
}

// fresh drops the cached counts and rankings unless they are still those of the index as of
// version; termMu is held.
func (s *Store) fresh(version string) {
	w := s.writes.Load()
	stale := w != s.termWrites || version != s.termVer || len(s.termCounts) > maxTermCounts || len(s.candidates) > maxCandidates
	if s.d.IndexVersion == "" && time.Since(s.termRead) > termCountsAge {
		stale = true
	}
	if stale || s.termCounts == nil {
		s.termCounts, s.candidates = map[string]int{}, map[string][]candidate{}
		s.termWrites, s.termVer, s.termRead = w, version, time.Now()
	}
}

// termDocs is Dialect.TermDocs for terms, counting only those not counted in this version of
// the index: the searches of one recall share most of their terms.
func (s *Store) termDocs(ctx context.Context, terms []string, version string) ([]int, error) {
	out := make([]int, len(terms))
	var missing []string
	var at []int // missing[k] is terms[at[k]]
	s.termMu.Lock()
	s.fresh(version)
	for i, t := range terms {
		if n, ok := s.termCounts[t]; ok {
			out[i] = n
		} else {
			missing, at = append(missing, t), append(at, i)
		}
	}
	w, v := s.termWrites, s.termVer
	s.termMu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	n, err := s.d.TermDocs(ctx, s.db, missing)
	if err != nil {
		return nil, err
	}
	s.termMu.Lock()
	defer s.termMu.Unlock()
	for k, t := range missing {
		out[at[k]] = n[k]
		if s.termWrites == w && s.termVer == v {
			s.termCounts[t] = n[k]
		}
	}
	return out, nil
}

// rank is Dialect.Candidates's query cq (with argument arg) for the window best candidates,
// reused while the index is as of version: the searches of one recall (one per kind of entry)
// rank the same text.
func (s *Store) rank(ctx context.Context, cq string, arg any, window int, version string) ([]candidate, error) {
	key := cq + "\x00" + fmt.Sprint(arg)
	s.termMu.Lock()
	s.fresh(version)
	// A ranking serves a narrower window too, and any window when it holds every match.
	if c, ok := s.candidates[key]; ok && (len(c) >= window || len(c) < cap(c)) {
		s.termMu.Unlock()
		return c[:min(window, len(c))], nil
	}
	w, v := s.termWrites, s.termVer
	s.termMu.Unlock()
	rows, err := s.db.QueryContext(ctx, s.q(cq), arg, window)
	if err != nil {
		return nil, err
	}
	out := make([]candidate, 0, window)
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.key, &c.score); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	s.termMu.Lock()
	if s.termWrites == w && s.termVer == v && version != "" {
		s.candidates[key] = out
	}
	s.termMu.Unlock()
	return out, nil
}

// History implements memory.Store.
func (s *Store) History(ctx context.Context, p *memory.HistoryParams) iter.Seq2[*memory.Change, error] {
	return func(yield func(*memory.Change, error) bool) {
		if s.closed.Load() {
			yield(nil, memory.ErrClosed)
			return
		}
		if p == nil {
			p = &memory.HistoryParams{}
		}
		var conds []string
		args := []any{p.After}
		conds = append(conds, "seq > ?")
		if p.EntryID != "" {
			conds = append(conds, "entry_id = ?")
			args = append(args, p.EntryID)
		}
		if p.Namespace != "" {
			conds = append(conds, "(namespace = ? OR substr(namespace, 1, ?) = ?)")
			args = append(args, p.Namespace, len(p.Namespace)+1, p.Namespace+"/")
		}
		query := "SELECT seq, entry_id, namespace, event, old, new, actor, reason, time FROM history WHERE " + strings.Join(conds, " AND ") + " ORDER BY seq"
		if p.Limit > 0 {
			query += fmt.Sprintf(" LIMIT %d", p.Limit)
		}
		rows, err := s.db.QueryContext(ctx, s.q(query), args...)
		if err != nil {
			yield(nil, fmt.Errorf("memory: history: %w", err))
			return
		}
		var out []*memory.Change
		for rows.Next() {
			var c memory.Change
			var t int64
			var event string
			if err := rows.Scan(&c.Seq, &c.EntryID, &c.Namespace, &event, &c.Old, &c.New, &c.Actor, &c.Reason, &t); err != nil {
				rows.Close()
				yield(nil, fmt.Errorf("memory: history: %w", err))
				return
			}
			c.Event, c.Time = memory.Event(event), time.Unix(0, t).UTC()
			out = append(out, &c)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			yield(nil, fmt.Errorf("memory: history: %w", err))
			return
		}
		for _, c := range out {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// Namespaces implements memory.Store.
func (s *Store) Namespaces(ctx context.Context) ([]memory.Namespace, error) {
	if s.closed.Load() {
		return nil, memory.ErrClosed
	}
	byName := map[string]*memory.Namespace{}
	ns := func(name string) *memory.Namespace {
		if byName[name] == nil {
			byName[name] = &memory.Namespace{Name: name}
		}
		return byName[name]
	}
	rows, err := s.db.QueryContext(ctx, `SELECT namespace, kind, status, count(*) FROM entries GROUP BY namespace, kind, status`)
	if err != nil {
		return nil, fmt.Errorf("memory: namespaces: %w", err)
	}
	for rows.Next() {
		var name, kind, status string
		var n int
		if err := rows.Scan(&name, &kind, &status, &n); err != nil {
			rows.Close()
			return nil, err
		}
		x := ns(name)
		x.Entries += n
		if status == string(memory.StatusActive) {
			if kind == string(memory.KindSkill) {
				x.Skills += n
			} else {
				x.Facts += n
			}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	rows, err = s.db.QueryContext(ctx, `SELECT name FROM namespaces WHERE frozen = 1`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		ns(name).Frozen = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	var out []memory.Namespace
	for _, x := range byName {
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b memory.Namespace) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Freeze implements memory.Store.
func (s *Store) Freeze(ctx context.Context, p *memory.FreezeParams) error {
	if p == nil {
		return fmt.Errorf("%w: Freeze without parameters", memory.ErrInvalid)
	}
	if err := memory.ValidNamespace(p.Namespace); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		var frozen int
		err := s.queryRow(ctx, tx, "SELECT frozen FROM namespaces WHERE name = ?", p.Namespace).Scan(&frozen)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		want := 0
		event := memory.EventUnfreeze
		if p.Frozen {
			want, event = 1, memory.EventFreeze
		}
		if frozen == want {
			return nil
		}
		if errors.Is(err, sql.ErrNoRows) {
			_, err = s.exec(ctx, tx, "INSERT INTO namespaces (name, frozen) VALUES (?, ?)", p.Namespace, want)
		} else {
			_, err = s.exec(ctx, tx, "UPDATE namespaces SET frozen = ? WHERE name = ?", want, p.Namespace)
		}
		if err != nil {
			return err
		}
		return s.log(ctx, tx, &memory.Change{Namespace: p.Namespace, Event: event, Actor: p.Actor, Time: s.stamp()})
	})
}

// Import implements memory.Store.
func (s *Store) Import(ctx context.Context, p *memory.ImportParams) (*memory.ImportResult, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: Import without parameters", memory.ErrInvalid)
	}
	// Validate everything before writing anything.
	ids := map[string]bool{}
	norms := map[[2]string]string{}
	names := map[[2]string]bool{}
	var rows []row
	for _, f := range p.Facts {
		if f.ID == "" {
			return nil, fmt.Errorf("%w: imported fact %q has no id", memory.ErrInvalid, f.Text)
		}
		if f.Status == "" {
			return nil, fmt.Errorf("%w: imported fact %s has no status", memory.ErrInvalid, f.ID)
		}
		if err := f.Validate(); err != nil {
			return nil, err
		}
		if ids[f.ID] {
			return nil, fmt.Errorf("%w: id %s imported twice", memory.ErrConflict, f.ID)
		}
		ids[f.ID] = true
		if f.Status == memory.StatusActive {
			k := [2]string{f.Namespace, statement.Normalize(f.Text)}
			if other, dup := norms[k]; dup {
				return nil, fmt.Errorf("%w: facts %s and %s in %s are duplicates", memory.ErrConflict, other, f.ID, f.Namespace)
			}
			norms[k] = f.ID
		}
		g := *f
		rows = append(rows, row{fact: &g})
	}
	for _, sk := range p.Skills {
		if sk.ID == "" {
			return nil, fmt.Errorf("%w: imported skill %q has no id", memory.ErrInvalid, sk.Name)
		}
		if err := sk.Validate(); err != nil {
			return nil, err
		}
		if ids[sk.ID] {
			return nil, fmt.Errorf("%w: id %s imported twice", memory.ErrConflict, sk.ID)
		}
		ids[sk.ID] = true
		k := [2]string{sk.Namespace, sk.Name}
		if names[k] {
			return nil, fmt.Errorf("%w: skill %s imported twice into %s", memory.ErrConflict, sk.Name, sk.Namespace)
		}
		names[k] = true
		g := *sk
		if g.Status == "" {
			g.Status = memory.StatusActive
		}
		rows = append(rows, row{skill: &g})
	}
	for _, e := range p.Entities {
		if err := e.Validate(); err != nil {
			return nil, err
		}
		if e.ID == "" {
			return nil, fmt.Errorf("%w: imported entity %q has no id", memory.ErrInvalid, e.Name)
		}
	}
	for _, r := range p.Relations {
		if r.From == "" || r.To == "" || r.Rel == "" {
			return nil, fmt.Errorf("%w: imported relation %+v needs from, rel and to", memory.ErrInvalid, r)
		}
	}
	vecs := make([][]float32, len(rows))
	if s.emb != nil && len(rows) > 0 {
		texts := make([]string, len(rows))
		for i, r := range rows {
			texts[i] = r.searchText()
		}
		for i := 0; i < len(texts); i += 256 {
			vs, err := s.emb.Embed(ctx, texts[i:min(i+256, len(texts))])
			if err != nil {
				return nil, fmt.Errorf("memory: import: embedding with %s: %w", s.emb.Name(), err)
			}
			if len(vs) != min(256, len(texts)-i) {
				return nil, fmt.Errorf("memory: import: embedding with %s: %d vectors for %d texts", s.emb.Name(), len(vs), min(256, len(texts)-i))
			}
			copy(vecs[i:], vs)
		}
	}
	var res memory.ImportResult
	err := s.write(ctx, func(tx *sql.Tx) error {
		res = memory.ImportResult{}
		checked := map[string]bool{}
		now := s.stamp()
		for i, r := range rows {
			if ns := r.namespace(); !checked[ns] {
				if err := s.frozen(ctx, tx, ns); err != nil {
					return err
				}
				checked[ns] = true
			}
			old, err := s.get(ctx, tx, r.id())
			exists := err == nil
			if err != nil && !errors.Is(err, memory.ErrNotFound) {
				return err
			}
			if exists && (old.skill == nil) != (r.skill == nil) {
				return fmt.Errorf("%w: %s is stored as a different kind of entry", memory.ErrConflict, r.id())
			}
			// A stored entry in the way of this one's unique key (an active fact with the same
			// text, a skill with the same name) is a conflict, reported by put.
			if err := s.put(ctx, tx, r, !exists); err != nil {
				return err
			}
			if err := s.putVector(ctx, tx, r.id(), vecs[i]); err != nil {
				return err
			}
			c := &memory.Change{EntryID: r.id(), Namespace: r.namespace(), Event: memory.EventImport, Actor: p.Actor, Time: now}
			if r.skill != nil {
				c.New = r.skill.Body
				if exists {
					c.Old = old.skill.Body
				}
				res.Skills++
			} else {
				c.New = r.fact.Text
				if exists {
					c.Old = old.fact.Text
				}
				res.Facts++
			}
			if err := s.log(ctx, tx, c); err != nil {
				return err
			}
		}
		return s.importGraph(ctx, tx, p.Entities, p.Relations)
	})
	if err != nil {
		return nil, fmt.Errorf("import (nothing was written): %w", err)
	}
	return &res, nil
}
