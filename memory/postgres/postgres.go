// Package postgres is the shared memory.Store: PostgreSQL through pgx, for teams and for many
// labmate servers on one memory. Full-text search uses a generated tsvector column (English
// stemming) with a GIN index; the query's words are ORed, as in BM25, so an entry need not
// contain every word to be found, each word's ts_rank weighed by its rarity (BM25's idf, from
// the statistics ANALYZE keeps), and the words the statistics say are in thousands of entries
// are left out while rarer ones remain (as memory/sqlite does).
//
// Writers serialise on a transaction-level advisory lock, so that duplicate detection, frozen
// namespaces and the history's order hold across every server; readers never wait.
//
// The schema is the one memory/sqlite uses (see there), in the connection's search_path.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/internal/sqlstore"
)

// Options configure a store; nil means the defaults.
type Options struct {
	// Embedder, when set, indexes every entry's vector and fuses cosine similarity with text rank.
	Embedder memory.Embedder
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// lockKey is the advisory lock every write transaction takes.
const lockKey = 0x6c61626d656d // "labmem"

var schema = []string{
	`CREATE TABLE IF NOT EXISTS memory_meta (key text PRIMARY KEY, value integer NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS entries (
		id         text PRIMARY KEY,
		namespace  text NOT NULL,
		kind       text NOT NULL,
		name       text,
		norm       text,
		status     text NOT NULL,
		search     text NOT NULL,
		data       bytea NOT NULL,
		created    bigint NOT NULL,
		updated    bigint NOT NULL,
		valid_from bigint,
		invalid_at bigint,
		tsv        tsvector GENERATED ALWAYS AS (to_tsvector('english', search)) STORED
	)`,
	`CREATE UNIQUE INDEX IF NOT EXISTS entries_norm ON entries (namespace, norm) WHERE norm IS NOT NULL`,
	`CREATE UNIQUE INDEX IF NOT EXISTS entries_name ON entries (namespace, name) WHERE name IS NOT NULL`,
	`CREATE INDEX IF NOT EXISTS entries_updated ON entries (updated)`,
	`CREATE INDEX IF NOT EXISTS entries_tsv ON entries USING gin (tsv)`,
	`CREATE TABLE IF NOT EXISTS entry_tags (tag text NOT NULL, entry_id text NOT NULL, PRIMARY KEY (tag, entry_id))`,
	`CREATE INDEX IF NOT EXISTS entry_tags_entry ON entry_tags (entry_id)`,
	`CREATE TABLE IF NOT EXISTS vectors (entry_id text PRIMARY KEY, model text NOT NULL, vec bytea NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS history (
		seq       bigserial PRIMARY KEY,
		entry_id  text NOT NULL,
		namespace text NOT NULL,
		event     text NOT NULL,
		old       text NOT NULL,
		new       text NOT NULL,
		actor     text NOT NULL,
		reason    text NOT NULL,
		time      bigint NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS history_entry ON history (entry_id, seq)`,
	`CREATE TABLE IF NOT EXISTS namespaces (name text PRIMARY KEY, frozen integer NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS entities (
		id         text PRIMARY KEY,
		kind       text NOT NULL,
		name       text NOT NULL,
		status     text NOT NULL,
		data       bytea NOT NULL,
		valid_from bigint,
		invalid_at bigint,
		updated    bigint NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS entity_aliases (alias text NOT NULL, entity_id text NOT NULL, PRIMARY KEY (alias, entity_id))`,
	`CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases (entity_id)`,
	`CREATE TABLE IF NOT EXISTS entity_links (
		entity_id  text NOT NULL,
		entry_id   text NOT NULL,
		valid_from bigint NOT NULL,
		invalid_at bigint,
		PRIMARY KEY (entity_id, entry_id)
	)`,
	`CREATE INDEX IF NOT EXISTS entity_links_entry ON entity_links (entry_id)`,
	`CREATE TABLE IF NOT EXISTS relations (
		src        text NOT NULL,
		rel        text NOT NULL,
		dst        text NOT NULL,
		source     text NOT NULL,
		valid_from bigint NOT NULL,
		invalid_at bigint,
		PRIMARY KEY (src, rel, dst)
	)`,
	`CREATE INDEX IF NOT EXISTS relations_dst ON relations (dst)`,
}

func rebind(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var dialect = &sqlstore.Dialect{
	Name:   "postgres",
	Rebind: rebind,
	Schema: schema,
	Key:    "id",
	Lock: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(lockKey))
		return err
	},
	Retryable: func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
	},
	Unique: func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && pe.Code == "23505"
	},
}

// tsqueries are the terms as tsquery texts (normalised words; a term of several words, an
// entity's alias such as "quantum espresso", is a phrase).
func tsqueries(terms []string) []string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		if ws := strings.Fields(t); len(ws) > 1 {
			parts[i] = "(" + strings.Join(ws, " <-> ") + ")"
		} else {
			parts[i] = t
		}
	}
	return parts
}

// Store is the PostgreSQL memory.Store.
type Store struct {
	*sqlstore.Store
}

// Open connects to the database at dsn (a postgres:// URL or key=value string; a search_path
// parameter selects the schema) and creates the tables if needed.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("memory/postgres: %w", err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, &connectError{dsn: redact(dsn), err: err}
	}
	d := *dialect
	td := &termDocs{}
	d.TermDocs, d.TextSearch = td.docs, td.textSearch
	d.Candidates = func(terms []string, docs []int) (string, any) {
		from, where, score, arg := td.textSearch(terms, docs)
		return "SELECT e.id, " + score + " AS score FROM " + from + " WHERE " + where + " ORDER BY score DESC, e.id LIMIT ?", arg
	}
	st, err := sqlstore.Open(ctx, db, &d, &sqlstore.Options{Embedder: opts.Embedder, Now: opts.Now}, nil)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("memory/postgres: opening %s: %w", redact(dsn), err)
	}
	return &Store{Store: st}, nil
}

// connectError is a failed connection said in one line: pgx reports every attempt (each
// address, TLS then plain), which is mostly the same refusal twice.
type connectError struct {
	dsn string
	err error
}

func (e *connectError) Error() string {
	var op *net.OpError
	if errors.As(e.err, &op) && op.Err != nil {
		return fmt.Sprintf("memory/postgres: cannot connect to %s: %v (is PostgreSQL running there?)", e.dsn, op.Err)
	}
	var lines []string
	for _, l := range strings.Split(e.err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	return fmt.Sprintf("memory/postgres: cannot connect to %s: %s", e.dsn, strings.Join(lines, " "))
}

func (e *connectError) Unwrap() error { return e.err }

// redact hides a password in a DSN for error messages.
func redact(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "the database"
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

var _ = stdlib.GetDefaultDriver // registers the "pgx" database/sql driver
