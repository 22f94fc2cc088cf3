package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/rank"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

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
