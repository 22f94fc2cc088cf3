package sqlite

import (
	"context"
	"testing"

	"github.com/labmate/labmate/memory/memorytest"
)

// BenchmarkImport is the batched ingest rate (Import, 1,000 facts per transaction).
func BenchmarkImport(b *testing.B) {
	s := open(b, nil)
	defer s.Close()
	b.ResetTimer()
	rate, err := memorytest.Load(context.Background(), s, 1000*max(1, b.N/1000), 1000)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rate, "facts/s")
}
