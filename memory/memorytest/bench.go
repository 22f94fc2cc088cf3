package memorytest

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

// Corpus returns n synthetic lab facts, deterministic for a seed: a vocabulary of a few
// thousand words in templates, so that full-text search has realistic term statistics.
func Corpus(n int, seed uint64) []*memory.Fact {
	r := rand.New(rand.NewPCG(seed, 1))
	vocab := vocabulary(r)
	templates := []string{
		"%s %s diverges when %s exceeds %d %s during %s",
		"use %s instead of %s for %s problems above %d %s in %s",
		"calibrated %s of %s reads %d %s after %s with %s",
		"%s oscillates at %d %s if %s is tuned by %s and %s",
		"warning: %s fails on %s with %s at %d %s near %s",
	}
	kinds := memory.FactKinds
	out := make([]*memory.Fact, n)
	for i := range out {
		t := templates[r.IntN(len(templates))]
		w := func() string { return vocab[zipf(r, len(vocab))] }
		var args []any
		for _, verb := range templateVerbs.FindAllString(t, -1) {
			if verb == "%d" {
				args = append(args, r.IntN(1000))
			} else {
				args = append(args, w())
			}
		}
		text := fmt.Sprintf(t, args...)
		out[i] = &memory.Fact{
			ID:        fmt.Sprintf("bench-%07d", i),
			Namespace: fmt.Sprintf("bench/p%d", i%10),
			Text:      fmt.Sprintf("%s (run %d)", text, i),
			Kind:      kinds[i%len(kinds)],
			Tags:      []string{w(), w()},
			Status:    memory.StatusActive,
		}
	}
	return out
}

var templateVerbs = regexp.MustCompile(`%[sd]`)

// vocabulary is 3,000 pronounceable pseudo-words.
func vocabulary(r *rand.Rand) []string {
	cons, vow := "bcdfghklmnprstvz", "aeiou"
	seen := map[string]bool{}
	var out []string
	for len(out) < 3000 {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteByte(cons[r.IntN(len(cons))])
			b.WriteByte(vow[r.IntN(len(vow))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// zipf draws an index with a Zipf-like distribution (s ≈ 1), as word frequencies are.
func zipf(r *rand.Rand, n int) int {
	return min(n-1, int(float64(n)*r.Float64()*r.Float64()*r.Float64()))
}

// Queries returns n queries of two or three corpus words.
func Queries(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 2))
	vocab := vocabulary(rand.New(rand.NewPCG(seed, 1)))
	out := make([]string, n)
	for i := range out {
		k := 2 + r.IntN(2)
		words := make([]string, k)
		for j := range words {
			words[j] = vocab[r.IntN(len(vocab)/4)]
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

// Ingest benchmarks writing facts: facts one transaction each through AddFact (b.N of them),
// reporting facts/s.
func BenchAddFact(b *testing.B, s memory.Store) {
	facts := Corpus(b.N, 7)
	b.ResetTimer()
	start := time.Now()
	for _, f := range facts {
		g := *f
		g.ID = ""
		if _, err := s.AddFact(context.Background(), &memory.AddFactParams{Fact: &g, Actor: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "facts/s")
}

// Load writes n corpus facts through Import in batches of batch, and returns the rate.
func Load(ctx context.Context, s memory.Store, n, batch int) (float64, error) {
	return load(ctx, s, Corpus(n, 7), batch)
}

// load writes facts through Import in batches of batch, and returns the rate.
func load(ctx context.Context, s memory.Store, facts []*memory.Fact, batch int) (float64, error) {
	now := time.Now().UTC()
	for _, f := range facts {
		f.CreatedAt, f.UpdatedAt, f.ValidFrom = now, now, now
	}
	start := time.Now()
	for i := 0; i < len(facts); i += batch {
		if _, err := s.Import(ctx, &memory.ImportParams{Facts: facts[i:min(i+batch, len(facts))], Actor: "bench"}); err != nil {
			return 0, err
		}
	}
	return float64(len(facts)) / time.Since(start).Seconds(), nil
}

// Bench100k loads 100,000 facts into s (Import, 1,000 per transaction), writes 2,000 more one
// AddFact each on top, runs maintain (when not nil: what the backend does for a live store, such
// as VACUUM ANALYZE), then measures search latency b.N times, and reports the rates, the
// latencies and the store's size as size measures it. Run with -benchtime 1x.
func Bench100k(b *testing.B, s memory.Store, maintain func() error, size func() (int64, error)) {
	ctx := context.Background()
	rate, err := Load(ctx, s, 100_000, 1000)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i, f := range Corpus(2000, 99) {
		f.ID = ""
		f.Text += " extra"
		if _, err := s.AddFact(ctx, &memory.AddFactParams{Fact: f}); err != nil {
			b.Fatalf("fact %d: %v", i, err)
		}
	}
	single := 2000 / time.Since(start).Seconds()
	searchLatency(b, s, maintain, Queries(1000, 3))
	n, err := size()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rate, "import-facts/s")
	b.ReportMetric(single, "addfact-facts/s")
	b.ReportMetric(float64(n)/(1<<20), "MiB")
}

// graphNames are entity names and aliases the graph corpus mentions: materials, software,
// methods, properties, as a text would write them.
var graphNames = []string{"Cu", "copper", "fcc Cu", "Al", "aluminium", "fcc Al", "Si", "silicon", "Fe", "iron", "bcc Fe",
	"TiO2", "rutile", "GaAs", "gallium arsenide", "NaCl", "water", "Quantum ESPRESSO", "QE", "pw.x", "LAMMPS", "VASP",
	"Octave", "NumPy", "explicit Euler", "forward Euler", "implicit Euler", "RK4", "DFT", "PBE", "LDA", "EAM", "SCF",
	"mixing_beta", "ecutwfc", "time step", "lattice constant", "band gap", "bulk modulus", "overshoot"}

// GraphCorpus is Corpus with one entity of graphNames written into every fact, so that the
// store's entity graph is populated (about 40 entities, each linked to thousands of facts) and
// retrieval expands queries that name them.
func GraphCorpus(n int, seed uint64) []*memory.Fact {
	facts := Corpus(n, seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for _, f := range facts {
		f.Text = graphNames[r.IntN(len(graphNames))] + " " + f.Text
	}
	return facts
}

// GraphQueries are Queries each naming one entity of graphNames by one of its names.
func GraphQueries(n int, seed uint64) []string {
	qs := Queries(n, seed)
	r := rand.New(rand.NewPCG(seed, 4))
	for i := range qs {
		qs[i] = graphNames[r.IntN(len(graphNames))] + " " + qs[i]
	}
	return qs
}

// Bench100kGraph is Bench100k on GraphCorpus with GraphQueries: search latency with the entity
// graph expanding every query.
func Bench100kGraph(b *testing.B, s memory.Store, maintain func() error) {
	rate, err := load(context.Background(), s, GraphCorpus(100_000, 7), 1000)
	if err != nil {
		b.Fatal(err)
	}
	searchLatency(b, s, maintain, GraphQueries(1000, 3))
	b.ReportMetric(rate, "import-facts/s")
}

// searchLatency runs maintain (when not nil), then measures the latency of queries b.N times
// and reports it (raw and best-of-3 p50 and p99).
func searchLatency(b *testing.B, s memory.Store, maintain func() error, queries []string) {
	if maintain != nil {
		if err := maintain(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		raw, best, err := Latencies(context.Background(), s, queries)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(raw[0].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(raw[1].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(best[0].Microseconds())/1000, "best-of-3-p50-ms")
		b.ReportMetric(float64(best[1].Microseconds())/1000, "best-of-3-p99-ms")
	}
	b.StopTimer()
}

// Latencies runs each query (limit 10, all namespaces) three times and returns the p50 and p99
// of the first runs (raw) and of each query's fastest run (best): on a shared machine the
// difference is time spent waiting for a CPU, not searching.
func Latencies(ctx context.Context, s memory.Store, queries []string) (raw, best [2]time.Duration, err error) {
	first := make([]time.Duration, len(queries))
	fastest := make([]time.Duration, len(queries))
	for round := range 3 {
		for i, q := range queries {
			start := time.Now()
			for _, err := range s.Search(ctx, &memory.Query{Text: q, Limit: 10}) {
				if err != nil {
					return raw, best, err
				}
			}
			d := time.Since(start)
			if round == 0 {
				first[i], fastest[i] = d, d
			}
			fastest[i] = min(fastest[i], d)
		}
	}
	slices.Sort(first)
	slices.Sort(fastest)
	n := len(queries)
	return [2]time.Duration{first[n/2], first[n*99/100]}, [2]time.Duration{fastest[n/2], fastest[n*99/100]}, nil
}

// LoCoMoResult is session-level retrieval quality on LoCoMo (categories 1–4).
type LoCoMoResult struct {
	Questions int
	// Sessions as documents: each session stored as one entry.
	SessionAny5, SessionAny10, SessionAll5, SessionAll10 float64
	// Turns as documents, ranked sessions by their best turn.
	TurnAny5, TurnAny10, TurnAll5, TurnAll10 float64
}

type locomoConv struct {
	turns    map[string][]locomoTurn // session number → turns
	dates    map[string]string
	qa       []locomoQA
	sessions []string
}

type locomoTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

type locomoQA struct {
	Question string          `json:"question"`
	Evidence []string        `json:"evidence"`
	Category int             `json:"category"`
	Answer   json.RawMessage `json:"answer"`
}

var diaRe = regexp.MustCompile(`D(\d+):0*(\d+)`)

// readLoCoMo reads the conversations from the zip at path.
func readLoCoMo(path string) ([]*locomoConv, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var convs []*locomoConv
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".json") || !strings.Contains(f.Name, "locomo10_v2/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		c := &locomoConv{turns: map[string][]locomoTurn{}, dates: map[string]string{}}
		for k, v := range raw {
			if n, ok := strings.CutPrefix(k, "session_"); ok && !strings.Contains(n, "_") {
				var ts []locomoTurn
				if err := json.Unmarshal(v, &ts); err != nil {
					return nil, fmt.Errorf("%s %s: %w", f.Name, k, err)
				}
				c.turns[n] = ts
				c.sessions = append(c.sessions, n)
			}
			if n, ok := strings.CutSuffix(strings.TrimPrefix(k, "session_"), "_date_time"); ok && strings.HasPrefix(k, "session_") {
				var d string
				json.Unmarshal(v, &d)
				c.dates[n] = d
			}
		}
		if err := json.Unmarshal(raw["qa"], &c.qa); err != nil {
			return nil, fmt.Errorf("%s qa: %w", f.Name, err)
		}
		sort.Slice(c.sessions, func(i, j int) bool {
			a, _ := strconv.Atoi(c.sessions[i])
			b, _ := strconv.Atoi(c.sessions[j])
			return a < b
		})
		convs = append(convs, c)
	}
	if len(convs) == 0 {
		return nil, fmt.Errorf("%s: no locomo10_v2/*.json", path)
	}
	return convs, nil
}

// evidenceSessions normalises a QA's evidence to its set of session numbers (nil when none is
// usable).
func evidenceSessions(c *locomoConv, ev []string) []string {
	var out []string
	for _, e := range ev {
		for _, m := range diaRe.FindAllStringSubmatch(e, -1) {
			s := m[1]
			id := "D" + s + ":" + m[2]
			ok := false
			for _, t := range c.turns[s] {
				if t.DiaID == id {
					ok = true
				}
			}
			if ok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// LoCoMo measures session-level recall@5 and @10 on the LoCoMo zip at path: open returns a
// new, empty store (called twice per conversation).
func LoCoMo(ctx context.Context, path string, open func() (memory.Store, error)) (*LoCoMoResult, error) {
	convs, err := readLoCoMo(path)
	if err != nil {
		return nil, err
	}
	res := &LoCoMoResult{}
	for ci, c := range convs {
		ns := fmt.Sprintf("locomo/c%d", ci)
		// Sessions as documents.
		sess, err := open()
		if err != nil {
			return nil, err
		}
		var facts []*memory.Fact
		now := time.Now().UTC()
		for _, n := range c.sessions {
			var b strings.Builder
			b.WriteString(c.dates[n] + "\n")
			for _, t := range c.turns[n] {
				b.WriteString(t.Speaker + ": " + t.Text + "\n")
			}
			facts = append(facts, &memory.Fact{ID: "S" + n, Namespace: ns, Text: b.String(), Kind: memory.KindObservation,
				Status: memory.StatusActive, CreatedAt: now, UpdatedAt: now, ValidFrom: now, Provenance: memory.Provenance{Session: "D" + n}})
		}
		if _, err := sess.Import(ctx, &memory.ImportParams{Facts: facts}); err != nil {
			sess.Close()
			return nil, err
		}
		// Turns as documents.
		turns, err := open()
		if err != nil {
			sess.Close()
			return nil, err
		}
		facts = nil
		seen := map[string]bool{}
		for _, n := range c.sessions {
			for _, t := range c.turns[n] {
				text := t.Speaker + ": " + t.Text
				if k := statement.Normalize(text); seen[k] || k == "" {
					continue // the store keeps one active fact per text
				} else {
					seen[k] = true
				}
				facts = append(facts, &memory.Fact{ID: t.DiaID, Namespace: ns, Text: text, Kind: memory.KindObservation,
					Status: memory.StatusActive, CreatedAt: now, UpdatedAt: now, ValidFrom: now, Provenance: memory.Provenance{Session: "D" + n}})
			}
		}
		if _, err := turns.Import(ctx, &memory.ImportParams{Facts: facts}); err != nil {
			sess.Close()
			turns.Close()
			return nil, err
		}
		for _, qa := range c.qa {
			if qa.Category < 1 || qa.Category > 4 {
				continue
			}
			gold := evidenceSessions(c, qa.Evidence)
			if len(gold) == 0 {
				continue
			}
			res.Questions++
			ranked := func(s memory.Store, limit int) ([]string, error) {
				var out []string
				for r, err := range s.Search(ctx, &memory.Query{Text: qa.Question, Limit: limit}) {
					if err != nil {
						return nil, err
					}
					n := strings.TrimPrefix(r.Fact.Provenance.Session, "D")
					if !slices.Contains(out, n) {
						out = append(out, n)
					}
				}
				return out, nil
			}
			sr, err := ranked(sess, 10)
			if err != nil {
				return nil, err
			}
			tr, err := ranked(turns, 200)
			if err != nil {
				return nil, err
			}
			score := func(r []string, k int) (anyHit, allHit float64) {
				top := r[:min(k, len(r))]
				n := 0
				for _, g := range gold {
					if slices.Contains(top, g) {
						n++
					}
				}
				if n > 0 {
					anyHit = 1
				}
				if n == len(gold) {
					allHit = 1
				}
				return
			}
			a, b := score(sr, 5)
			res.SessionAny5, res.SessionAll5 = res.SessionAny5+a, res.SessionAll5+b
			a, b = score(sr, 10)
			res.SessionAny10, res.SessionAll10 = res.SessionAny10+a, res.SessionAll10+b
			a, b = score(tr, 5)
			res.TurnAny5, res.TurnAll5 = res.TurnAny5+a, res.TurnAll5+b
			a, b = score(tr, 10)
			res.TurnAny10, res.TurnAll10 = res.TurnAny10+a, res.TurnAll10+b
		}
		sess.Close()
		turns.Close()
	}
	q := float64(res.Questions)
	for _, p := range []*float64{&res.SessionAny5, &res.SessionAny10, &res.SessionAll5, &res.SessionAll10, &res.TurnAny5, &res.TurnAny10, &res.TurnAll5, &res.TurnAll10} {
		*p /= q
	}
	return res, nil
}

// SharedFile finds path under the repository's shared/ folder by walking up from the working
// directory (tests run in their package directory); "" when not found.
func SharedFile(path string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, "shared", path)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
