package memorytest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

// SciBenchProblems reads the problem texts of the SciBench textbook set under shared/ (in file
// order, file by file); nil when it is not there.
func SciBenchProblems() ([]string, error) {
	dir := SharedFile("benchmarks/scibench")
	if dir == "" {
		return nil, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_sol.json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var items []struct {
			Problem string `json:"problem_text"`
		}
		if err := json.Unmarshal(b, &items); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, it := range items {
			out = append(out, it.Problem)
		}
	}
	return out, nil
}

// LongQuery is one query of LongQueries: the text, and the entry it must find first.
type LongQuery struct {
	Text   string
	Target *memory.Fact
}

// LongQueries builds a retrieval test from SciBench's problem texts: every third problem is a
// query (as the agent recalls for a step: the step's words, then the whole problem), the others
// are stored as distractors (observations, with every fifth a warning, the kind the queries
// ask for), and for each query a short warning is stored that shares with it only its ten
// rarest words (the three rarest in no other problem) and words every problem uses. Queries
// without three such words are left out.
func LongQueries(problems []string) (distractors []*memory.Fact, queries []LongQuery) {
	// Counted by a word's first five letters: a crude stem, so that no distractor holds another
	// form of a target's word either.
	df := map[string]int{}
	for _, p := range problems {
		seen := map[string]bool{}
		for _, w := range uniqWords(p) {
			if k := prefix(w); !seen[k] {
				seen[k] = true
				df[k]++
			}
		}
	}
	for i, p := range problems {
		if i%3 != 0 {
			kind := memory.KindObservation
			if i%5 == 0 {
				kind = memory.KindWarning
			}
			distractors = append(distractors, &memory.Fact{ID: fmt.Sprintf("d%03d", i), Namespace: "lab", Kind: kind, Text: p})
			continue
		}
		// The query's ten rarest words, one form of a stem each; the three rarest in no
		// other problem.
		var rare []string
		seen := map[string]bool{}
		for _, w := range uniqWords(p) {
			if k := prefix(w); len(w) >= 4 && strings.Trim(w, "0123456789") != "" && !seen[k] {
				seen[k] = true
				rare = append(rare, w)
			}
		}
		slices.SortStableFunc(rare, func(a, b string) int { return df[prefix(a)] - df[prefix(b)] })
		if len(rare) < 10 || df[prefix(rare[2])] > 1 {
			continue
		}
		rare = rare[:10]
		target := &memory.Fact{ID: fmt.Sprintf("t%03d", i), Namespace: "lab", Kind: memory.KindWarning,
			Text: "Calculate the " + strings.Join(rare, " and the ") + " with the value given in the problem; check the units first."}
		queries = append(queries, LongQuery{
			Text:   "compute. compute the quantity asked for and print it. the value is printed. " + p,
			Target: target,
		})
	}
	return distractors, queries
}

func prefix(w string) string { return string([]rune(w)[:min(5, len([]rune(w)))]) }

func uniqWords(text string) []string {
	ws := strings.Fields(statement.Words(text))
	slices.Sort(ws)
	return slices.Compact(ws)
}

// RunLongQueries tests that a long query (a whole SciBench problem, a hundred words and more,
// most of them in many entries) still ranks first the entry that shares its rare, distinctive
// words, among hundreds of long distractors, with and without a kind filter (see LongQueries).
// open must return a new, empty store; maintain, when not nil, is run once the entries are
// written (what the backend does for a live store, such as ANALYZE). A backend whose ranking is
// known to miss some states how many of the searches (two per query) may: a bound that keeps
// it from getting worse. It is skipped without shared/benchmarks/scibench.
func RunLongQueries(t *testing.T, open func(t *testing.T) memory.Store, maintain func(s memory.Store) error, maxMissed int) {
	s := open(t)
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	problems, err := SciBenchProblems()
	if err != nil {
		t.Fatal(err)
	}
	if problems == nil {
		t.Skip("no shared/benchmarks/scibench")
	}
	distractors, queries := LongQueries(problems)
	if len(queries) < 30 || len(distractors) < 300 {
		t.Fatalf("%d queries, %d distractors: the SciBench set is smaller than expected", len(queries), len(distractors))
	}
	facts := slices.Clone(distractors)
	for _, q := range queries {
		facts = append(facts, q.Target)
	}
	now := time.Now().UTC()
	for _, f := range facts {
		f.Status, f.CreatedAt, f.UpdatedAt, f.ValidFrom = memory.StatusActive, now, now, now
	}
	if _, err := s.Import(t.Context(), &memory.ImportParams{Facts: facts, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	if maintain != nil {
		if err := maintain(s); err != nil {
			t.Fatal(err)
		}
	}
	missed := 0
	h := fnv.New64a() // of every ranking, to compare two versions of a store with -v
	for _, q := range queries {
		for _, kinds := range [][]memory.Kind{{memory.KindWarning, memory.KindBoundary}, nil} {
			res := search(t, s, &memory.Query{Text: q.Text, Kinds: kinds, Limit: 12})
			for _, r := range res {
				fmt.Fprintf(h, "%s %.6g\n", r.Fact.ID, r.Score)
			}
			if len(res) == 0 || res[0].Fact == nil || res[0].Fact.ID != q.Target.ID {
				missed++
				t.Logf("query %.60q… (kinds %v): first %v; want %q", q.Text[78:], kinds, firstText(res), q.Target.Text)
			}
		}
	}
	t.Logf("%d long queries over %d entries, %d searches missed; rankings %x", len(queries), len(facts), missed, h.Sum64())
	if missed > maxMissed {
		t.Errorf("%d of %d searches ranked a distractor first; want at most %d", missed, 2*len(queries), maxMissed)
	}
}

func firstText(res []*memory.Result) string {
	if len(res) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%.80q", texts(res[:1])[0])
}

// BenchLongQueries is the cost of recall during an eval of SciBench: the store holds what the
// agent writes, one fact per transaction (a problem's head, as agent/learn stores an accepted
// step), and every search is a whole problem text under a kind filter, as agent/learn's Recall
// makes them. It reports searches per second.
func BenchLongQueries(b *testing.B, s memory.Store) {
	problems, err := SciBenchProblems()
	if err != nil {
		b.Fatal(err)
	}
	if problems == nil {
		b.Skip("no shared/benchmarks/scibench")
	}
	ctx := b.Context()
	for i, p := range problems[:min(len(problems), 300)] {
		kind := memory.KindObservation
		if i%4 == 0 {
			kind = memory.KindWarning
		}
		text := string([]rune(p)[:min(200, len([]rune(p)))]) + " — compute: computed"
		if _, err := s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "lab", Kind: kind, Text: text}, Actor: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	kinds := [][]memory.Kind{{memory.KindWarning, memory.KindBoundary}, {memory.KindReference}, {memory.KindObservation, memory.KindParameter}, {memory.KindSkill}}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		q := "compute. compute the quantity asked for and print it. the value is printed. " + problems[(7*n)%len(problems)]
		if _, err := collect(s.Search(ctx, &memory.Query{Text: q, Kinds: kinds[n%len(kinds)], Limit: 12})); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "searches/s")
}
