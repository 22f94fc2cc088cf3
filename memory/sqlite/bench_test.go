package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/memorytest"
)

// BenchmarkAddFact is the ingest rate of single facts, one transaction each.
func BenchmarkAddFact(b *testing.B) {
	s := open(b, nil)
	defer s.Close()
	memorytest.BenchAddFact(b, s)
}

// Benchmark100k loads 100,000 facts (Import, 1,000 per transaction), then measures search
// latency and the file's size. Run with -benchtime 1x.
func Benchmark100k(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "memory.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	memorytest.Bench100k(b, s, nil, func() (int64, error) {
		s.DB().Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		var size int64
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if fi, err := os.Stat(path + suffix); err == nil {
				size += fi.Size()
			}
		}
		return size, nil
	})
}

// Benchmark100kGraph is search latency at 100,000 facts that mention some 40 entities, every
// query naming one (expanded by the entity graph). Run with -benchtime 1x.
func Benchmark100kGraph(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "memory.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	memorytest.Bench100kGraph(b, s, nil)
}

// BenchmarkLoCoMo reports session-level recall on LoCoMo with BM25. Run with -benchtime 1x.
func BenchmarkLoCoMo(b *testing.B) {
	path := memorytest.SharedFile("benchmarks/locomo/locomo10.zip")
	if path == "" {
		b.Skip("shared/benchmarks/locomo/locomo10.zip not found")
	}
	for range b.N {
		dir := b.TempDir()
		n := 0
		res, err := memorytest.LoCoMo(context.Background(), path, func() (memory.Store, error) {
			n++
			return Open(context.Background(), filepath.Join(dir, fmt.Sprintf("m%d.db", n)), nil)
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Questions), "questions")
		b.ReportMetric(100*res.SessionAny5, "sess-R@5-%")
		b.ReportMetric(100*res.SessionAny10, "sess-R@10-%")
		b.ReportMetric(100*res.SessionAll10, "sess-Rall@10-%")
		b.ReportMetric(100*res.TurnAny5, "turn→sess-R@5-%")
		b.ReportMetric(100*res.TurnAny10, "turn→sess-R@10-%")
		b.ReportMetric(100*res.TurnAll10, "turn→sess-Rall@10-%")
	}
}

// BenchmarkLongQueries is recall during a SciBench eval: whole problems as queries over a store
// written one fact at a time.
func BenchmarkLongQueries(b *testing.B) {
	s := open(b, nil)
	defer s.Close()
	memorytest.BenchLongQueries(b, s)
}
