package postgres

import (
	"context"
	"testing"
	"time"

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
// latency over loopback and the database's size. Run with -benchtime 1x.
func Benchmark100k(b *testing.B) {
	ctx := context.Background()
	s := open(b, nil)
	defer s.Close()
	rate, err := memorytest.Load(ctx, s, 100_000, 1000)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i, f := range memorytest.Corpus(2000, 99) {
		f.ID = ""
		f.Text += " extra"
		if _, err := s.AddFact(ctx, &memory.AddFactParams{Fact: f}); err != nil {
			b.Fatalf("fact %d: %v", i, err)
		}
	}
	single := 2000 / time.Since(start).Seconds()
	if _, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE"); err != nil { // what autovacuum does for a live server
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		raw, best, err := memorytest.Latencies(ctx, s, memorytest.Queries(1000, 3))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(raw[0].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(raw[1].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(best[0].Microseconds())/1000, "best-of-3-p50-ms")
		b.ReportMetric(float64(best[1].Microseconds())/1000, "best-of-3-p99-ms")
	}
	b.StopTimer()
	var size int64
	if err := s.DB().QueryRowContext(ctx, "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'").Scan(&size); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rate, "import-facts/s")
	b.ReportMetric(single, "addfact-facts/s")
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}
