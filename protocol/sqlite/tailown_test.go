package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
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
