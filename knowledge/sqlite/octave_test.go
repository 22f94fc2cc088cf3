package sqlite_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
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
		docs, err := harvest.Octave(context.Background(), &harvest.OctaveOptions{Sandbox: testutil.KernelOptions(tb).Sandbox.(harvest.Sandbox)})
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

func questions(t *testing.T, file string) []question {
	f, err := os.Open(file)
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
			t.Fatalf("%s:%d: no tab between question and functions", file, n)
		}
		qs = append(qs, question{n, q, strings.Split(fns, ",")})
	}
	return qs
}

// evaluate asks every question of file and returns the top-3 hit rate and the MRR over the top 10.
func evaluate(t *testing.T, ix *sqlite.Index, file string) (n int, top3, mrr float64) {
	qs := questions(t, file)
	for _, q := range qs {
		hits, err := ix.Search(context.Background(), &knowledge.Query{Text: q.text, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		rank := 0
		var got []string
		for i, h := range hits {
			got = append(got, h.Name)
			if rank == 0 && slices.Contains(q.expect, h.Name) {
				rank = i + 1
			}
		}
		if rank > 0 {
			mrr += 1 / float64(rank)
		}
		if rank > 0 && rank <= 3 {
			top3++
		} else {
			t.Logf("miss (rank %d) %s:%d %q want %v, got %v", rank, filepath.Base(file), q.line, q.text, q.expect, got[:min(5, len(got))])
		}
	}
	return len(qs), top3 / float64(len(qs)), mrr / float64(len(qs))
}

// TestOctaveRetrieval is the retrieval-quality must-hold: task-phrased questions put a right
// function in the top 3 of BM25 alone for at least 90% of them. The held-out questions, never
// used to choose the ranking's constants, are reported beside them.
func TestOctaveRetrieval(t *testing.T) {
	if raceEnabled {
		t.Skip("indexing the whole Octave help takes minutes under -race; make test runs this test without it")
	}
	ix := octave(t)
	n, rate, mrr := evaluate(t, ix, "testdata/octave-questions.tsv")
	if n < 30 {
		t.Fatalf("%d questions; the must-hold needs at least 30", n)
	}
	t.Logf("%d Octave functions indexed in %s", octaveIndex.docs, octaveIndex.dur.Round(time.Millisecond))
	t.Logf("questions: %d, top-3 hit rate %.1f%%, MRR@10 %.3f", n, 100*rate, mrr)
	if rate < 0.9 {
		t.Errorf("top-3 hit rate %.1f%% < 90%%", 100*rate)
	}
	hn, hrate, hmrr := evaluate(t, ix, "testdata/octave-heldout.tsv")
	t.Logf("held-out questions: %d, top-3 hit rate %.1f%%, MRR@10 %.3f", hn, 100*hrate, hmrr)
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
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s := time.Now()
		if _, err := ix.Search(ctx, &knowledge.Query{Text: qs[i%len(qs)], Limit: 10}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(s))
	}
	cpu := cpuTime() - cpu0
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	// The machine may be shared: CPU time per search does not count time spent waiting for a core.
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-µs/op")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(octaveIndex.dur.Seconds(), "index-s")
	b.ReportMetric(float64(octaveIndex.docs), "functions")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestOctaveIssue23: the searches of issue 23 put the function in the top 3; the other questions
// of the file, written with them before the ranking changed and never used to change it, are
// reported (top-3 hit rate and MRR@10) to show whether the change generalises.
func TestOctaveIssue23(t *testing.T) {
	if raceEnabled {
		t.Skip("indexing the whole Octave help takes minutes under -race; make test runs this test without it")
	}
	ix := octave(t)
	qs := questions(t, "testdata/octave-issue23.tsv")
	const issue = 3 // the first questions are the issue's searches
	var top3, mrr float64
	for i, q := range qs {
		hits, err := ix.Search(context.Background(), &knowledge.Query{Text: q.text, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		rank := 0
		for j, h := range hits {
			got = append(got, h.Name)
			if rank == 0 && slices.Contains(q.expect, h.Name) {
				rank = j + 1
			}
		}
		t.Logf("rank %d: %q want %v, got %v", rank, q.text, q.expect, got[:min(5, len(got))])
		if i < issue && (rank == 0 || rank > 3) {
			t.Errorf("%q: %v at rank %d (0: not in the top 10), want the top 3; got %v", q.text, q.expect, rank, got[:min(5, len(got))])
		}
		if i >= issue && rank > 0 {
			mrr += 1 / float64(rank)
			if rank <= 3 {
				top3++
			}
		}
	}
	n := float64(len(qs) - issue)
	t.Logf("the issue's other questions: %d, top-3 hit rate %.1f%%, MRR@10 %.3f", len(qs)-issue, 100*top3/n, mrr/n)
}
