package runner

import (
	"context"
	"strings"
	"sync"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// A Host is what a process that runs its operations itself, without a Runner — labmate exec,
// labmate lab run, labmate campaign run — needs to take the interrupts other processes append
// to the log for them (the dashboard's Interrupt, POST /v1/sessions/S/operations/OP/interrupt,
// relayed by labmate serve's runner: elsewhere.go). The process holds each operation or
// campaign while it runs it (Hold): an operation_interrupt another process appends for that
// stream cancels the context Hold returned, with an *Interrupted cause, and that stream only.
// What the operation does then — the cell interrupted, its workspace kept, the end that says
// why — is the operation's own (operation.Run ends it interrupted with the cause as its error).
type Host struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	held map[stream]context.CancelCauseFunc
}

type stream struct{ session, id string }

// Interrupted is the cause a held stream's context is cancelled with when another process
// asked for the interrupt; it is context.Canceled (errors.Is) for whoever only checks that.
type Interrupted struct{ Why string }

// Error says why, as the process that asked put it ("interrupted from the dashboard").
func (e *Interrupted) Error() string {
	switch {
	case e.Why == "":
		return "interrupted from another process"
	case strings.HasPrefix(e.Why, "interrupted"):
		return e.Why
	}
	return "interrupted: " + e.Why
}

// Is makes an *Interrupted context.Canceled.
func (e *Interrupted) Is(target error) bool { return target == context.Canceled }

// NewHost follows what other processes append to log until Close; a log no other process
// writes (not a file of many writers, e.g. the in-memory stand-in when the file cannot be
// opened) gives a Host whose holds are never interrupted from elsewhere.
func NewHost(log operation.Log) *Host {
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{cancel: cancel, done: make(chan struct{}), held: map[stream]context.CancelCauseFunc{}}
	t, ok := log.(tailer)
	if !ok {
		close(h.done)
		return h
	}
	go func() {
		defer close(h.done)
		follow(ctx, t, h.interrupt, func(error) {})
	}()
	return h
}

// interrupt cancels the held stream m is for when m is an operation_interrupt.
func (h *Host) interrupt(m *protocol.EnhancedMessage) {
	if m.Type != protocol.TypeInterrupt {
		return
	}
	h.mu.Lock()
	cancel := h.held[stream{m.SessionID, m.OperationID}]
	h.mu.Unlock()
	if cancel == nil {
		return
	}
	var in protocol.Interrupt
	_ = m.Decode(&in) // an interrupt without a reason still interrupts
	cancel(&Interrupted{Why: in.Why})
}

// Hold holds operation (or campaign) id of session, which this process runs, until release:
// the context returned, derived from ctx, is cancelled with an *Interrupted cause when another
// process appends an operation_interrupt for it. Hold it before the stream's first message is
// appended, so that no interrupt can come before it is held.
func (h *Host) Hold(ctx context.Context, session, id string) (context.Context, func()) {
	k := stream{session, id}
	hctx, cancel := context.WithCancelCause(ctx)
	h.mu.Lock()
	h.held[k] = cancel
	h.mu.Unlock()
	return hctx, func() {
		h.mu.Lock()
		delete(h.held, k)
		h.mu.Unlock()
		cancel(nil)
	}
}

// Close stops following the log. Holds taken before stay until released, and are no longer
// interrupted from elsewhere.
func (h *Host) Close() {
	h.cancel()
	<-h.done
}
