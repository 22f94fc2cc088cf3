package operation_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// BenchmarkJobFollow measures log-follow latency: from a line written by a job (it prints its
// own clock) to its observation, judged, in the operation's log; p50 and p99 over every line,
// on job/local (Poll 100 ms) and Slurm (Poll 200 ms), which both read the job's output files.
func BenchmarkJobFollow(b *testing.B) {
	for _, sc := range schedulers {
		b.Run(sc.name, func(b *testing.B) {
			s := sc.new(b)
			const lines = 50
			script := "for i in $(seq " + strconv.Itoa(lines) + "); do echo \"written $(date +%s%N)\"; sleep 0.03; done"
			var mu sync.Mutex
			var lat []time.Duration
			for b.Loop() {
				store := protocol.NewMemStore()
				log := operation.LogFunc(func(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
					out, err := store.Append(ctx, m)
					now := time.Now()
					if err == nil && m.Type == protocol.TypeProgress {
						var p protocol.Progress
						if m.Decode(&p) == nil && p.Observation != nil && p.Observation.Kind == protocol.ObsStdout {
							if ns, ok := strings.CutPrefix(p.Observation.Line, "written "); ok {
								if n, err := strconv.ParseInt(ns, 10, 64); err == nil {
									mu.Lock()
									lat = append(lat, now.Sub(time.Unix(0, n)))
									mu.Unlock()
								}
							}
						}
					}
					return out, err
				})
				spec := &job.Spec{Script: script, Workspace: b.TempDir()}
				for _, err := range operation.RunJob(context.Background(), log, "s", "op", s, operation.JobRequest(spec), nil) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			slices.Sort(lat)
			if len(lat) == 0 {
				b.Fatal("no line observed")
			}
			q := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e6 }
			b.ReportMetric(q(0.5), "p50_ms")
			b.ReportMetric(q(0.99), "p99_ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
