package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// An operation_interrupt another process appends asks the operation's writer to stop it: the
// operation's writer stays the process that runs it, and its own messages still move it.
func TestInterruptKeepsWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	run, err := sqlite.OpenAs(path, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	srv, err := sqlite.OpenAs(path, "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	msg := func(typ protocol.Type, payload any) *protocol.EnhancedMessage {
		m, err := protocol.NewMessage(typ, "s", "op", payload)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, m := range []*protocol.EnhancedMessage{msg(protocol.TypeRequest, &protocol.Request{Kind: "exec", Kernel: "python", Code: "1"}),
		msg(protocol.TypeAck, nil), msg(protocol.TypeStart, nil)} {
		if _, err := run.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := run.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Append(ctx, msg(protocol.TypeInterrupt, &protocol.Interrupt{Why: "asked"})); err != nil {
		t.Fatal(err)
	}
	if err := srv.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if w, ok := srv.Writer(ctx, "s", "op"); !ok || w.Role != "run" || w.Self || !w.Live {
		t.Errorf("after the server's interrupt the operation's writer is %+v (%v), want the live run", w, ok)
	}
	if _, err := run.Append(ctx, msg(protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonInterrupted})); err != nil {
		t.Fatalf("the run's own end after another process's interrupt: %v", err)
	}
	if err := run.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if w, _ := srv.Writer(ctx, "s", "op"); w.Role != "run" {
		t.Errorf("the ended operation's writer is %+v, want the run", w)
	}
	// An interrupt of an operation that ended is refused.
	if _, err := srv.Append(ctx, msg(protocol.TypeInterrupt, &protocol.Interrupt{})); err == nil {
		t.Error("an interrupt of an ended operation was appended")
	}
}
