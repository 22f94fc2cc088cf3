package locallog_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner/locallog"
)

// BenchmarkAppend is the cost of one event of a labmate run in the log while labmate serve has
// the file open too (another Store, as another process has: its own connections and lock),
// with the run's stream followed by the server's Tail. It reports the p99 latency of Append and
// of the event reaching the server's Tail.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	data := b.TempDir()
	srv, err := locallog.OpenStore(data, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	seen := make(chan time.Duration, 1<<20)
	go func() {
		for m, err := range srv.Tail(tctx) {
			if err != nil {
				return
			}
			seen <- time.Since(time.Unix(0, int64(m.Timestamp*1e9)))
		}
	}()
	st, err := locallog.Open(data, "run")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		m, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"type": "progress", "seq": i + 1})
		start := time.Now()
		if _, err := st.Append(ctx, m); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	var tail []time.Duration
	for len(tail) < b.N {
		select {
		case d := <-seen:
			tail = append(tail, d)
		case <-time.After(5 * time.Second):
			b.Fatalf("the server's tail saw %d of %d events", len(tail), b.N)
		}
	}
	slices.Sort(lat)
	slices.Sort(tail)
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-append-µs")
	b.ReportMetric(float64(tail[len(tail)*99/100])/1e6, "p99-seen-ms")
}
