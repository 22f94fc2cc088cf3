package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
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
	for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart} {
		m, _ := protocol.NewMessage(typ, "s", "op", protocol.Request{Kind: "exec"})
		if _, err := busy.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	done := make(chan error)
	go func() {
		var err error
		for i := 0; !stop.Load() && err == nil; i++ {
			m, _ := protocol.NewMessage(protocol.TypeProgress, "s", "op", &protocol.Progress{
				Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: fmt.Sprint("line ", i)}})
			_, err = busy.Append(ctx, m)
		}
		done <- err
	}()
	defer func() {
		stop.Store(true)
		if err := <-done; err != nil {
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
