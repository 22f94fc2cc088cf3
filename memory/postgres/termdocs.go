package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// statsAge is how long the lexeme frequencies are reused before they are read again.
const statsAge = time.Minute

// termDocs estimates how many entries each search term matches from the statistics ANALYZE
// (or autovacuum) keeps for the tsvector column: the most common lexemes and the fraction of
// rows holding each. Counting exactly would visit every matching row, which is the cost that
// pruning the common terms avoids. A term's estimate is that of its rarest lexeme (a phrase
// matches no more rows than any of its words); a lexeme outside the common ones, a stop word
// or a table never analysed counts as rare.
type termDocs struct {
	mu     sync.Mutex
	read   time.Time
	counts map[string]int
	total  float64 // the entries, as the statistics estimate them
}

// textSearch is the Dialect's: the terms ORed, the score the sum over the terms of each one's
// ts_rank times its idf, ln(1 + (N - n + 0.5) / (n + 0.5)) as BM25 weighs a term in n of N
// entries (without counts, the terms weigh the same).
func (t *termDocs) textSearch(terms []string, docs []int) (from, where, score string, arg any) {
	t.mu.Lock()
	total := t.total
	t.mu.Unlock()
	w := make([]string, len(terms))
	for i := range terms {
		w[i] = "1"
		if i < len(docs) {
			n := float64(docs[i])
			w[i] = strconv.FormatFloat(math.Log(1+(max(total, n)-n+0.5)/(n+0.5)), 'g', 6, 64)
		}
	}
	from = `entries e CROSS JOIN (SELECT to_tsquery('english', array_to_string(u.t, ' | ')) AS q,
		ARRAY(SELECT to_tsquery('english', x.t) FROM unnest(u.t) WITH ORDINALITY x(t, i) ORDER BY x.i) AS qs
		FROM (SELECT ?::text[] AS t) u) AS a`
	score = "(SELECT sum(z.w * ts_rank(e.tsv, z.q)) FROM unnest(a.qs, ARRAY[" + strings.Join(w, ",") + "]::float8[]) AS z(q, w))"
	return from, "e.tsv @@ a.q", score, tsqueries(terms)
}

func (t *termDocs) docs(ctx context.Context, db *sql.DB, terms []string) ([]int, error) {
	counts, err := t.stats(ctx, db)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(terms))
	if len(counts) == 0 {
		return out, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT u.i, l FROM unnest($1::text[]) WITH ORDINALITY u(t, i),
		unnest(tsvector_to_array(to_tsvector('english', u.t))) l`, terms)
	if err != nil {
		return nil, fmt.Errorf("the lexemes of the search terms: %w", err)
	}
	seen := make([]bool, len(terms))
	for rows.Next() {
		var i int
		var lexeme string
		if err := rows.Scan(&i, &lexeme); err != nil {
			rows.Close()
			return nil, err
		}
		n := counts[lexeme]
		if i--; !seen[i] || n < out[i] {
			out[i], seen[i] = n, true
		}
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// stats returns the lexeme frequencies of the entries table in the connection's schema, read
// at most once every statsAge.
func (t *termDocs) stats(ctx context.Context, db *sql.DB) (map[string]int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts != nil && time.Since(t.read) < statsAge {
		return t.counts, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT f.lexeme, f.freq * greatest(c.reltuples, 0)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = 'tsv',
		unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS f(lexeme, freq)
		WHERE c.oid = 'entries'::regclass AND f.lexeme IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("the full-text statistics: %w", err)
	}
	counts := map[string]int{}
	for rows.Next() {
		var lexeme string
		var n float64
		if err := rows.Scan(&lexeme, &n); err != nil {
			rows.Close()
			return nil, err
		}
		counts[lexeme] = int(n)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("the full-text statistics: %w", err)
	}
	var total float64
	if err := db.QueryRowContext(ctx, `SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'entries'::regclass`).Scan(&total); err != nil {
		return nil, fmt.Errorf("the full-text statistics: %w", err)
	}
	t.counts, t.total, t.read = counts, total, time.Now()
	return counts, nil
}
