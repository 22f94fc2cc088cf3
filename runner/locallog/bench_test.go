package locallog_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner/locallog"
)

// BenchmarkAppend is the cost of one event of a labmate run in the log while labmate serve has
// the file open too (another Store, as another process has: its own connections and lock),
// with the run's stream followed by the server's Tail: while the server writes nothing
// (server=idle), and while it streams a cell's output as fast as it can (server=streaming: the
// two take turns for the write lock). It reports the p99 latency of Append and of the event
// reaching the server's Tail, and how many lines the server appended meanwhile, a second;
// ns/op is the mean Append.
func BenchmarkAppend(b *testing.B) {
	for _, streaming := range []bool{false, true} {
		name := "server=idle"
		if streaming {
			name = "server=streaming"
		}
		b.Run(name, func(b *testing.B) { benchAppend(b, streaming) })
	}
}

func benchAppend(b *testing.B, streaming bool) {
	ctx := context.Background()
	data := b.TempDir()
	srv, err := locallog.Open(data, "serve")
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
			if m.SessionID == "r" {
				seen <- time.Since(time.Unix(0, int64(m.Timestamp*1e9)))
			}
		}
	}()
	served := make(chan struct{})
	var lines atomic.Int64 // the server's lines appended while the run appends
	if streaming {
		for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart} {
			m, _ := protocol.NewMessage(typ, "s", "op", protocol.Request{Kind: "exec"})
			if _, err := srv.Append(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		go func() {
			defer close(served)
			for i := 0; tctx.Err() == nil; i++ {
				m, _ := protocol.NewMessage(protocol.TypeProgress, "s", "op", &protocol.Progress{
					Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: fmt.Sprint("line ", i)}})
				if _, err := srv.Append(ctx, m); err != nil {
					return
				}
				lines.Add(1)
			}
		}()
	} else {
		close(served)
	}
	st, err := locallog.Open(data, "run")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	began := time.Now()
	lines.Store(0)
	for i := range b.N {
		m, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"type": "progress", "seq": i + 1})
		start := time.Now()
		if _, err := st.Append(ctx, m); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	rate := float64(lines.Load()) / time.Since(began).Seconds()
	var tail []time.Duration
	for len(tail) < b.N {
		select {
		case d := <-seen:
			tail = append(tail, d)
		case <-time.After(5 * time.Second):
			b.Fatalf("the server's tail saw %d of %d events", len(tail), b.N)
		}
	}
	stop()
	<-served
	slices.Sort(lat)
	slices.Sort(tail)
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-append-µs")
	b.ReportMetric(float64(tail[len(tail)*99/100])/1e6, "p99-seen-ms")
	if streaming {
		b.ReportMetric(rate, "server-lines/s")
	}
}
