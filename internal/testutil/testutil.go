// Package testutil holds helpers shared by labmate's tests.
package testutil

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/lab/bench/client"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// KernelOptions are kernel options with the best sandbox this machine offers and the lab
// bench's client code as the Library, as labmate starts kernels. The tests need isolation:
// with none available they fail, saying why.
func KernelOptions(t testing.TB) kernel.Options {
	t.Helper()
	mode, err := sandbox.Detect()
	if err != nil {
		t.Fatalf("no sandbox on this machine (install bubblewrap): %v", err)
	}
	sb, err := sandbox.New(mode, nil)
	if err != nil {
		t.Fatalf("sandbox %s: %v", mode, err)
	}
	return kernel.Options{Sandbox: sb, Grace: 2 * time.Second, Library: client.Library}
}

// Replay runs a stream of protocol messages through the operation state machine, a fresh
// protocol.SessionLog per session, and fails t at the first illegal transition, at a message without
// its session or operation, and for every operation or agent run the stream leaves without a
// terminal message. It returns how many operations (not runs) the stream had.
func Replay(t testing.TB, msgs iter.Seq[*protocol.EnhancedMessage]) int {
	t.Helper()
	logs := map[string]*protocol.SessionLog{}
	var streams []*protocol.EnhancedMessage // the first message of each operation and run
	n := 0                                  // operations
	for m := range msgs {
		if m.SessionID == "" {
			t.Fatalf("%s of operation %s has no session", m.Type, m.OperationID)
		}
		l := logs[m.SessionID]
		if l == nil {
			l = protocol.NewSessionLog(m.SessionID)
			logs[m.SessionID] = l
		}
		opens := l.State(m.OperationID) == ""
		if _, err := l.Append(m); err != nil {
			t.Fatalf("replaying %s of operation %s (session %s): %v", m.Type, m.OperationID, m.SessionID, err)
		}
		if opens {
			streams = append(streams, m)
		}
		if m.Type == protocol.TypeRequest {
			n++
		}
	}
	for _, m := range streams {
		if st := logs[m.SessionID].State(m.OperationID); st.Live() {
			t.Errorf("%s %s (session %s) left in state %s", m.Type, m.OperationID, m.SessionID, st)
		}
	}
	return n
}

// ReplayStore replays every session of store through the state machine (Replay).
func ReplayStore(t testing.TB, store protocol.Store) {
	t.Helper()
	ctx := context.Background()
	sessions, err := store.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		Replay(t, func(yield func(*protocol.EnhancedMessage) bool) {
			for m, err := range store.After(ctx, s.ID, 0) {
				if err != nil {
					t.Fatal(err)
				}
				if !yield(m) {
					return
				}
			}
		})
	}
}

// Kernels starts real, sandboxed Python and Octave kernels in one workspace of the test, as an
// agent's StartKernel.
func Kernels(t testing.TB) func(ctx context.Context, name string) (kernel.Kernel, error) {
	ws := t.TempDir()
	return func(ctx context.Context, name string) (kernel.Kernel, error) {
		o := KernelOptions(t)
		o.Workspace = ws
		switch name {
		case "python":
			return python.Start(ctx, &o)
		case "octave":
			return octave.Start(ctx, &o)
		}
		return nil, fmt.Errorf("no kernel %q in the tests", name)
	}
}
