package operation_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// stored are the messages of session in store.
func stored(t *testing.T, store protocol.Store, session string) []*protocol.EnhancedMessage {
	t.Helper()
	var msgs []*protocol.EnhancedMessage
	for m, err := range store.After(context.Background(), session, 0) {
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func typesOf[M any](msgs []M, typ func(M) protocol.Type) []protocol.Type {
	var out []protocol.Type
	for _, m := range msgs {
		out = append(out, typ(m))
	}
	return out
}

func TestRunLifecycle(t *testing.T) {
	k := start(t)
	started := func(context.Context, string) (kernel.Kernel, error) { return k, nil }
	broken := func(context.Context, string) (kernel.Kernel, error) { return nil, errors.New("no interpreter here") }
	const (
		req   = protocol.TypeRequest
		ack   = protocol.TypeAck
		start = protocol.TypeStart
		prog  = protocol.TypeProgress
		done  = protocol.TypeComplete
		fail  = protocol.TypeFailed
	)
	for _, c := range []struct {
		name   string
		req    protocol.Request
		start  func(context.Context, string) (kernel.Kernel, error)
		want   []protocol.Type // with the progress messages squeezed into one
		reason protocol.Reason
		error  string
	}{
		{"complete", protocol.Request{Code: "print('hi')"}, started, []protocol.Type{req, ack, start, prog, done}, "", ""},
		{"silent", protocol.Request{Code: "x = 1"}, started, []protocol.Type{req, ack, start, prog, done}, "", ""},
		{"error", protocol.Request{Code: "1/0", Hotfix: protocol.HotfixOff}, started, []protocol.Type{req, ack, start, prog, fail}, protocol.ReasonError, "ZeroDivisionError"},
		{"hotfix", protocol.Request{Code: diverging}, started, []protocol.Type{req, ack, start, prog, fail}, protocol.ReasonInterrupted, "hot-fix"},
		{"rejected", protocol.Request{Code: "x = 1", Hotfix: "sometimes"}, started, []protocol.Type{req, fail}, protocol.ReasonRejected, `hotfix "sometimes"`},
		{"no kernel", protocol.Request{Code: "x = 1"}, broken, []protocol.Type{req, ack, fail}, protocol.ReasonError, "no interpreter here"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := protocol.NewMemStore()
			r := c.req
			r.Kind, r.Kernel = "exec", "python"
			var yielded []*operation.Message
			for m, err := range operation.Run(context.Background(), store, "s", "op", &r, c.start, nil) {
				if err != nil {
					t.Fatal(err)
				}
				yielded = append(yielded, m)
			}
			msgs := stored(t, store, "s")
			if n := testutil.Replay(t, slices.Values(msgs)); n != 1 {
				t.Errorf("%d operations in the log, want 1", n)
			}
			got := slices.Compact(typesOf(msgs, func(m *protocol.EnhancedMessage) protocol.Type { return m.Type }))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("logged types (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(typesOf(msgs, func(m *protocol.EnhancedMessage) protocol.Type { return m.Type }),
				typesOf(yielded, func(m *operation.Message) protocol.Type { return m.Type })); diff != "" {
				t.Errorf("yielded other messages than it logged (-logged +yielded):\n%s", diff)
			}
			f, ok := yielded[len(yielded)-1].Payload.(*protocol.Failed)
			if c.reason == "" && ok || c.reason != "" && (!ok || f.Reason != c.reason || !strings.Contains(f.Error, c.error)) {
				t.Errorf("terminal %+v, want reason %q mentioning %q", yielded[len(yielded)-1].Payload, c.reason, c.error)
			}
		})
	}
}

func TestOpStepsOutOfOrder(t *testing.T) {
	store := protocol.NewMemStore()
	ctx := context.Background()
	op := operation.New(store, "s", "op")
	if err := op.Ack(ctx); !errors.Is(err, protocol.ErrIllegalTransition) {
		t.Errorf("ack before the request: %v, want ErrIllegalTransition", err)
	}
	if err := op.Request(ctx, &protocol.Request{Kind: "exec", Kernel: "python", Code: "x = 1"}); err != nil {
		t.Fatal(err)
	}
	p, err := operation.Check(&protocol.Request{Kind: "exec", Kernel: "python", Code: "x = 1"})
	if err != nil {
		t.Fatal(err)
	}
	// Running before the ack is refused before anything reaches the kernel or the log.
	var errs []error
	for _, err := range op.Run(ctx, start(t), p, nil) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], protocol.ErrIllegalTransition) {
		t.Errorf("run before the ack yielded %v, want one ErrIllegalTransition", errs)
	}
	if err := op.Reject(ctx, errors.New("not today")); err != nil {
		t.Fatal(err)
	}
	if err := op.Fail(ctx, &protocol.Failed{Reason: protocol.ReasonError}); !errors.Is(err, protocol.ErrIllegalTransition) {
		t.Errorf("a second terminal message: %v, want ErrIllegalTransition", err)
	}
	msgs := stored(t, store, "s")
	testutil.Replay(t, slices.Values(msgs))
	if got := typesOf(msgs, func(m *protocol.EnhancedMessage) protocol.Type { return m.Type }); !slices.Equal(got, []protocol.Type{protocol.TypeRequest, protocol.TypeFailed}) {
		t.Errorf("logged %v, want the request and the rejection only", got)
	}
}

// A consumer that stops reading interrupts the cell, and the log still gets its end.
func TestRunStoppedEarlyStillEnds(t *testing.T) {
	store := protocol.NewMemStore()
	k := start(t)
	begin := time.Now()
	req := &protocol.Request{Kind: "exec", Kernel: "python", Code: "import time\nfor i in range(100):\n    print(i, flush=True)\n    time.sleep(0.1)"}
	for m := range operation.Run(context.Background(), store, "s", "op", req, func(context.Context, string) (kernel.Kernel, error) { return k, nil }, nil) {
		if m.Type == protocol.TypeProgress {
			break
		}
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("stopping took %v: the cell was not interrupted", d)
	}
	msgs := stored(t, store, "s")
	testutil.Replay(t, slices.Values(msgs))
	var f protocol.Failed
	if last := msgs[len(msgs)-1]; last.Type != protocol.TypeFailed || last.Decode(&f) != nil || f.Reason != protocol.ReasonInterrupted {
		t.Errorf("terminal %s %s, want failed/interrupted", last.Type, last.Payload)
	}
}

// A log that refuses a message ends the run with its error; the kernel is interrupted and
// stays usable.
func TestRunLogRefuses(t *testing.T) {
	store := protocol.NewMemStore()
	full := errors.New("disk full")
	log := operation.LogFunc(func(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
		if m.Type == protocol.TypeProgress {
			return nil, full
		}
		return store.Append(ctx, m)
	})
	k := start(t)
	begin := time.Now()
	var last error
	for _, err := range operation.Run(context.Background(), log, "s", "op", &protocol.Request{Kind: "exec", Kernel: "python", Code: diverging, Hotfix: protocol.HotfixOff},
		func(context.Context, string) (kernel.Kernel, error) { return k, nil }, nil) {
		last = err
	}
	if !errors.Is(last, full) {
		t.Errorf("ended with %v, want the log's error", last)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("took %v: the cell was not interrupted", d)
	}
	if msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('alive')"}); msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Errorf("the kernel after: %+v", msgs[len(msgs)-1].Payload)
	}
}

// A context cancelled with a cause says why in the terminal message.
func TestRunCancelCause(t *testing.T) {
	store := protocol.NewMemStore()
	k := start(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	req := &protocol.Request{Kind: "exec", Kernel: "python", Code: "import time\nprint('go', flush=True)\ntime.sleep(30)"}
	for m, err := range operation.Run(ctx, store, "s", "op", req, func(context.Context, string) (kernel.Kernel, error) { return k, nil }, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeProgress {
			cancel(errors.New("the server shut down while the operation ran"))
		}
	}
	msgs := stored(t, store, "s")
	testutil.Replay(t, slices.Values(msgs))
	var f protocol.Failed
	if last := msgs[len(msgs)-1]; last.Decode(&f) != nil || f.Reason != protocol.ReasonInterrupted || f.Error != "the server shut down while the operation ran" {
		t.Errorf("terminal %s %s, want failed/interrupted with the cause", last.Type, last.Payload)
	}
}
