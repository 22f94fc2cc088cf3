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
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner"
)

// An interrupt asked of one runner for an operation another process's runner runs over the same
// log file reaches that process through the log: two Stores of one file are two writers, as two
// processes are (each its own lock; Tail yields what the other commits). The running cell stops
// interrupted with its kernel kept, a queued one ends before it starts, an operation that has
// ended is refused as not running, one whose process stopped is ended process_died and refused
// saying so, and one whose process follows no interrupts is refused naming it.
func TestInterruptElsewhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "labmate.db")
	open := func(role string) *sqlite.Store {
		st, err := sqlite.OpenAs(path, role)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	runStore, serveStore := open("run"), open("serve")
	defer serveStore.Close()
	defer runStore.Close()
	opts := testutil.KernelOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	guest, err := runner.New(ctx, runner.Config{Store: runStore, Guest: true, Workspaces: t.TempDir(), Log: log.New(t.Output(), "", 0),
		Kernels: kernelsOf(func(ctx context.Context, name, ws string) (kernel.Kernel, error) {
			o := opts
			o.Workspace = ws
			return python.Start(ctx, &o)
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer guest.Close()
	srv, err := runner.New(ctx, runner.Config{Store: serveStore, Workspaces: t.TempDir(), Log: log.New(t.Output(), "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// The server's session is live (a dashboard follows it): the interrupt goes through it.
	ss, err := srv.Open("s")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Release(ss)

	// A cell that loops, and one queued behind it.
	loop := "x = 5\nimport time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
	queued := make(chan *protocol.EnhancedMessage, 16)
	var first, second string
	ends := map[string]*protocol.Failed{}
	for m, err := range guest.Run(ctx, "s", &protocol.Request{Kind: "exec", Kernel: "python", Code: loop}) {
		if err != nil {
			t.Fatal(err)
		}
		first = m.OperationID
		switch p, _ := protocol.DecodePayload(m); p := p.(type) {
		case *protocol.Progress:
			if p.Observation == nil || p.Observation.Line != "tick 2" {
				continue
			}
			go func() {
				for m, err := range guest.Run(ctx, "s", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('never')"}) {
					if err != nil {
						t.Error(err)
						break
					}
					queued <- m
				}
				close(queued)
			}()
			m := <-queued // its request: it waits behind the loop
			second = m.OperationID
			if err := srv.Interrupt(ctx, "s", second, "not this one"); err != nil {
				t.Errorf("the server's interrupt of the queued cell of another process: %v", err)
			}
			if err := srv.Interrupt(ctx, "s", first, "another process asked"); err != nil {
				t.Fatalf("the server's interrupt of the running cell of another process: %v", err)
			}
		case *protocol.Failed:
			ends[first] = p
		case *protocol.Complete:
			t.Fatalf("the loop completed: the interrupt never reached it")
		}
	}
	for m := range queued {
		if p, _ := protocol.DecodePayload(m); p != nil {
			if f, ok := p.(*protocol.Failed); ok {
				ends[second] = f
			}
		}
	}
	if f := ends[first]; f == nil || f.Reason != protocol.ReasonInterrupted || f.Verdict != nil {
		t.Errorf("the running cell ended %+v, want interrupted", f)
	}
	if f := ends[second]; f == nil || f.Reason != protocol.ReasonInterrupted || !strings.Contains(f.Error, "before the operation started") {
		t.Errorf("the queued cell ended %+v, want interrupted before it started", f)
	}
	var why []string
	for m, err := range runStore.Operation(ctx, "s", first) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeInterrupt {
			var in protocol.Interrupt
			m.Decode(&in)
			why = append(why, in.Why)
		}
	}
	if len(why) != 1 || why[0] != "another process asked" {
		t.Errorf("the log has the interrupts %q of the running cell, want the server's one", why)
	}
	// The kernel was kept: the next cell sees x.
	var out []string
	for m, err := range guest.Run(ctx, "s", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('x =', x)"}) {
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := protocol.DecodePayload(m); p != nil {
			if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Kind == protocol.ObsStdout {
				out = append(out, pr.Observation.Line)
			}
		}
	}
	if strings.Join(out, "\n") != "x = 5" {
		t.Errorf("after the interrupt the kernel printed %q, want x = 5", out)
	}

	// An operation that has ended.
	if err := srv.Interrupt(ctx, "s", first, "again"); !errors.Is(err, runner.ErrNotRunning) || !strings.Contains(err.Error(), "has ended") {
		t.Errorf("interrupting an operation that ended: %v, want ErrNotRunning, ended", err)
	}
	// One the log does not have.
	if err := srv.Interrupt(ctx, "s", "nope", ""); !errors.Is(err, runner.ErrNotRunning) {
		t.Errorf("interrupting an unknown operation: %v, want ErrNotRunning", err)
	}

	// An operation whose process stopped while it ran (its Store closed: its lock released).
	started := func(st *sqlite.Store, session, op string) {
		for _, m := range []*protocol.EnhancedMessage{
			must(protocol.NewMessage(protocol.TypeRequest, session, op, &protocol.Request{Kind: "exec", Kernel: "python", Code: "1"})),
			must(protocol.NewMessage(protocol.TypeAck, session, op, nil)),
			must(protocol.NewMessage(protocol.TypeStart, session, op, nil)),
		} {
			if _, err := st.Append(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	dead := open("run")
	started(dead, "gone", "orphan")
	dead.Close()
	err = srv.Interrupt(ctx, "gone", "orphan", "")
	if !errors.Is(err, runner.ErrNotRunning) || !strings.Contains(err.Error(), "stopped while it ran") {
		t.Errorf("interrupting the operation of a process that stopped: %v, want ErrNotRunning saying so", err)
	}
	var last protocol.Failed
	for m, err := range serveStore.Operation(ctx, "gone", "orphan") {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeFailed {
			m.Decode(&last)
		}
	}
	if last.Reason != protocol.ReasonProcessDied {
		t.Errorf("the operation of the process that stopped ended %+v in the log, want process_died", last)
	}

	// An operation of a process that follows no interrupts: refused, naming it; nothing logged.
	exec := open("eval")
	defer exec.Close()
	started(exec, "cli", "cell")
	err = srv.Interrupt(ctx, "cli", "cell", "")
	if !errors.Is(err, runner.ErrUnsupported) || !strings.Contains(err.Error(), "labmate eval") {
		t.Errorf("interrupting the operation of labmate eval: %v, want it refused, naming labmate eval", err)
	}
	if _, err := exec.Append(ctx, must(protocol.NewMessage(protocol.TypeComplete, "cli", "cell", &protocol.Complete{}))); err != nil {
		t.Fatalf("labmate eval ending its cell after the refused interrupt: %v", err)
	}
	if err := exec.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.ReplayStore(t, serveStore)
}

func must(m *protocol.EnhancedMessage, err error) *protocol.EnhancedMessage {
	if err != nil {
		panic(err)
	}
	return m
}
