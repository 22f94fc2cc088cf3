// Package memorytest is the test suite every memory.Store passes, and a deterministic
// Embedder (character-trigram feature hashing) for testing hybrid retrieval without a model.
package memorytest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

// Run tests the Store that open returns. open must return a new, empty store each time; Run
// closes every store it opens.
func Run(t *testing.T, open func(t *testing.T) memory.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s memory.Store)
	}{
		{"CRUD", testCRUD},
		{"Rejects", testRejects},
		{"Search", testSearch},
		{"Filters", testFilters},
		{"History", testHistory},
		{"InvalidateKeeps", testInvalidate},
		{"Frozen", testFrozen},
		{"Dedup", testDedup},
		{"Skills", testSkills},
		{"Import", testImport},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.fn(t, s)
		})
	}
	t.Run("Closed", func(t *testing.T) {
		s := open(t)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddFact(t.Context(), &memory.AddFactParams{Fact: &memory.Fact{Namespace: "x", Text: "t"}}); !errors.Is(err, memory.ErrClosed) {
			t.Errorf("AddFact after Close: %v; want ErrClosed", err)
		}
		if _, err := collect(s.Search(t.Context(), &memory.Query{})); !errors.Is(err, memory.ErrClosed) {
			t.Errorf("Search after Close: %v; want ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// RunEmbedding tests hybrid retrieval: open must return a new, empty store that embeds with e.
func RunEmbedding(t *testing.T, open func(t *testing.T, e memory.Embedder) memory.Store) {
	ctx := t.Context()
	e := &Trigrams{Dim: 256}
	s := open(t, e)
	t.Cleanup(func() { s.Close() })
	add(t, s, "lab", "the viscosity of glycerol falls tenfold between 20 and 50 degrees")
	add(t, s, "lab", "octave ode45 diverges on stiff systems; use ode15s")
	add(t, s, "lab", "calibrate the balance every morning before weighing")
	// A misspelt word defeats full-text search; character trigrams still find it.
	res := search(t, s, &memory.Query{Text: "viscosty glycerol"})
	if len(res) == 0 || !strings.Contains(res[0].Fact.Text, "viscosity") {
		t.Fatalf("hybrid search for a misspelling: %v", texts(res))
	}
	if res[0].Cosine <= 0 || res[0].BM25 <= 0 {
		t.Errorf("top hit scores: bm25 %v cosine %v; want both > 0", res[0].BM25, res[0].Cosine)
	}
	if want := 2.0 / 61; math.Abs(res[0].Score-want) > 1e-9 {
		t.Errorf("fused score of a hit first in both lists = %v; want %v (RRF, k=60)", res[0].Score, want)
	}
	res = search(t, s, &memory.Query{Text: "viscosty"}) // no lexical match at all
	if len(res) == 0 || !strings.Contains(res[0].Fact.Text, "viscosity") || res[0].BM25 != 0 || res[0].Cosine <= 0 {
		t.Errorf("embedding-only hit: %+v", res)
	}
	if e.Calls() == 0 {
		t.Error("the embedder was never called")
	}
	_ = ctx
}

// Trigrams embeds texts by hashing their character trigrams into Dim buckets (feature hashing),
// L2-normalised: a real, deterministic, model-free embedding that tolerates misspellings.
type Trigrams struct {
	Dim   int
	mu    sync.Mutex
	calls int
}

// Name implements memory.Embedder.
func (e *Trigrams) Name() string { return fmt.Sprintf("trigrams-%d", e.Dim) }

// Calls is how many times Embed was called.
func (e *Trigrams) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// Embed implements memory.Embedder.
func (e *Trigrams) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls++
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, e.Dim)
		for w := range strings.FieldsSeq(statement.Words(text)) {
			w = " " + w + " "
			for j := 0; j+3 <= len(w); j++ {
				h := fnv.New32a()
				h.Write([]byte(w[j : j+3]))
				v[h.Sum32()%uint32(e.Dim)]++
			}
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

func collect[T any](seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	for x, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, x)
	}
	return out, nil
}

func add(t *testing.T, s memory.Store, ns, text string, mod ...func(*memory.Fact)) *memory.Fact {
	t.Helper()
	f := &memory.Fact{Namespace: ns, Text: text}
	for _, m := range mod {
		m(f)
	}
	r, err := s.AddFact(t.Context(), &memory.AddFactParams{Fact: f, Actor: "test"})
	if err != nil {
		t.Fatalf("AddFact(%q): %v", text, err)
	}
	return r.Fact
}

func search(t *testing.T, s memory.Store, q *memory.Query) []*memory.Result {
	t.Helper()
	res, err := collect(s.Search(t.Context(), q))
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return res
}

func texts(res []*memory.Result) []string {
	var out []string
	for _, r := range res {
		if r.Skill != nil {
			out = append(out, "skill:"+r.Skill.Name)
		} else {
			out = append(out, r.Fact.Text)
		}
	}
	return out
}

func history(t *testing.T, s memory.Store, p *memory.HistoryParams) []*memory.Change {
	t.Helper()
	h, err := collect(s.History(t.Context(), p))
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	return h
}

func events(h []*memory.Change) []memory.Event {
	var out []memory.Event
	for _, c := range h {
		out = append(out, c.Event)
	}
	return out
}

func testCRUD(t *testing.T, s memory.Store) {
	ctx := t.Context()
	when := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	before := time.Now()
	f := add(t, s, "user/proj", "PID gain Kp above 4.2 makes the maglev plant oscillate", func(f *memory.Fact) {
		f.Kind = memory.KindBoundary
		f.Tags = []string{"maglev", "pid"}
		f.Evidence = []string{"step 3: overshoot 41%"}
		f.Confidence = 0.8
		f.Provenance = memory.Provenance{Operations: []string{"op-1", "op-2"}, Session: "sess-1", Model: "m-1", Source: "https://example.org/a", Time: when}
	})
	if f.ID == "" || f.Status != memory.StatusActive || f.CreatedAt.IsZero() || f.UpdatedAt != f.CreatedAt || f.ValidFrom.IsZero() {
		t.Fatalf("stored fact: %+v", f)
	}
	if f.CreatedAt.Before(before.Add(-time.Second)) || f.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("created_at %v is not now", f.CreatedAt)
	}
	got, err := s.Get(ctx, &memory.GetParams{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, got.Fact); diff != "" || got.Skill != nil {
		t.Errorf("Get (-added +got):\n%s", diff)
	}
	if !got.Fact.Provenance.Time.Equal(when) || got.Fact.Provenance.Operations[1] != "op-2" {
		t.Errorf("provenance lost: %+v", got.Fact.Provenance)
	}

	u, err := s.UpdateFact(ctx, &memory.UpdateFactParams{ID: f.ID, Text: "PID gain Kp above 4.0 makes the maglev plant oscillate",
		Evidence: []string{"step 5: overshoot 30% at Kp=4.1"}, Actor: "agent:m-1", Reason: "new run"})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != f.ID || u.Kind != memory.KindBoundary || !slices.Equal(u.Tags, f.Tags) || len(u.Evidence) != 2 || u.Confidence != 0.8 || !u.UpdatedAt.After(f.UpdatedAt) && !u.UpdatedAt.Equal(f.UpdatedAt) {
		t.Errorf("updated fact: %+v", u)
	}
	got, _ = s.Get(ctx, &memory.GetParams{ID: f.ID})
	if diff := cmp.Diff(u, got.Fact); diff != "" {
		t.Errorf("Get after update (-updated +got):\n%s", diff)
	}
	if _, err := s.Get(ctx, &memory.GetParams{ID: "no-such-id"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Get of an unknown id: %v; want ErrNotFound", err)
	}
	if _, err := s.UpdateFact(ctx, &memory.UpdateFactParams{ID: "no-such-id", Text: "x"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("UpdateFact of an unknown id: %v; want ErrNotFound", err)
	}
	// Facts use counts.
	if _, err := s.Use(ctx, &memory.UseParams{ID: f.ID, Success: true}); err != nil {
		t.Fatal(err)
	}
	e, err := s.Use(ctx, &memory.UseParams{ID: f.ID, Success: false})
	if err != nil {
		t.Fatal(err)
	}
	if e.Fact.Successes != 1 || e.Fact.Failures != 1 {
		t.Errorf("counts after a success and a failure: %d/%d", e.Fact.Successes, e.Fact.Failures)
	}
}

func testRejects(t *testing.T, s memory.Store) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		f    *memory.Fact
	}{
		{"empty text", &memory.Fact{Namespace: "a", Text: "  "}},
		{"no namespace", &memory.Fact{Text: "x"}},
		{"bad namespace", &memory.Fact{Namespace: "A B", Text: "x"}},
		{"empty segment", &memory.Fact{Namespace: "a//b", Text: "x"}},
		{"bad kind", &memory.Fact{Namespace: "a", Text: "x", Kind: "rumour"}},
		{"skill kind", &memory.Fact{Namespace: "a", Text: "x", Kind: memory.KindSkill}},
		{"confidence", &memory.Fact{Namespace: "a", Text: "x", Confidence: 1.5}},
	} {
		if _, err := s.AddFact(ctx, &memory.AddFactParams{Fact: tc.f}); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: AddFact = %v; want ErrInvalid", tc.name, err)
		}
	}
	if _, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: &memory.Skill{Namespace: "a", Name: "Bad_Name", Description: "d"}}); !errors.Is(err, memory.ErrBadSkill) {
		t.Errorf("skill with a bad name: %v; want ErrBadSkill", err)
	}
	if _, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: &memory.Skill{Namespace: "a", Name: "ok"}}); !errors.Is(err, memory.ErrBadSkill) {
		t.Errorf("skill without description: %v; want ErrBadSkill", err)
	}
	if res := search(t, s, &memory.Query{}); len(res) != 0 {
		t.Errorf("rejected entries were stored: %v", texts(res))
	}
	if _, err := collect(s.Search(ctx, &memory.Query{Limit: -1})); !errors.Is(err, memory.ErrBadQuery) {
		t.Errorf("negative limit: %v; want ErrBadQuery", err)
	}
}

func testSearch(t *testing.T, s memory.Store) {
	add(t, s, "lab", "ode45 diverges on stiff chemical kinetics; switch to ode15s", func(f *memory.Fact) {
		f.Kind = memory.KindWarning
		f.Provenance.Operations = []string{"op-7"}
	})
	add(t, s, "lab", "the balance drifts by 0.2 mg per hour after calibration")
	add(t, s, "lab", "stiff springs need a smaller time step in the explicit integrator")
	add(t, s, "lab", "glycerol viscosity reference value: 1.41 Pa s at 20 C", func(f *memory.Fact) { f.Kind = memory.KindReference })
	res := search(t, s, &memory.Query{Text: "which ode solver for stiff kinetics?"})
	if len(res) < 2 {
		t.Fatalf("search found %v", texts(res))
	}
	if !strings.Contains(res[0].Fact.Text, "ode45") {
		t.Errorf("best hit %q; want the ode45 warning (all: %v)", res[0].Fact.Text, texts(res))
	}
	for i, r := range res {
		if r.Rank != i+1 || r.Score <= 0 || r.BM25 <= 0 || r.Fact == nil || r.Fact.ID == "" {
			t.Errorf("result %d: rank %d score %v bm25 %v", i, r.Rank, r.Score, r.BM25)
		}
		if i > 0 && r.Score > res[i-1].Score {
			t.Errorf("results not ordered by score: %v after %v", r.Score, res[i-1].Score)
		}
	}
	if got := res[0].Fact.Provenance.Operations; !slices.Equal(got, []string{"op-7"}) {
		t.Errorf("provenance in the result: %v", got)
	}
	// Stemming: "calibrating" finds "calibration".
	if res := search(t, s, &memory.Query{Text: "calibrating"}); len(res) != 1 || !strings.Contains(res[0].Fact.Text, "balance") {
		t.Errorf("search for a word form: %v", texts(res))
	}
	if res := search(t, s, &memory.Query{Text: "zebra unicorn"}); len(res) != 0 {
		t.Errorf("search for absent words found %v", texts(res))
	}
	// Punctuation and quotes in a query are not syntax.
	if _, err := collect(s.Search(t.Context(), &memory.Query{Text: `"ode45" OR (NOT stiff) AND * : -`})); err != nil {
		t.Errorf("search with operator characters: %v", err)
	}
	if res := search(t, s, &memory.Query{Text: "stiff", Limit: 1}); len(res) != 1 {
		t.Errorf("limit 1 gave %d results", len(res))
	}
}

func testFilters(t *testing.T, s memory.Store) {
	ctx := t.Context()
	a := add(t, s, "team", "alpha copper anneals at 500 C", func(f *memory.Fact) { f.Tags = []string{"copper", "heat"} })
	time.Sleep(5 * time.Millisecond)
	mid := time.Now()
	time.Sleep(5 * time.Millisecond)
	b := add(t, s, "team/sub", "beta copper wire breaks above 2 A", func(f *memory.Fact) {
		f.Tags = []string{"copper"}
		f.Kind = memory.KindBoundary
	})
	c := add(t, s, "teamx", "gamma copper oxide is black", func(f *memory.Fact) { f.Kind = memory.KindReference })
	if _, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: &memory.Skill{Namespace: "team/skills", Name: "copper-anneal",
		Description: "anneal copper samples", Body: "1. heat copper to 500 C\n2. hold 1 h\n"}}); err != nil {
		t.Fatal(err)
	}
	ids := func(res []*memory.Result) []string {
		var out []string
		for _, r := range res {
			out = append(out, r.ID())
		}
		slices.Sort(out)
		return out
	}
	sorted := func(xs ...string) []string { slices.Sort(xs); return xs }
	for _, tc := range []struct {
		name string
		q    memory.Query
		want []string
	}{
		{"namespace and children", memory.Query{Text: "copper", Namespaces: []string{"team"}, Kinds: memory.FactKinds}, sorted(a.ID, b.ID)},
		{"child only", memory.Query{Text: "copper", Namespaces: []string{"team/sub"}}, []string{b.ID}},
		{"two namespaces", memory.Query{Text: "copper", Namespaces: []string{"team/sub", "teamx"}}, sorted(b.ID, c.ID)},
		{"kind", memory.Query{Text: "copper", Kinds: []memory.Kind{memory.KindBoundary, memory.KindReference}}, sorted(b.ID, c.ID)},
		{"tags all", memory.Query{Text: "copper", Tags: []string{"copper", "heat"}}, []string{a.ID}},
		{"tag", memory.Query{Tags: []string{"copper"}}, sorted(a.ID, b.ID)},
		{"since", memory.Query{Text: "copper", Since: mid, Kinds: memory.FactKinds}, sorted(b.ID, c.ID)},
		{"until", memory.Query{Text: "copper", Until: mid}, []string{a.ID}},
		{"listing", memory.Query{Namespaces: []string{"teamx"}}, []string{c.ID}},
	} {
		if got := ids(search(t, s, &tc.q)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v; want %v", tc.name, got, tc.want)
		}
	}
	res := search(t, s, &memory.Query{Text: "copper anneal", Kinds: []memory.Kind{memory.KindSkill}})
	if len(res) != 1 || res[0].Skill == nil || res[0].Skill.Name != "copper-anneal" || res[0].Score <= 0 {
		t.Errorf("skill search: %v", texts(res))
	}
	// A listing is newest first.
	res = search(t, s, &memory.Query{Kinds: memory.FactKinds})
	if got := []string{res[0].ID(), res[1].ID(), res[2].ID()}; !slices.Equal(got, []string{c.ID, b.ID, a.ID}) {
		t.Errorf("listing order %v; want newest first", got)
	}
	// ValidAt and status: an invalidated fact was valid before it was invalidated.
	at := time.Now().Add(time.Hour)
	if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: a.ID, Reason: "wrong alloy", At: at}); err != nil {
		t.Fatal(err)
	}
	all := []memory.Status{memory.StatusActive, memory.StatusInvalidated}
	if got := ids(search(t, s, &memory.Query{Text: "anneals", Status: all, ValidAt: at.Add(-time.Minute), Kinds: memory.FactKinds})); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("valid before invalidation: %v", got)
	}
	if got := ids(search(t, s, &memory.Query{Text: "anneals", Status: all, ValidAt: at.Add(time.Minute), Kinds: memory.FactKinds})); len(got) != 0 {
		t.Errorf("valid after invalidation: %v", got)
	}
	if got := ids(search(t, s, &memory.Query{Text: "anneals", Kinds: memory.FactKinds})); len(got) != 0 {
		t.Errorf("default status found an invalidated fact: %v", got)
	}
	if got := ids(search(t, s, &memory.Query{Text: "anneals", Status: []memory.Status{memory.StatusInvalidated}, Kinds: memory.FactKinds})); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("status invalidated: %v", got)
	}
}

func testHistory(t *testing.T, s memory.Store) {
	ctx := t.Context()
	start := time.Now().Add(-time.Second)
	f := add(t, s, "h", "first text")
	if _, err := s.UpdateFact(ctx, &memory.UpdateFactParams{ID: f.ID, Text: "second text", Actor: "agent:x", Reason: "refined"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: f.ID, Actor: "user:bob", Reason: "disproved"}); err != nil {
		t.Fatal(err)
	}
	g := add(t, s, "h/child", "other fact")
	h := history(t, s, &memory.HistoryParams{EntryID: f.ID})
	want := []memory.Event{memory.EventAdd, memory.EventUpdate, memory.EventInvalidate}
	if got := events(h); !slices.Equal(got, want) {
		t.Fatalf("events %v; want %v", got, want)
	}
	if h[0].New != "first text" || h[0].Actor != "test" {
		t.Errorf("ADD: %+v", h[0])
	}
	if h[1].Old != "first text" || h[1].New != "second text" || h[1].Actor != "agent:x" || h[1].Reason != "refined" {
		t.Errorf("UPDATE: %+v", h[1])
	}
	if h[2].Old != "second text" || h[2].Actor != "user:bob" || h[2].Reason != "disproved" {
		t.Errorf("DELETE: %+v", h[2])
	}
	for i, c := range h {
		if c.EntryID != f.ID || c.Namespace != "h" || c.Time.Before(start) || c.Time.After(time.Now().Add(time.Second)) {
			t.Errorf("change %d: %+v", i, c)
		}
		if i > 0 && (c.Seq <= h[i-1].Seq || c.Time.Before(h[i-1].Time)) {
			t.Errorf("change %d out of order: %+v after %+v", i, c, h[i-1])
		}
	}
	ns := history(t, s, &memory.HistoryParams{Namespace: "h"})
	if len(ns) != 4 || ns[3].EntryID != g.ID {
		t.Errorf("namespace history (with its child): %d changes", len(ns))
	}
	if after := history(t, s, &memory.HistoryParams{Namespace: "h", After: ns[1].Seq, Limit: 1}); len(after) != 1 || after[0].Seq != ns[2].Seq {
		t.Errorf("history after %d limit 1: %+v", ns[1].Seq, after)
	}
}

func testInvalidate(t *testing.T, s memory.Store) {
	ctx := t.Context()
	f := add(t, s, "inv", "water boils at 90 C at sea level")
	if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: f.ID}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("invalidate without a reason: %v; want ErrInvalid", err)
	}
	e, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: f.ID, Reason: "wrong: 100 C", Actor: "user:a"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Fact.Status != memory.StatusInvalidated || e.Fact.Reason != "wrong: 100 C" || e.Fact.InvalidAt.IsZero() || e.Fact.Text != f.Text {
		t.Errorf("invalidated: %+v", e.Fact)
	}
	got, err := s.Get(ctx, &memory.GetParams{ID: f.ID})
	if err != nil || got.Fact.Text != f.Text || got.Fact.Status != memory.StatusInvalidated {
		t.Fatalf("an invalidated fact must be kept: %+v, %v", got, err)
	}
	if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: f.ID, Reason: "again"}); !errors.Is(err, memory.ErrNotActive) {
		t.Errorf("invalidating twice: %v; want ErrNotActive", err)
	}
	if _, err := s.UpdateFact(ctx, &memory.UpdateFactParams{ID: f.ID, Text: "x"}); !errors.Is(err, memory.ErrNotActive) {
		t.Errorf("updating an invalidated fact: %v; want ErrNotActive", err)
	}
	// The same text can be added again as a new fact; the old one stays.
	g := add(t, s, "inv", "water boils at 90 C at sea level")
	if g.ID == f.ID {
		t.Error("re-adding an invalidated fact revived it instead of adding")
	}
	// Superseding.
	h := add(t, s, "inv", "water boils at 100 C at sea level")
	e, err = s.Invalidate(ctx, &memory.InvalidateParams{ID: g.ID, SupersededBy: h.ID, Reason: "merged"})
	if err != nil || e.Fact.Status != memory.StatusSuperseded || e.Fact.SupersededBy != h.ID {
		t.Errorf("supersede: %+v, %v", e, err)
	}
	if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: h.ID, SupersededBy: "nope", Reason: "x"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("superseded by an unknown id: %v; want ErrNotFound", err)
	}
	res := search(t, s, &memory.Query{Namespaces: []string{"inv"}, Status: []memory.Status{memory.StatusActive, memory.StatusInvalidated, memory.StatusSuperseded}})
	if len(res) != 3 {
		t.Errorf("all statuses: %v; want 3 entries, nothing lost", texts(res))
	}
}

func testFrozen(t *testing.T, s memory.Store) {
	ctx := t.Context()
	f := add(t, s, "strong", "a fact written by a strong model")
	sk, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: &memory.Skill{Namespace: "strong/skills", Name: "fit", Description: "fit a curve", Body: "use lsqcurvefit"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Freeze(ctx, &memory.FreezeParams{Namespace: "strong", Frozen: true, Actor: "user:a"}); err != nil {
		t.Fatal(err)
	}
	writes := map[string]error{}
	_, writes["AddFact"] = s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "strong", Text: "new"}})
	_, writes["AddFact child"] = s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "strong/sub", Text: "new"}})
	_, writes["UpdateFact"] = s.UpdateFact(ctx, &memory.UpdateFactParams{ID: f.ID, Text: "changed"})
	_, writes["Invalidate"] = s.Invalidate(ctx, &memory.InvalidateParams{ID: f.ID, Reason: "x"})
	_, writes["PutSkill"] = s.PutSkill(ctx, &memory.PutSkillParams{Skill: &memory.Skill{Namespace: "strong/skills", Name: "fit", Description: "changed", Body: "x"}})
	_, writes["Use"] = s.Use(ctx, &memory.UseParams{ID: sk.Skill.ID, Success: true})
	_, writes["Import"] = s.Import(ctx, &memory.ImportParams{Facts: []*memory.Fact{{ID: "i1", Namespace: "strong", Text: "imp", Kind: memory.KindObservation, Status: memory.StatusActive}}})
	for name, err := range writes {
		if !errors.Is(err, memory.ErrFrozen) || !strings.Contains(err.Error(), "strong") {
			t.Errorf("%s in a frozen namespace: %v; want ErrFrozen naming it", name, err)
		}
	}
	// Reads work, nothing changed.
	got, err := s.Get(ctx, &memory.GetParams{ID: f.ID})
	if err != nil || got.Fact.Text != f.Text || got.Fact.Status != memory.StatusActive {
		t.Errorf("frozen fact: %+v, %v", got, err)
	}
	if res := search(t, s, &memory.Query{Text: "strong model"}); len(res) != 1 {
		t.Errorf("search in a frozen namespace: %v", texts(res))
	}
	// Siblings with a common prefix are not frozen.
	add(t, s, "strongest", "not frozen")
	nss, err := s.Namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	frozen := map[string]bool{}
	for _, n := range nss {
		frozen[n.Name] = n.Frozen
	}
	if !frozen["strong"] || frozen["strongest"] || frozen["strong/skills"] {
		t.Errorf("namespaces: %+v", nss)
	}
	if err := s.Freeze(ctx, &memory.FreezeParams{Namespace: "strong", Frozen: false, Actor: "user:a"}); err != nil {
		t.Fatal(err)
	}
	add(t, s, "strong", "writable again")
	if got := events(history(t, s, &memory.HistoryParams{Namespace: "strong"})); !slices.Contains(got, memory.EventFreeze) || !slices.Contains(got, memory.EventUnfreeze) {
		t.Errorf("freeze not in history: %v", got)
	}
}

func testDedup(t *testing.T, s memory.Store) {
	ctx := t.Context()
	f := add(t, s, "d", "Use ode15s for stiff problems.", func(f *memory.Fact) {
		f.Tags = []string{"octave"}
		f.Provenance.Operations = []string{"op-1"}
	})
	r, err := s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "d", Text: "use ODE15s  for stiff problems",
		Tags: []string{"solver"}, Evidence: []string{"run 2"}, Provenance: memory.Provenance{Operations: []string{"op-2"}}}, Actor: "agent:y"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Merged || r.Fact.ID != f.ID || r.Fact.Text != f.Text {
		t.Fatalf("exact duplicate: merged=%v %+v", r.Merged, r.Fact)
	}
	if !slices.Equal(r.Fact.Tags, []string{"octave", "solver"}) || !slices.Equal(r.Fact.Provenance.Operations, []string{"op-1", "op-2"}) || !slices.Equal(r.Fact.Evidence, []string{"run 2"}) {
		t.Errorf("merged fact: %+v", r.Fact)
	}
	if res := search(t, s, &memory.Query{Namespaces: []string{"d"}}); len(res) != 1 {
		t.Errorf("after merging: %v", texts(res))
	}
	_ = f
	h := history(t, s, &memory.HistoryParams{EntryID: f.ID})
	if got := events(h); !slices.Equal(got, []memory.Event{memory.EventAdd, memory.EventMerge}) || h[1].New != "use ODE15s  for stiff problems" || h[1].Actor != "agent:y" {
		t.Errorf("merge history: %+v", h)
	}
	// Long texts (a whole session) are stored and deduplicated too.
	long := strings.Repeat("the relay test of session four measured a long oscillation; ", 200)
	l1 := add(t, s, "d", long)
	if r, err := s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "d", Text: strings.ToUpper(long)}}); err != nil || !r.Merged || r.Fact.ID != l1.ID {
		t.Errorf("long duplicate: %+v, %v", r, err)
	}
	// Another namespace is another scope.
	if g := add(t, s, "e", "Use ode15s for stiff problems."); g.ID == f.ID {
		t.Error("merged across namespaces")
	}
	// An update that would duplicate another active fact is refused.
	g := add(t, s, "d", "something else")
	if _, err := s.UpdateFact(ctx, &memory.UpdateFactParams{ID: g.ID, Text: "use ode15s for stiff problems!"}); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("update into a duplicate: %v; want ErrConflict", err)
	}
	if e, _ := s.Get(ctx, &memory.GetParams{ID: g.ID}); e.Fact.Text != "something else" {
		t.Errorf("refused update changed the fact: %q", e.Fact.Text)
	}
}

func testSkills(t *testing.T, s memory.Store) {
	ctx := t.Context()
	in := &memory.Skill{Namespace: "user/skills", Name: "tune-pid", Description: "Tune a PID loop by relay feedback.",
		License: "MIT", AllowedTools: "octave", Metadata: map[string]string{"author": "a"}, Body: "# Tune\n1. relay test\n", Tags: []string{"control"},
		Provenance: memory.Provenance{Operations: []string{"op-3"}}}
	r, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: in, Actor: "sync"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Created || !r.Changed || r.Skill.Version != 1 || r.Skill.ID == "" || r.Skill.Status != memory.StatusActive {
		t.Fatalf("new skill: %+v", r)
	}
	r2, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: in, Actor: "sync"})
	if err != nil || r2.Changed || r2.Created || r2.Skill.Version != 1 {
		t.Errorf("identical put: %+v, %v", r2, err)
	}
	for _, ok := range []bool{true, true, false} {
		if _, err := s.Use(ctx, &memory.UseParams{ID: r.Skill.ID, Success: ok, Actor: "agent:z"}); err != nil {
			t.Fatal(err)
		}
	}
	changed := *in
	changed.Body = "# Tune\n1. relay test\n2. Ziegler-Nichols\n"
	r3, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: &changed, Actor: "sync"})
	if err != nil {
		t.Fatal(err)
	}
	if !r3.Changed || r3.Skill.Version != 2 || r3.Skill.ID != r.Skill.ID || r3.Skill.Uses != 3 || r3.Skill.Successes != 2 || r3.Skill.Failures != 1 {
		t.Errorf("new version: %+v", r3.Skill)
	}
	got, err := s.Get(ctx, &memory.GetParams{Namespace: "user/skills", Name: "tune-pid"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r3.Skill, got.Skill); diff != "" {
		t.Errorf("Get by name (-put +got):\n%s", diff)
	}
	if _, err := s.Get(ctx, &memory.GetParams{Namespace: "user/skills", Name: "nope"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown skill: %v", err)
	}
	h := history(t, s, &memory.HistoryParams{EntryID: r.Skill.ID})
	if got := events(h); !slices.Equal(got, []memory.Event{memory.EventAdd, memory.EventUse, memory.EventUse, memory.EventUse, memory.EventVersion}) {
		t.Errorf("skill history %v", got)
	}
	if h[4].Old != in.Body || h[4].New != changed.Body {
		t.Errorf("version change: %+v", h[4])
	}
	nss, _ := s.Namespaces(ctx)
	if len(nss) != 1 || nss[0].Skills != 1 || nss[0].Facts != 0 {
		t.Errorf("namespaces: %+v", nss)
	}
}

func testImport(t *testing.T, s memory.Store) {
	ctx := t.Context()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	facts := []*memory.Fact{
		{ID: "f-1", Namespace: "imp", Text: "one", Kind: memory.KindWarning, Status: memory.StatusActive, Tags: []string{"x"},
			Successes: 3, Confidence: 0.5, ValidFrom: t0, CreatedAt: t0, UpdatedAt: t0.Add(time.Hour)},
		{ID: "f-2", Namespace: "imp", Text: "two", Kind: memory.KindObservation, Status: memory.StatusInvalidated, Reason: "no",
			ValidFrom: t0, InvalidAt: t0.Add(time.Minute), CreatedAt: t0, UpdatedAt: t0},
	}
	skills := []*memory.Skill{{ID: "s-1", Namespace: "imp/skills", Name: "a-skill", Description: "d", Body: "b", Version: 4, Uses: 9,
		Status: memory.StatusActive, CreatedAt: t0, UpdatedAt: t0}}
	res, err := s.Import(ctx, &memory.ImportParams{Facts: facts, Skills: skills, Actor: "import"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Facts != 2 || res.Skills != 1 {
		t.Errorf("import result %+v", res)
	}
	for _, f := range facts {
		got, err := s.Get(ctx, &memory.GetParams{ID: f.ID})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(f, got.Fact); diff != "" {
			t.Errorf("imported fact (-want +got):\n%s", diff)
		}
	}
	got, _ := s.Get(ctx, &memory.GetParams{ID: "s-1"})
	if diff := cmp.Diff(skills[0], got.Skill); diff != "" {
		t.Errorf("imported skill (-want +got):\n%s", diff)
	}
	// Re-importing overwrites in place.
	if _, err := s.Import(ctx, &memory.ImportParams{Facts: facts, Skills: skills}); err != nil {
		t.Errorf("re-import: %v", err)
	}
	// All or nothing: one bad entry among good ones writes nothing.
	before := search(t, s, &memory.Query{Status: []memory.Status{memory.StatusActive, memory.StatusInvalidated}})
	for name, p := range map[string]*memory.ImportParams{
		"bad kind": {Facts: []*memory.Fact{{ID: "n-1", Namespace: "imp", Text: "good", Kind: memory.KindObservation, Status: memory.StatusActive},
			{ID: "n-2", Namespace: "imp", Text: "bad", Kind: "nope", Status: memory.StatusActive}}},
		"duplicate of a stored fact": {Facts: []*memory.Fact{{ID: "n-3", Namespace: "imp", Text: "good 3", Kind: memory.KindObservation, Status: memory.StatusActive},
			{ID: "n-4", Namespace: "imp", Text: "ONE", Kind: memory.KindObservation, Status: memory.StatusActive}}},
		"bad skill": {Facts: []*memory.Fact{{ID: "n-5", Namespace: "imp", Text: "good 5", Kind: memory.KindObservation, Status: memory.StatusActive}},
			Skills: []*memory.Skill{{ID: "s-9", Namespace: "imp", Name: "Bad", Description: "d"}}},
		"no id": {Facts: []*memory.Fact{{Namespace: "imp", Text: "no id", Kind: memory.KindObservation, Status: memory.StatusActive}}},
	} {
		if _, err := s.Import(ctx, p); err == nil {
			t.Errorf("%s: import succeeded", name)
		}
	}
	after := search(t, s, &memory.Query{Status: []memory.Status{memory.StatusActive, memory.StatusInvalidated}})
	if diff := cmp.Diff(texts(before), texts(after)); diff != "" {
		t.Errorf("a failed import wrote something (-before +after):\n%s", diff)
	}
}

func testConcurrent(t *testing.T, s memory.Store) {
	const workers, writes = 10, 1000
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range writes {
				_, err := s.AddFact(t.Context(), &memory.AddFactParams{Fact: &memory.Fact{Namespace: "conc", Text: fmt.Sprintf("worker %d wrote fact number %d", w, i)}, Actor: "w"})
				if err != nil {
					errs <- fmt.Errorf("worker %d write %d: %w", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	res := search(t, s, &memory.Query{Namespaces: []string{"conc"}})
	if len(res) != workers*writes {
		t.Errorf("%d facts after %d writes", len(res), workers*writes)
	}
	seen := map[string]bool{}
	for _, r := range res {
		seen[r.Fact.Text] = true
	}
	if len(seen) != workers*writes {
		t.Errorf("%d distinct texts", len(seen))
	}
	if h := history(t, s, &memory.HistoryParams{Namespace: "conc"}); len(h) != workers*writes {
		t.Errorf("%d history entries", len(h))
	}
	if res := search(t, s, &memory.Query{Text: "worker 7 fact number 123"}); len(res) == 0 || res[0].Fact.Text != "worker 7 wrote fact number 123" {
		t.Errorf("search after concurrent writes: %v", texts(res))
	}
}
