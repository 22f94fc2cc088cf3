package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Beside a writer that is never idle (a cell printing without pause), the WAL stays bounded: a
// passive checkpoint copies it, but SQLite starts it over only when a write transaction begins
// with every frame copied, which never happens while frames keep coming — it grew without end,
// past the size of the file itself.
func TestWALBoundedBesideNeverIdleWriter(t *testing.T) {
	const limit, written = 1 << 20, 24 << 20
	defer sqlite.SetWALLimit(limit)()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	busy := open(t, path)
	defer busy.Close()
	reader := open(t, path) // another process following the log and reading it
	defer reader.Close()
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var tailed atomic.Int64 // the last seq the reader's Tail saw, gap-free
	tailErr := make(chan error, 1)
	go func() {
		for m, err := range reader.Tail(tctx) {
			if err != nil {
				tailErr <- err
				return
			}
			if n := tailed.Load(); n > 0 && m.Seq != n+1 { // it may begin after the first appends
				tailErr <- fmt.Errorf("Tail: seq %d after %d", m.Seq, tailed.Load())
				return
			}
			tailed.Store(m.Seq)
		}
	}()
	go func() { // and one reading it all the time
		for tctx.Err() == nil {
			reader.Sessions(tctx)
			for range reader.After(tctx, "s", 0) {
				break
			}
		}
	}()
	stop := busyWriter(t, busy)
	var peak, size int64
	for deadline := time.Now().Add(15 * time.Second); size < written && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if fi, err := os.Stat(path + "-wal"); err == nil {
			peak = max(peak, fi.Size())
		}
		if fi, err := os.Stat(path); err == nil {
			size = fi.Size()
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("the busy writer: %v", err)
	}
	last, err := busy.Append(ctx, mustMessage(protocol.TypeComplete, "s", "op", protocol.Complete{}))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); tailed.Load() < last.Seq; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-tailErr:
			t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reader's Tail saw up to seq %d of %d", tailed.Load(), last.Seq)
		}
	}
	if size < written {
		t.Logf("the writer wrote only %d MiB", size>>20)
	}
	if peak > 8*limit {
		t.Errorf("the WAL grew to %d MiB (its limit %d MiB) while %d MiB were written", peak>>20, limit>>20, size>>20)
	}
}

func mustMessage(typ protocol.Type, session, op string, payload any) *protocol.EnhancedMessage {
	m, err := protocol.NewMessage(typ, session, op, payload)
	if err != nil {
		panic(err)
	}
	return m
}
