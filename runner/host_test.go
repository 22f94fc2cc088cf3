package runner_test

import (
	"context"
	"errors"
	"log"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner"
)

// A process that runs its operations without a runner (labmate exec, lab run, campaign run)
// takes the interrupts another process's runner relays through the log with a Host: the held
// operation stops interrupted, its end saying who asked; another operation the same process
// holds runs on; an interrupt of an operation whose process is gone is refused as such.
func TestHostInterrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "labmate.db")
	open := func(role string) *sqlite.Store {
		st, err := sqlite.OpenAs(path, role)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	execStore, serveStore := open("exec"), open("serve")
	defer serveStore.Close()
	defer execStore.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := runner.New(ctx, runner.Config{Store: serveStore, Workspaces: t.TempDir(), Log: log.New(t.Output(), "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	host := runner.NewHost(execStore)
	defer host.Close()

	// Another operation the process holds, never interrupted.
	otherCtx, releaseOther := host.Hold(ctx, "s2", "other")
	defer releaseOther()

	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	var k kernel.Kernel
	start := func(ctx context.Context, _ string) (kernel.Kernel, error) {
		var err error
		k, err = python.Start(context.WithoutCancel(ctx), &opts)
		return k, err
	}
	defer func() {
		if k != nil {
			k.Close()
		}
	}()
	octx, release := host.Hold(ctx, "s", "cell")
	defer release()
	loop := "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
	var asked time.Time
	var end *protocol.Failed
	for m, err := range operation.Run(octx, execStore, "s", "cell", &protocol.Request{Kind: "exec", Kernel: "python", Code: loop}, start, nil) {
		if err != nil {
			t.Fatal(err)
		}
		switch p := m.Payload.(type) {
		case *protocol.Progress:
			if asked.IsZero() && p.Observation != nil && p.Observation.Line == "tick 2" {
				if err := execStore.Sync(ctx); err != nil { // what exec prints it has committed
					t.Fatal(err)
				}
				asked = time.Now()
				if err := srv.Interrupt(ctx, "s", "cell", "a person asked"); err != nil {
					t.Fatalf("the server's interrupt of labmate exec's cell: %v", err)
				}
			}
		case *protocol.Failed:
			end = p
		case *protocol.Complete:
			t.Fatal("the loop completed: the interrupt never reached it")
		}
	}
	if took := time.Since(asked); took > 5*time.Second {
		t.Errorf("the cell stopped %v after the interrupt, want within seconds", took)
	}
	if end == nil || end.Reason != protocol.ReasonInterrupted || end.Verdict != nil || end.Error != "interrupted: a person asked" {
		t.Errorf("the cell ended %+v, want interrupted, saying why", end)
	}
	if cause := context.Cause(octx); !errors.Is(cause, context.Canceled) {
		t.Errorf("the held context's cause %v is not context.Canceled", cause)
	}
	if otherCtx.Err() != nil {
		t.Error("the other operation the process holds was interrupted too")
	}
	if err := execStore.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	var types []string
	for m, err := range serveStore.Operation(ctx, "s", "cell") {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeInterrupt || m.Type.Terminal() {
			types = append(types, string(m.Type))
		}
	}
	if strings.Join(types, " ") != "operation_interrupt operation_failed" {
		t.Errorf("the cell's story in the log ends %q, want its interrupt, then its end", types)
	}

	// The process is gone (its store closed) while an operation of it was open: the interrupt
	// is refused, and the log ends the operation.
	dead := open("exec")
	for _, m := range []*protocol.EnhancedMessage{
		must(protocol.NewMessage(protocol.TypeRequest, "gone", "cell", &protocol.Request{Kind: "exec", Kernel: "python", Code: "1"})),
		must(protocol.NewMessage(protocol.TypeAck, "gone", "cell", nil)),
		must(protocol.NewMessage(protocol.TypeStart, "gone", "cell", nil)),
	} {
		if _, err := dead.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	dead.Close()
	err = srv.Interrupt(ctx, "gone", "cell", "")
	if !errors.Is(err, runner.ErrNotRunning) || !strings.Contains(err.Error(), "labmate exec") || !strings.Contains(err.Error(), "stopped while it ran") {
		t.Errorf("interrupting the cell of a labmate exec that died: %v, want ErrNotRunning naming it", err)
	}
	testutil.ReplayStore(t, serveStore)
}
