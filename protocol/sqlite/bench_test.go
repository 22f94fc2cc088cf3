package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/labmate/labmate/protocol"
)

// progress is a typical operation_progress payload: one stdout line, about 200 bytes.
var progress = func() json.RawMessage {
	b, err := json.Marshal(protocol.Progress{Observation: &protocol.Observation{
		Kind: protocol.ObsStdout,
		Line: "epoch 12 step 3400 loss=0.01234 " + strings.Repeat("x", 100),
	}})
	if err != nil {
		panic(err)
	}
	return b
}()

// startOps starts operations ops in each session and returns once they are committed.
func startOps(b *testing.B, s protocol.Store, sessions, ops []string) {
	ctx := context.Background()
	for _, session := range sessions {
		for _, op := range ops {
			for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart} {
				m := &protocol.EnhancedMessage{Type: typ, SessionID: session, OperationID: op, Payload: json.RawMessage(`{"kind":"exec"}`)}
				if _, err := s.Append(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if _, err := s.Operations(ctx, sessions[0]); err != nil { // commits what is queued
		b.Fatal(err)
	}
}

// BenchmarkAppend appends progress messages to 1 or 8 sessions at once; each session ends with a
// terminal message, so everything is committed when the clock stops.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 8, 200} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			s := open(b, filepath.Join(b.TempDir(), "store.db"))
			defer s.Close()
			sessions := make([]string, n)
			for i := range sessions {
				sessions[i] = fmt.Sprint("s", i)
			}
			startOps(b, s, sessions, []string{"a"})
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuTime(b)
			b.ResetTimer()
			var wg sync.WaitGroup
			for i, session := range sessions {
				wg.Go(func() {
					for range (b.N + n - 1 - i) / n {
						m := &protocol.EnhancedMessage{Type: protocol.TypeProgress, SessionID: session, OperationID: "a", Payload: progress}
						if _, err := s.Append(ctx, m); err != nil {
							b.Error(err)
							return
						}
					}
					m := &protocol.EnhancedMessage{Type: protocol.TypeComplete, SessionID: session, OperationID: "a", Payload: json.RawMessage(`{}`)}
					if _, err := s.Append(ctx, m); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/msg")
		})
	}
}

// BenchmarkAppendTerminal is the cost of one terminal append, which waits for its commit.
func BenchmarkAppendTerminal(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "store.db"))
	defer s.Close()
	ops := make([]string, b.N)
	for i := range ops {
		ops[i] = fmt.Sprint("op", i)
	}
	startOps(b, s, []string{"s1"}, ops)
	ctx := context.Background()
	b.ResetTimer()
	for _, op := range ops {
		m := &protocol.EnhancedMessage{Type: protocol.TypeComplete, SessionID: "s1", OperationID: op, Payload: json.RawMessage(`{"result":{"status":"ok"}}`)}
		if _, err := s.Append(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime is the CPU time the process has used so far, all threads, in nanoseconds: unlike
// ns/op it does not depend on what else the machine runs.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
