package operation

import (
	"context"
	"fmt"
	"iter"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// Log takes an operation's messages in order and returns each as stored (with its seq, when it
// numbers them). protocol.Store is one; so is whatever a caller wraps around one to publish
// the stored copies (LogFunc).
type Log interface {
	Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error)
}

// LogFunc adapts a function to Log.
type LogFunc func(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error)

// Append calls f.
func (f LogFunc) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	return f(ctx, m)
}

// Op is one operation's lifecycle — request → ack → start → progress… → terminal — written
// to a Log. Every message is checked against the state machine (protocol.Next) before it is
// appended, so a step taken out of order is an error wrapping protocol.ErrIllegalTransition
// and never reaches the log. Run takes an operation through all of it at once; a caller that
// queues operations between their ack and their start (the server) takes the steps itself.
// An Op is not safe for concurrent use.
type Op struct {
	log         Log
	session, id string
	state       protocol.State
}

// New returns operation id of session, not yet requested, writing to log.
func New(log Log, session, id string) *Op {
	return &Op{log: log, session: session, id: id}
}

// append checks m against the state machine and writes it to the log; the state moves only
// when the log took it. A terminal message is written even when ctx has ended: the end of an
// operation must be on record.
func (o *Op) append(ctx context.Context, m *Message) error {
	if m.Type.Terminal() {
		ctx = context.WithoutCancel(ctx)
	}
	to, err := protocol.Next(o.state, m.Type)
	if err != nil {
		return fmt.Errorf("operation %s: %w", o.id, err)
	}
	em, err := protocol.NewMessage(m.Type, o.session, o.id, m.Payload)
	if err != nil {
		return err
	}
	if _, err := o.log.Append(ctx, em); err != nil {
		return fmt.Errorf("operation %s: %s: %w", o.id, m.Type, err)
	}
	o.state = to
	return nil
}

// Request logs the operation_request.
func (o *Op) Request(ctx context.Context, req *protocol.Request) error {
	return o.append(ctx, &Message{protocol.TypeRequest, req})
}

// Ack logs the operation_ack of an accepted request.
func (o *Op) Ack(ctx context.Context) error { return o.append(ctx, ack()) }

// Reject ends a requested operation that cannot run: operation_failed with reason "rejected"
// and why as its error.
func (o *Op) Reject(ctx context.Context, why error) error { return o.append(ctx, rejected(why)) }

// Fail ends the operation before it ran (interrupted while queued, a kernel that would not
// start) with operation_failed.
func (o *Op) Fail(ctx context.Context, f *protocol.Failed) error {
	return o.append(ctx, &Message{protocol.TypeFailed, f})
}

func ack() *Message {
	return &Message{protocol.TypeAck, &protocol.StatePayload{State: protocol.Acknowledged}}
}

func rejected(why error) *Message {
	return &Message{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonRejected, Error: why.Error()}}
}

// Run runs an acknowledged operation's plan in k (Exec), logging operation_start, its
// progress and its terminal message, and yields each message once it is logged. A message the
// log does not take is yielded as the error that ends the iteration (the cell is interrupted).
// Stopping the iteration early, or ctx ending, interrupts the cell but not the log: the rest
// of the operation, down to its terminal message, is still written.
//
// When ctx was cancelled with a cause (context.WithCancelCause) and the interrupt it made is
// what ended the cell, the terminal message gives the cause as its error: "the server shut
// down while the operation ran" rather than the kernel's "interrupted".
func (o *Op) Run(ctx context.Context, k kernel.Kernel, p *Plan, opts *Options) iter.Seq2[*Message, error] {
	return func(yield func(*Message, error) bool) {
		listening := true
		lctx := context.WithoutCancel(ctx) // an interrupted cell's last lines are logged too
		for m := range Exec(ctx, k, p, opts) {
			if f, ok := m.Payload.(*protocol.Failed); ok && f.Reason == protocol.ReasonInterrupted && f.Verdict == nil && ctx.Err() != nil {
				if cause := context.Cause(ctx); cause != ctx.Err() {
					f.Error = cause.Error()
				}
			}
			if err := o.append(lctx, m); err != nil {
				if listening {
					yield(nil, err)
				}
				return // Exec interrupts the cell when its iteration stops
			}
			if listening && !yield(m, nil) {
				listening = false
				k.Interrupt()
			}
		}
	}
}

// Run takes operation id of session through its whole lifecycle in log and yields each
// message once it is logged: the request; then operation_failed (rejected) when Check refuses
// it, else the ack, the kernel start gives for the plan (a start that fails ends the
// operation as operation_failed, reason "error"), and the messages of Op.Run. An error
// (a message the log did not take) ends the iteration.
func Run(ctx context.Context, log Log, session, id string, req *protocol.Request,
	start func(ctx context.Context, kernel string) (kernel.Kernel, error), opts *Options) iter.Seq2[*Message, error] {
	return func(yield func(*Message, error) bool) {
		op := New(log, session, id)
		step := op.stepper(ctx, yield)
		if !step(&Message{protocol.TypeRequest, req}) {
			return
		}
		plan, err := Check(req)
		if err != nil {
			step(rejected(err))
			return
		}
		if !step(ack()) {
			return
		}
		k, err := start(ctx, plan.Kernel)
		if err != nil {
			step(&Message{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonError, Error: err.Error()}})
			return
		}
		for m, err := range op.Run(ctx, k, plan, opts) {
			if !yield(m, err) {
				return
			}
		}
	}
}

// stepper returns step: it logs m and yields it, and says false when the iteration is over
// (the log refused m, or the consumer stopped).
func (o *Op) stepper(ctx context.Context, yield func(*Message, error) bool) func(m *Message) bool {
	return func(m *Message) bool {
		if err := o.append(ctx, m); err != nil {
			yield(nil, err)
			return false
		}
		return yield(m, nil)
	}
}
