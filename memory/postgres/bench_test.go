package postgres

import (
	"context"
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
// latency over loopback and the database's size. Run with -benchtime 1x.
func Benchmark100k(b *testing.B) {
	ctx := context.Background()
	s := open(b, nil)
	defer s.Close()
	maintain := func() error {
		_, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE") // what autovacuum does for a live server
		return err
	}
	memorytest.Bench100k(b, s, maintain, func() (int64, error) {
		var size int64
		err := s.DB().QueryRowContext(ctx, "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'").Scan(&size)
		return size, err
	})
}

// Benchmark100kGraph is search latency at 100,000 facts that mention some 40 entities, every
// query naming one (expanded by the entity graph), over loopback. Run with -benchtime 1x.
func Benchmark100kGraph(b *testing.B) {
	ctx := context.Background()
	s := open(b, nil)
	defer s.Close()
	memorytest.Bench100kGraph(b, s, func() error {
		_, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE")
		return err
	})
}

// BenchmarkLoCoMo reports session-level recall on LoCoMo with PostgreSQL's ts_rank. Run with
// -benchtime 1x.
func BenchmarkLoCoMo(b *testing.B) {
	path := memorytest.SharedFile("benchmarks/locomo/locomo10.zip")
	if path == "" {
		b.Skip("shared/benchmarks/locomo/locomo10.zip not found")
	}
	for range b.N {
		res, err := memorytest.LoCoMo(context.Background(), path, func() (memory.Store, error) { return open(b, nil), nil })
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
