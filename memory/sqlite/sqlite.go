// Package sqlite is the embedded memory.Store: one SQLite file (modernc.org/sqlite, pure Go) in
// WAL mode, with FTS5 full-text search ranked by bm25().
//
// Several processes may share one file: every write is an IMMEDIATE transaction, so writers
// queue on SQLite's lock (waiting up to a busy timeout of 10 s) instead of failing, and readers
// never wait. A committed write survives a crash of the process (synchronous=NORMAL).
//
// # Schema (version 2, in memory_meta)
//
//	entries(n INTEGER PRIMARY KEY, id UNIQUE, namespace, kind, name, norm, status, search,
//	        data BLOB (the entry as JSON), created, updated, valid_from, invalid_at)
//	entries_fts   FTS5 over entries.search (porter stemming), external content, kept in step
//	              by the store (not by triggers: they would flush FTS5's buffer at every statement)
//	entry_tags(entry_id, tag), vectors(entry_id, model, vec), history(seq, …),
//	namespaces(name, frozen), memory_meta(key, value)
//	entities(id, kind, name, status, data, valid_from, invalid_at, updated)   the entity graph:
//	entity_aliases(alias, entity_id), entity_links(entity_id, entry_id, valid_from, invalid_at),
//	relations(src, rel, dst, source, valid_from, invalid_at)
//
// A version-1 store is migrated when it is opened: duplicate keys are recomputed with the
// finer normalisation of version 2 and every entry is linked to its entities.
//
// Exact duplicates are kept out by a unique index on (namespace, norm) over active facts (norm
// is a digest of the normalised text), skill
// names by one on (namespace, name).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/labmate/labmate/internal/sqlitefile"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/internal/sqlstore"
)

// Options configure a store; nil means the defaults.
type Options struct {
	// Embedder, when set, indexes every entry's vector and fuses cosine similarity with BM25.
	Embedder memory.Embedder
	// Now is the clock (default time.Now).
	Now func() time.Time
}

var schema = []string{
	`CREATE TABLE IF NOT EXISTS memory_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS entries (
		n          INTEGER PRIMARY KEY,
		id         TEXT NOT NULL UNIQUE,
		namespace  TEXT NOT NULL,
		kind       TEXT NOT NULL,
		name       TEXT,
		norm       TEXT,
		status     TEXT NOT NULL,
		search     TEXT NOT NULL,
		data       BLOB NOT NULL,
		created    INTEGER NOT NULL,
		updated    INTEGER NOT NULL,
		valid_from INTEGER,
		invalid_at INTEGER
	)`,
	`CREATE UNIQUE INDEX IF NOT EXISTS entries_norm ON entries (namespace, norm) WHERE norm IS NOT NULL`,
	`CREATE UNIQUE INDEX IF NOT EXISTS entries_name ON entries (namespace, name) WHERE name IS NOT NULL`,
	`CREATE INDEX IF NOT EXISTS entries_updated ON entries (updated)`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5 (search, content = 'entries', content_rowid = 'n', tokenize = 'porter unicode61')`,
	`INSERT INTO entries_fts (entries_fts, rank) VALUES ('usermerge', 2)`,
	`CREATE TABLE IF NOT EXISTS entry_tags (tag TEXT NOT NULL, entry_id TEXT NOT NULL, PRIMARY KEY (tag, entry_id)) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS entry_tags_entry ON entry_tags (entry_id)`,
	`CREATE TABLE IF NOT EXISTS vectors (entry_id TEXT PRIMARY KEY, model TEXT NOT NULL, vec BLOB NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS history (
		seq       INTEGER PRIMARY KEY AUTOINCREMENT,
		entry_id  TEXT NOT NULL,
		namespace TEXT NOT NULL,
		event     TEXT NOT NULL,
		old       TEXT NOT NULL,
		new       TEXT NOT NULL,
		actor     TEXT NOT NULL,
		reason    TEXT NOT NULL,
		time      INTEGER NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS history_entry ON history (entry_id, seq)`,
	`CREATE TABLE IF NOT EXISTS namespaces (name TEXT PRIMARY KEY, frozen INTEGER NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS entities (
		id         TEXT PRIMARY KEY,
		kind       TEXT NOT NULL,
		name       TEXT NOT NULL,
		status     TEXT NOT NULL,
		data       BLOB NOT NULL,
		valid_from INTEGER,
		invalid_at INTEGER,
		updated    INTEGER NOT NULL
	) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS entity_aliases (alias TEXT NOT NULL, entity_id TEXT NOT NULL, PRIMARY KEY (alias, entity_id)) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases (entity_id)`,
	`CREATE TABLE IF NOT EXISTS entity_links (
		entity_id  TEXT NOT NULL,
		entry_id   TEXT NOT NULL,
		valid_from INTEGER NOT NULL,
		invalid_at INTEGER,
		PRIMARY KEY (entity_id, entry_id)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS entity_links_entry ON entity_links (entry_id)`,
	`CREATE TABLE IF NOT EXISTS relations (
		src        TEXT NOT NULL,
		rel        TEXT NOT NULL,
		dst        TEXT NOT NULL,
		source     TEXT NOT NULL,
		valid_from INTEGER NOT NULL,
		invalid_at INTEGER,
		PRIMARY KEY (src, rel, dst)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS relations_dst ON relations (dst)`,
}

var dialect = &sqlstore.Dialect{
	Name:         "sqlite",
	FTSInsert:    "INSERT INTO entries_fts (rowid, search) VALUES (?, ?)",
	FTSDelete:    "INSERT INTO entries_fts (entries_fts, rowid, search) VALUES ('delete', ?, ?)",
	SerialWrites: true,
	Rebind:       func(q string) string { return q },
	Schema:       schema,
	TextSearch: func(terms []string, _ []int) (from, where, score string, arg any) {
		return "entries_fts JOIN entries e ON e.n = entries_fts.rowid", "entries_fts MATCH ?",
			"-bm25(entries_fts)", matchExpr(terms)
	},
	Candidates: func(terms []string, _ []int) (string, any) {
		return "SELECT CAST(rowid AS TEXT), -rank FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rank LIMIT ?", matchExpr(terms)
	},
	Key:           "n",
	ExactTermDocs: true,
	IndexVersion:  "SELECT block FROM entries_fts_data WHERE id = 10", // FTS5's structure record
	// Up to 16 pages of merging per write, of any level with two segments (usermerge in the
	// schema): a store written one entry at a time keeps about one segment a level.
	AfterWrite: "INSERT INTO entries_fts (entries_fts, rank) VALUES ('merge', 16)",
	TermDocs: func(ctx context.Context, db *sql.DB, terms []string) ([]int, error) {
		st, err := db.PrepareContext(ctx, "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?")
		if err != nil {
			return nil, err
		}
		defer st.Close()
		n := make([]int, len(terms))
		for i, t := range terms {
			if err := st.QueryRowContext(ctx, matchExpr([]string{t})).Scan(&n[i]); err != nil {
				return nil, err
			}
		}
		return n, nil
	},
	Retryable: func(err error) bool {
		var se *sqlite.Error
		if errors.As(err, &se) {
			switch se.Code() & 0xff {
			case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
				return true
			}
		}
		return false
	},
	Unique: func(err error) bool {
		var se *sqlite.Error
		return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
}

// matchExpr is an FTS5 query matching any of terms (BM25 ranks those with more, rarer terms
// first); every term is quoted, so nothing in a user's query is FTS5 syntax.
func matchExpr(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " OR ")
}

// Store is the SQLite memory.Store.
type Store struct {
	*sqlstore.Store
	path string
}

// Open opens (creating if needed) the memory in the SQLite file at path. Its directory must
// exist.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("memory/sqlite: opening %s: %w", path, err)
	}
	db, err := sqlitefile.Open(path, "_txlock=immediate", "_pragma=cache_size(-32768)")
	if err != nil {
		return nil, fmt.Errorf("memory/sqlite: %w", err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	st, err := sqlstore.Open(ctx, db, dialect, &sqlstore.Options{Embedder: opts.Embedder, Now: opts.Now}, nil)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("memory/sqlite: opening %s: %w", path, err)
	}
	return &Store{Store: st, path: path}, nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }
