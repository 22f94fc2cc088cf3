package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Tail yields what other Stores append, never its own Store's messages.
func TestTailSkipsOwn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	s, other := open(t, path), open(t, path)
	defer s.Close()
	defer other.Close()
	tctx, stop := context.WithCancel(ctx)
	got := make(chan int)
	go func() {
		n := 0
		for _, err := range s.Tail(tctx) {
			if err != nil {
				break
			}
			n++
		}
		got <- n
	}()
	time.Sleep(2 * sqlite.TailPoll)
	for i := range 2000 {
		st := s
		if i%10 == 0 {
			st = other
		}
		m, _ := protocol.NewMessage(protocol.TypeRunEvent, fmt.Sprint("s", i%7), "r", map[string]any{"i": i})
		if _, err := st.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	s.Sync(ctx)
	other.Sync(ctx)
	time.Sleep(3 * sqlite.TailPoll)
	stop()
	if n := <-got; n != 200 {
		t.Errorf("the tail yielded %d messages, want the other Store's 200", n)
	}
}

// A read of Tail's that fails is tried again from the message it stopped at: every message
// is yielded once, in order, across failures (an interrupt committed meanwhile is not lost).
func TestTailRetriesFailedReads(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	s, other := open(t, path), open(t, path)
	defer s.Close()
	defer other.Close()
	var reads atomic.Int64
	defer sqlite.SetReadFault(func() error {
		if reads.Add(1)%3 == 2 {
			return errors.New("disk I/O error (injected)")
		}
		return nil
	})()
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	got := make(chan []int, 1)
	go func() {
		var seen []int
		for m, err := range s.Tail(tctx) {
			if err != nil {
				t.Errorf("the tail ended: %v", err)
				break
			}
			var p struct{ I int }
			json.Unmarshal(m.Payload, &p)
			if seen = append(seen, p.I); len(seen) == 3000 {
				break
			}
		}
		got <- seen
	}()
	time.Sleep(2 * sqlite.TailPoll)
	for i := range 3000 {
		m, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"i": i})
		if _, err := other.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			other.Sync(ctx) // commits of several read chunks each
		}
	}
	var seen []int
	select {
	case seen = <-got:
	case <-time.After(20 * time.Second):
		stop()
		seen = <-got
	}
	for i, v := range seen {
		if v != i {
			t.Fatalf("message %d of the tail is %d: want every message once, in order (got %d)", i, v, len(seen))
		}
	}
	if len(seen) != 3000 || reads.Load() < 3 {
		t.Errorf("the tail yielded %d of 3000 messages in %d reads", len(seen), reads.Load())
	}
}
