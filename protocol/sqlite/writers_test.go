package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// A Store opens beside one that appends as fast as it can (labmate exec started while the
// server streams a cell's output): its schema check waits for the writers' turn like an
// append, rather than for SQLite's busy handler, which never wins the write lock.
func TestOpenBesideBusyWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	busy := open(t, path)
	defer busy.Close()
	stop := busyWriter(t, busy)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("the busy writer: %v", err)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	s, err := sqlite.OpenAs(path, "exec")
	if err != nil {
		t.Fatalf("opening beside a busy writer, after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	defer s.Close()
	m, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"type": "progress"})
	if _, err := s.Append(ctx, m); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("opening and appending beside a busy writer took %v", d)
	}
}

// A writer stopped while it holds the writers' turn (Ctrl-Z on a labmate exec that prints all
// the time: it holds the turn most of the time) keeps it until it is continued: another
// process opens and appends beside it all the same, after a while, rather than waiting for
// ever (and not even SIGTERM ended a labmate exec waiting there).
func TestWriterBesideStoppedTurnHolder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	s := open(t, path)
	s.Close()
	// The turn held as a stopped process holds it: its flock, and nothing else.
	stopped, err := os.OpenFile(filepath.Join(path+".writers", "turn"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stopped.Close()
	if err := syscall.Flock(int(stopped.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		s, err := sqlite.OpenAs(path, "exec")
		if err != nil {
			done <- err
			return
		}
		defer s.Close()
		for i := range 3 {
			m, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"type": "progress", "i": i})
			if _, err := s.Append(ctx, m); err != nil {
				done <- err
				return
			}
			if err := s.Sync(ctx); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("opening and appending beside a stopped holder of the turn: %v", err)
		}
		d := time.Since(start)
		t.Logf("opened and appended 3 transactions in %v", d.Round(time.Millisecond))
		if d > 5*time.Second {
			t.Errorf("opening and appending 3 transactions took %v: each waited for the stopped holder", d.Round(time.Millisecond))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("opening and appending beside a stopped holder of the turn waits for ever")
	}
}

// busyWriter makes s append the lines of an exec operation (session s, operation op) as fast as
// it can until stop is called, which returns the appends' error.
func busyWriter(t *testing.T, s *sqlite.Store) (stop func() error) {
	t.Helper()
	ctx := context.Background()
	for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart} {
		m, _ := protocol.NewMessage(typ, "s", "op", protocol.Request{Kind: "exec"})
		if _, err := s.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var stopped atomic.Bool
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 0; !stopped.Load() && err == nil; i++ {
			m, _ := protocol.NewMessage(protocol.TypeProgress, "s", "op", &protocol.Progress{
				Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: fmt.Sprint("line ", i)}})
			_, err = s.Append(ctx, m)
		}
		done <- err
	}()
	return func() error {
		stopped.Store(true)
		return <-done
	}
}
