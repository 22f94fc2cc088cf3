package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/protocol"
)

// ErrNotRunning is returned by Interrupt for an operation that is not queued or running.
var ErrNotRunning = errors.New("server: no such operation is queued or running")

// Run submits req as a new operation of session (created when new) — a cell (kind "exec") or
// a job (kind "job") — queued behind the session's others, and yields its messages, from
// operation_request to its terminal message, in the same log every face sees. When ctx ends
// before the operation does, the operation is interrupted (the kernel and its workspace stay)
// and Run goes on yielding until the terminal message, which says so. Stopping the iteration
// early leaves the operation running. (A WebSocket client's requests take the same path:
// Session.Submit.)
func (s *Runner) Run(ctx context.Context, session string, req *protocol.Request) iter.Seq2[*protocol.EnhancedMessage, error] {
	return s.run(ctx, &agent.CellRun{Session: session, ID: uuid.NewString(), Request: req})
}

// run is Run of operation c.ID, in c.Workspace when the session has no kernel yet, with
// c.Options when set (else the runner's): an agent run's cells take this path (Cells).
func (s *Runner) run(ctx context.Context, c *agent.CellRun) iter.Seq2[*protocol.EnhancedMessage, error] {
	session, opID := c.Session, c.ID
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		if session == "" {
			yield(nil, errors.New("runner: Run: empty session id"))
			return
		}
		ss, err := s.Open(session)
		if err != nil {
			yield(nil, err)
			return
		}
		defer s.Release(ss)
		ss.useWorkspace(c.Workspace)
		sub := ss.Subscribe(s.cfg.Limits.SubscriberBuffer)
		defer func() { ss.Unsubscribe(sub) }()
		if _, err := ss.submit(ctx, opID, c.Request, c.Options); err != nil {
			yield(nil, err)
			return
		}
		// drain bounds the wait for the terminal message once ctx has ended.
		drain := make(<-chan time.Time)
		done := ctx.Done()
		last := int64(0)
		// emit yields m when it is the operation's and new; false when iteration is over.
		emit := func(m *protocol.EnhancedMessage) bool {
			if m.OperationID != opID || m.Seq <= last {
				return true
			}
			last = m.Seq
			return yield(m, nil) && !m.Type.Terminal()
		}
		var batch []Frame
		for {
			select {
			case <-sub.Ready:
				batch = sub.Take(batch)
				for _, f := range batch {
					if f.Seq <= last {
						continue
					}
					var m protocol.EnhancedMessage
					if err := json.Unmarshal(f.Data, &m); err != nil {
						yield(nil, fmt.Errorf("server: decoding a published message: %w", err))
						return
					}
					if !emit(&m) {
						return
					}
				}
				sub.Delivered(len(batch))
				clear(batch)
			case <-sub.Dropped:
				// Too slow for the live fan-out: subscribe again, then catch up from the log.
				ss.Unsubscribe(sub)
				sub = ss.Subscribe(s.cfg.Limits.SubscriberBuffer)
				for m, err := range s.store.Operation(context.WithoutCancel(ctx), session, opID) {
					if err != nil {
						yield(nil, err)
						return
					}
					if !emit(m) {
						return
					}
				}
			case <-done:
				done = nil
				// An error here means the operation ended meanwhile: its end is on its way.
				if err := s.Interrupt(context.WithoutCancel(ctx), session, opID, "the caller cancelled"); err != nil && !errors.Is(err, ErrNotRunning) {
					s.Logf("session %s: interrupting operation %s: %v", session, opID, err)
				}
				drain = time.After(time.Minute)
			case <-drain:
				yield(nil, fmt.Errorf("server: operation %s did not end within a minute of its interrupt: %w", opID, ctx.Err()))
				return
			case <-s.streams.Done():
				yield(nil, errors.New("server: shut down"))
				return
			}
		}
	}
}

// Interrupt stops a queued or running operation of session, logging an operation_interrupt
// with why; one another process runs is stopped by that process (elsewhere.go). An operation
// that is not queued or running is an error wrapping ErrNotRunning.
func (s *Runner) Interrupt(ctx context.Context, session, opID, why string) error {
	in := &protocol.Interrupt{Why: why}
	if ss := s.Lookup(session); ss != nil {
		return ss.Interrupt(ctx, opID, in)
	}
	return s.interruptElsewhere(ctx, session, opID, in)
}

// Store is the server's log.
func (s *Runner) Store() protocol.Store { return s.store }

// Kernels lists the kernels the server can start (Config.Kernels).
func (s *Runner) Kernels(ctx context.Context) []KernelInfo {
	if s.cfg.Kernels == nil {
		return []KernelInfo{}
	}
	return s.cfg.Kernels.List(ctx)
}
