// Package sqlite is the documentation index in one SQLite file: chunks ranked by BM25 over an FTS5
// table whose fields are weighted (name above the name's words and the first sentence, above
// heading, above body), fused by reciprocal rank with embedding similarity when an llm.Embedder
// is configured. The full-text tables index prose folded (see fold) and a name's words
// (see nameWords), so they are written by the triggers and by Add, never rebuilt from the
// chunks table with FTS5's 'rebuild'.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/labmate/labmate/internal/rank"
	"github.com/labmate/labmate/internal/sqlitefile"
	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/memory/statement"
)

// Options configure an Index. nil means defaults.
type Options struct {
	// Embedder, when set, embeds every chunk on Add and the query on Search; results are then the
	// rank fusion of BM25 and cosine similarity.
	Embedder llm.Embedder
	// Weights are the BM25 weights of the fields name, words (the words the name is written
	// from: "fileread" is file read), summary, heading and text (default 10, 4, 4, 2, 1).
	Weights *[5]float64
}

// Index is a documentation index in a SQLite file. It is safe for concurrent use.
type Index struct {
	path    string
	db      *sql.DB
	emb     llm.Embedder
	weights [5]float64

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // the ranking queries, prepared once
}

var _ knowledge.Index = (*Index)(nil)

// DefaultPath is ~/.local/share/labmate/docs.db (under $XDG_DATA_HOME when set).
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("sqlite: no home directory for the default index: %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "labmate", "docs.db"), nil
}

// schemaVersion is kept in PRAGMA user_version. Version 1 added the words field (a name's
// words) and indexes prose folded (see fold); an index of version 0 has to be built again.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS chunks (
	id         INTEGER PRIMARY KEY,
	source     TEXT NOT NULL,
	heading    TEXT NOT NULL,
	name       TEXT NOT NULL,
	words      TEXT NOT NULL DEFAULT '', -- the words the name is written from (nameWords)
	summary    TEXT NOT NULL,
	text       TEXT NOT NULL,
	start_line INTEGER NOT NULL,
	end_line   INTEGER NOT NULL,
	embedding  BLOB,
	inlinks    INTEGER NOT NULL DEFAULT 0 -- how many documents name this one under "See also"
);
CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name);
CREATE INDEX IF NOT EXISTS chunks_source ON chunks(source);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
	name, words, summary, heading, text,
	content='chunks', content_rowid='id',
	tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_exact USING fts5(
	name, words, summary, heading, text,
	content='chunks', content_rowid='id',
	tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
	INSERT INTO chunks_fts(rowid, name, words, summary, heading, text)
		VALUES (new.id, new.name, new.words, labmate_fold(new.summary), labmate_fold(new.heading), labmate_fold(new.text));
	INSERT INTO chunks_exact(rowid, name, words, summary, heading, text)
		VALUES (new.id, new.name, new.words, labmate_fold(new.summary), labmate_fold(new.heading), labmate_fold(new.text));
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
	INSERT INTO chunks_fts(chunks_fts, rowid, name, words, summary, heading, text)
		VALUES ('delete', old.id, old.name, old.words, labmate_fold(old.summary), labmate_fold(old.heading), labmate_fold(old.text));
	INSERT INTO chunks_exact(chunks_exact, rowid, name, words, summary, heading, text)
		VALUES ('delete', old.id, old.name, old.words, labmate_fold(old.summary), labmate_fold(old.heading), labmate_fold(old.text));
END;
`

// ErrOldIndex is returned by Open for an index file written by an earlier labmate whose
// schema this one cannot search: the index has to be built again.
var ErrOldIndex = errors.New("the documentation index was built by an earlier labmate")

// Open opens the index in the SQLite file at path, creating it and its directory if needed.
func Open(path string, opts *Options) (*Index, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	db, err := sqlitefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db.SetMaxOpenConns(4)
	if err := migrate(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	ix := &Index{path: path, db: db, emb: opts.Embedder, weights: defaultWeights}
	if opts.Weights != nil {
		ix.weights = *opts.Weights
	}
	return ix, nil
}

// defaultWeights are the BM25 weights of name, words, summary, heading and text.
var defaultWeights = [5]float64{10, 4, 4, 2, 1}

// migrate creates the schema in a new file and refuses one of an earlier version: its
// full-text tables index other fields, and the documents are re-harvested in seconds, so it is
// rebuilt rather than converted.
func migrate(db *sql.DB) error {
	var version, tables int
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'chunks'").Scan(&tables); err != nil {
		return fmt.Errorf("reading the schema: %w", err)
	}
	if tables > 0 && version < schemaVersion {
		return fmt.Errorf("%w (schema version %d, this labmate needs %d): delete the file and index the documents again (labmate docs index --octave, --python MODULE…, PATH…)",
			ErrOldIndex, version, schemaVersion)
	}
	return sqlitefile.Migrate(context.Background(), db, schema, schemaVersion)
}

// Close closes the database.
func (ix *Index) Close() error {
	ix.mu.Lock()
	for _, st := range ix.stmts {
		st.Close()
	}
	ix.stmts = nil
	ix.mu.Unlock()
	return ix.db.Close()
}

// prepare returns the prepared statement for query, preparing it once: parsing the ranking
// query is a tenth of a search's cost.
func (ix *Index) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if st, ok := ix.stmts[query]; ok {
		return st, nil
	}
	st, err := ix.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if ix.stmts == nil {
		ix.stmts = map[string]*sql.Stmt{}
	}
	ix.stmts[query] = st
	return st, nil
}

// Add chunks docs and stores them in one transaction, replacing earlier chunks of their sources.
func (ix *Index) Add(ctx context.Context, docs ...*knowledge.Doc) error {
	return ix.add(ctx, "", docs)
}

// Replace removes every chunk whose source starts with prefix and adds docs, in one
// transaction: re-harvesting "octave:" drops the functions that are gone, and a failure leaves
// the old chunks in place.
func (ix *Index) Replace(ctx context.Context, prefix string, docs ...*knowledge.Doc) error {
	if prefix == "" {
		return fmt.Errorf("sqlite: %w: replacing needs a source prefix", knowledge.ErrBadSource)
	}
	return ix.add(ctx, prefix, docs)
}

func (ix *Index) add(ctx context.Context, prefix string, docs []*knowledge.Doc) error {
	var chunks []knowledge.Chunk
	for _, d := range docs {
		if d.Source == "" {
			return fmt.Errorf("sqlite: %w: a document has no source", knowledge.ErrBadSource)
		}
		chunks = append(chunks, knowledge.Split(d)...)
	}
	var vecs [][]float32
	if ix.emb != nil && len(chunks) > 0 {
		const batch = 64
		for i := 0; i < len(chunks); i += batch {
			texts := make([]string, 0, batch)
			for _, c := range chunks[i:min(i+batch, len(chunks))] {
				texts = append(texts, embedText(&c))
			}
			v, err := ix.emb.Embed(ctx, texts)
			if err != nil {
				return fmt.Errorf("sqlite: embedding chunks with %s: %w", ix.emb.Name(), err)
			}
			if len(v) != len(texts) {
				return fmt.Errorf("sqlite: embedder %s returned %d vectors for %d texts", ix.emb.Name(), len(v), len(texts))
			}
			vecs = append(vecs, v...)
		}
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: adding documents: %w", err)
	}
	defer tx.Rollback()
	del, err := tx.PrepareContext(ctx, "DELETE FROM chunks WHERE source = ?")
	if err != nil {
		return fmt.Errorf("sqlite: adding documents: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO chunks(source, heading, name, words, summary, text, start_line, end_line, embedding)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("sqlite: adding documents: %w", err)
	}
	if prefix != "" {
		if _, err := tx.ExecContext(ctx, "DELETE FROM chunks WHERE substr(source, 1, length(?1)) = ?1", prefix); err != nil {
			return fmt.Errorf("sqlite: removing %s…: %w", prefix, err)
		}
	}
	for _, d := range docs {
		if _, err := del.ExecContext(ctx, d.Source); err != nil {
			return fmt.Errorf("sqlite: replacing %s: %w", d.Source, err)
		}
	}
	// A name is split into the words of the documents added with it: a function's name is
	// written from the words its documentation uses.
	vocab := newVocabulary(chunks)
	for i, c := range chunks {
		var blob []byte
		if vecs != nil {
			blob = encode(vecs[i])
		}
		if _, err := ins.ExecContext(ctx, c.Source, c.Heading, c.Name, nameWords(c.Name, vocab), c.Summary, c.Text, c.StartLine, c.EndLine, blob); err != nil {
			return fmt.Errorf("sqlite: adding %s: %w", c.Cite(), err)
		}
	}
	if err := countLinks(ctx, tx); err != nil {
		return fmt.Errorf("sqlite: counting cross-references: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: adding documents: %w", err)
	}
	return nil
}

// Stats counts the chunks and sources in the index.
func (ix *Index) Stats(ctx context.Context) (chunks, sources int64, err error) {
	err = ix.db.QueryRowContext(ctx, "SELECT count(*), count(DISTINCT source) FROM chunks").Scan(&chunks, &sources)
	if err != nil {
		err = fmt.Errorf("sqlite: counting: %w", err)
	}
	return
}

// lexical ranks by BM25 twice, over Porter-stemmed words and over the words as written, and adds
// the two: stemming finds "integration" for "integrate", the exact words keep "determinant" from
// ranking below "determines".
func (ix *Index) lexical(ctx context.Context, match string, q *knowledge.Query, n int) ([]knowledge.Hit, error) {
	type row struct {
		hit     knowledge.Hit
		inlinks int
		words   string
	}
	byID := map[string]*row{}
	var order []string
	w := ix.weights
	for _, table := range []string{"chunks_fts", "chunks_exact"} {
		// Rank inside the FTS table first and join only the best rows: joining every match before
		// sorting would copy every matching chunk's text into the sorter. A source filter needs
		// the join to rank only the chunks it keeps.
		query := `
			SELECT c.id, c.source, c.heading, c.name, c.summary, c.text, c.start_line, c.end_line, f.s, c.inlinks, c.words
			FROM (SELECT rowid, bm25(%[1]s, %g, %g, %g, %g, %g) AS s FROM %[1]s WHERE %[1]s MATCH ?1 ORDER BY s LIMIT ?3) f
			JOIN chunks c ON c.id = f.rowid
			WHERE ?2 = ''
			ORDER BY f.s`
		if q.Source != "" {
			query = `
			SELECT c.id, c.source, c.heading, c.name, c.summary, c.text, c.start_line, c.end_line,
				bm25(%[1]s, %g, %g, %g, %g, %g) AS s, c.inlinks, c.words
			FROM %[1]s JOIN chunks c ON c.id = %[1]s.rowid
			WHERE %[1]s MATCH ?1 AND substr(c.source, 1, length(?2)) = ?2
			ORDER BY s LIMIT ?3`
		}
		stmt, err := ix.prepare(ctx, fmt.Sprintf(query, table, w[0], w[1], w[2], w[3], w[4]))
		if err != nil {
			return nil, fmt.Errorf("sqlite: searching %q: %w", q.Text, err)
		}
		rows, err := stmt.QueryContext(ctx, match, q.Source, 4*n)
		if err != nil {
			return nil, fmt.Errorf("sqlite: searching %q: %w", q.Text, err)
		}
		for rows.Next() {
			var r row
			if err := rows.Scan(append(scanDest(&r.hit), &r.inlinks, &r.words)...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: searching %q: %w", q.Text, err)
			}
			if table == "chunks_exact" {
				r.hit.Score *= exactWeight
			}
			if old, ok := byID[r.hit.ID]; ok {
				old.hit.Score += r.hit.Score
				continue
			}
			byID[r.hit.ID] = &r
			order = append(order, r.hit.ID)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: searching %q: %w", q.Text, err)
		}
	}
	hits := make([]knowledge.Hit, 0, len(order))
	qwords := queryWords(q.Text)
	for _, id := range order {
		r := byID[id]
		r.hit.Score *= 1 + linkPrior*math.Log1p(float64(r.inlinks))
		if writtenFrom(r.words, qwords) {
			r.hit.Score *= nameBoost
		}
		hits = append(hits, r.hit)
	}
	return rerank(hits, q.Text, n), nil
}

// exactWeight weighs the BM25 of the words as written against that of their stems.
const exactWeight = 0.5

// linkPrior scales the cross-reference prior: a BM25 score is multiplied by 1 + linkPrior·ln(1+inlinks).
const linkPrior = 0.2

// nameBoost multiplies the score of a chunk whose name is one of the query's words: asking for
// "LU factorization" means lu before the functions that mention an LU factorization.
const nameBoost = 1.5

// supersededWeight multiplies the score of a function whose help says it is obsolete or
// deprecated: a question means its replacement, which the same words find.
const supersededWeight = 0.5

// superseded reports whether a summary says its function is obsolete, deprecated or not
// recommended (Octave's legacy functions, numpy's deprecated ones).
func superseded(summary string) bool {
	s := strings.ToLower(summary)
	return strings.Contains(s, "obsolete") || strings.Contains(s, "deprecated") || strings.Contains(s, "not recommended")
}

// rerank turns bm25() (lower is better) into a score, boosts exact name matches, keeps the best
// chunk of each section (one function's help, one heading of a file) and cuts to n.
func rerank(hits []knowledge.Hit, query string, n int) []knowledge.Hit {
	words := map[string]bool{}
	for _, w := range queryWords(query) {
		words[w] = true
	}
	for i := range hits {
		hits[i].Score = -hits[i].Score
		name := strings.ToLower(hits[i].Name)
		if k := strings.LastIndexByte(name, '.'); k >= 0 {
			name = name[k+1:] // numpy.linalg.lstsq
		}
		if words[name] {
			hits[i].Score *= nameBoost
		}
		if superseded(hits[i].Summary) {
			hits[i].Score *= supersededWeight
		}
	}
	slices.SortStableFunc(hits, func(a, b knowledge.Hit) int { return cmpDesc(a.Score, b.Score) })
	seen := map[[2]string]bool{}
	out := hits[:0]
	for _, h := range hits {
		k := [2]string{h.Source, h.Heading}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, h)
		if len(out) == n {
			break
		}
	}
	return out
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// queryWords are the lower-cased words of a query, split at anything but letters and digits; a
// hyphenated or slashed compound ("pseudo-inverse") also gives its joined form ("pseudoinverse").
// The query is folded as the index is: "non-stiff" is the one word nonstiff.
func queryWords(text string) []string {
	var out []string
	for _, f := range strings.Fields(strings.ToLower(fold(text))) {
		parts := strings.FieldsFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		out = append(out, parts...)
		if len(parts) > 1 && !strings.ContainsAny(f, ".") {
			out = append(out, strings.Join(parts, ""))
		}
	}
	return out
}

// candidates is how many results each ranked list contributes before fusion.
const candidates = 50

// Search ranks chunks by BM25 and, with an embedder, fuses that with cosine similarity.
func (ix *Index) Search(ctx context.Context, q *knowledge.Query) ([]knowledge.Hit, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	match := MatchExpr(q.Text)
	if match == "" && ix.emb == nil {
		return nil, fmt.Errorf("sqlite: the query %q has no searchable words", q.Text)
	}
	n := limit
	if ix.emb != nil {
		n = max(limit, candidates)
	}
	var lexical []knowledge.Hit
	if match != "" {
		var err error
		if lexical, err = ix.lexical(ctx, match, q, n); err != nil {
			return nil, err
		}
	}
	if ix.emb == nil {
		return lexical, nil
	}
	semantic, err := ix.nearest(ctx, q, n)
	if err != nil {
		return nil, err
	}
	byID := map[string]knowledge.Hit{}
	ids := func(hs []knowledge.Hit) []string {
		out := make([]string, len(hs))
		for i, h := range hs {
			out[i] = h.ID
			byID[h.ID] = h
		}
		return out
	}
	fused := rank.Fuse(60, ids(lexical), ids(semantic))
	out := make([]knowledge.Hit, 0, min(limit, len(fused)))
	for _, f := range fused[:min(limit, len(fused))] {
		h := byID[f.ID]
		h.Score = f.Score
		out = append(out, h)
	}
	return out, nil
}

// nearest is the brute-force cosine ranking of every embedded chunk against the query.
func (ix *Index) nearest(ctx context.Context, q *knowledge.Query, n int) ([]knowledge.Hit, error) {
	v, err := ix.emb.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, fmt.Errorf("sqlite: embedding the query with %s: %w", ix.emb.Name(), err)
	}
	if len(v) != 1 {
		return nil, fmt.Errorf("sqlite: embedder %s returned %d vectors for one query", ix.emb.Name(), len(v))
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT id, embedding FROM chunks
		WHERE embedding IS NOT NULL AND (?1 = '' OR substr(source, 1, length(?1)) = ?1)`, q.Source)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading embeddings: %w", err)
	}
	type scored struct {
		id int64
		s  float64
	}
	var all []scored
	for rows.Next() {
		var id int64
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: reading embeddings: %w", err)
		}
		all = append(all, scored{id, rank.Cosine(v[0], decode(blob))})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading embeddings: %w", err)
	}
	slices.SortFunc(all, func(a, b scored) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return 0
	})
	all = all[:min(n, len(all))]
	out := make([]knowledge.Hit, 0, len(all))
	for _, a := range all {
		var h knowledge.Hit
		err := ix.db.QueryRowContext(ctx, `SELECT id, source, heading, name, summary, text, start_line, end_line, 0
			FROM chunks WHERE id = ?`, a.id).Scan(scanDest(&h)...)
		if errors.Is(err, sql.ErrNoRows) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: reading chunk %d: %w", a.id, err)
		}
		h.Score = a.s
		out = append(out, h)
	}
	return out, nil
}

func scanDest(h *knowledge.Hit) []any {
	return []any{&h.ID, &h.Source, &h.Heading, &h.Name, &h.Summary, &h.Text, &h.StartLine, &h.EndLine, &h.Score}
}

func embedText(c *knowledge.Chunk) string {
	var b strings.Builder
	for _, s := range []string{c.Name, c.Heading, c.Summary, c.Text} {
		if s != "" {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decode(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// MatchExpr turns free text into an FTS5 query: its words, lower-cased, stop words (statement.FunctionWord) dropped, each
// quoted (so FTS5 operators in the text mean nothing), joined by OR so BM25 ranks partial matches.
func MatchExpr(text string) string {
	words := queryWords(text)
	var terms []string
	seen := map[string]bool{}
	for _, w := range words {
		if statement.FunctionWord(w) || seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, `"`+w+`"`)
	}
	if len(terms) == 0 {
		// A query of stop words only still searches for them.
		for _, w := range words {
			if !seen[w] {
				seen[w] = true
				terms = append(terms, `"`+w+`"`)
			}
		}
	}
	return strings.Join(terms, " OR ")
}
