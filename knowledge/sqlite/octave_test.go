package sqlite_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/harvest"
	"github.com/labmate/labmate/knowledge/sqlite"
)

var octaveIndex struct {
	once sync.Once
	ix   *sqlite.Index
	dur  time.Duration
	docs int
	err  error
}

// octave indexes the installed Octave's help once per test binary.
func octave(tb testing.TB) *sqlite.Index {
	tb.Helper()
	o := &octaveIndex
	o.once.Do(func() {
		dir, err := os.MkdirTemp("", "knowledge-octave-")
		if err != nil {
			o.err = err
			return
		}
		start := time.Now()
		docs, err := harvest.Octave(context.Background(), nil)
		if err != nil {
			o.err = err
			return
		}
		o.ix, o.err = sqlite.Open(filepath.Join(dir, "docs.db"), nil)
		if o.err != nil {
			return
		}
		o.err = o.ix.Add(context.Background(), docs...)
		o.dur, o.docs = time.Since(start), len(docs)
	})
	if o.err != nil {
		tb.Fatal(o.err)
	}
	return o.ix
}

type question struct {
	line   int
	text   string
	expect []string
}

func questions(t *testing.T) []question {
	f, err := os.Open("testdata/octave-questions.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []question
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			continue
		}
		q, fns, ok := strings.Cut(l, "\t")
		if !ok {
			t.Fatalf("testdata/octave-questions.tsv:%d: no tab between question and functions", n)
		}
		qs = append(qs, question{n, q, strings.Split(fns, ",")})
	}
	return qs
}

// TestOctaveRetrieval is the retrieval-quality must-hold: task-phrased questions put a right
// function in the top 3 of BM25 alone for at least 90% of them.
func TestOctaveRetrieval(t *testing.T) {
	ix := octave(t)
	qs := questions(t)
	if len(qs) < 30 {
		t.Fatalf("%d questions; the must-hold needs at least 30", len(qs))
	}
	ctx := context.Background()
	var top3 int
	var mrr float64
	for _, q := range qs {
		hits, err := ix.Search(ctx, &knowledge.Query{Text: q.text, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		rank := 0
		var got []string
		for i, h := range hits {
			got = append(got, h.Name)
			for _, e := range q.expect {
				if h.Name == e && rank == 0 {
					rank = i + 1
				}
			}
		}
		if rank > 0 {
			mrr += 1 / float64(rank)
		}
		if rank > 0 && rank <= 3 {
			top3++
		} else {
			t.Logf("miss (rank %d) line %d %q want %v, got %v", rank, q.line, q.text, q.expect, got[:min(5, len(got))])
		}
	}
	rate := float64(top3) / float64(len(qs))
	mrr /= float64(len(qs))
	t.Logf("%d Octave functions indexed in %s; %d questions: top-3 hit rate %.1f%%, MRR@10 %.3f",
		octaveIndex.docs, octaveIndex.dur.Round(time.Millisecond), len(qs), 100*rate, mrr)
	if rate < 0.9 {
		t.Errorf("top-3 hit rate %.1f%% < 90%%", 100*rate)
	}
}

// BenchmarkOctaveSearch reports search latency percentiles on the whole Octave help index.
func BenchmarkOctaveSearch(b *testing.B) {
	ix := octave(b)
	var qs []string
	f, _ := os.ReadFile("testdata/octave-questions.tsv")
	for _, l := range strings.Split(string(f), "\n") {
		if q, _, ok := strings.Cut(l, "\t"); ok && !strings.HasPrefix(l, "#") {
			qs = append(qs, q)
		}
	}
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s := time.Now()
		if _, err := ix.Search(ctx, &knowledge.Query{Text: qs[i%len(qs)], Limit: 10}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(s))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(octaveIndex.dur.Seconds(), "index-s")
	b.ReportMetric(float64(octaveIndex.docs), "functions")
}
