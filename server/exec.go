package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/protocol"
)

// ErrNotRunning is returned by Interrupt for an operation that is not queued or running.
var ErrNotRunning = errors.New("server: no such operation is queued or running")

// Exec submits req as a new operation of session (created when new) and yields its messages,
// from operation_request to its terminal message, in the same log the WebSocket clients see.
// When ctx ends before the operation does, the operation is interrupted (the kernel and its
// workspace stay) and Exec goes on yielding until the terminal message, which says so.
// Stopping the iteration early leaves the operation running. In-process callers (the MCP
// server) use it instead of a WebSocket.
func (s *Server) Exec(ctx context.Context, session string, req *protocol.Request) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		if session == "" {
			yield(nil, errors.New("server: Exec: empty session id"))
			return
		}
		ss, err := s.open(session)
		if err != nil {
			yield(nil, err)
			return
		}
		defer s.release(ss)
		sub := ss.subscribe(s.cfg.SubscriberBuffer)
		defer func() { ss.unsubscribe(sub) }()
		opID := uuid.NewString()
		if _, err := ss.submit(ctx, opID, req); err != nil {
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
		for {
			select {
			case f := <-sub.ch:
				if f.seq <= last {
					continue
				}
				var m protocol.EnhancedMessage
				if err := json.Unmarshal(f.data, &m); err != nil {
					yield(nil, fmt.Errorf("server: decoding a published message: %w", err))
					return
				}
				if !emit(&m) {
					return
				}
			case <-sub.dropped:
				// Too slow for the live fan-out: subscribe again, then catch up from the log.
				ss.unsubscribe(sub)
				sub = ss.subscribe(s.cfg.SubscriberBuffer)
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
					s.logf("session %s: interrupting operation %s: %v", session, opID, err)
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
// with why. An operation that is not queued or running is an error wrapping ErrNotRunning.
func (s *Server) Interrupt(ctx context.Context, session, opID, why string) error {
	ss := s.lookup(session)
	if ss == nil {
		return fmt.Errorf("%w: session %q has no operations in this server", ErrNotRunning, session)
	}
	ss.mu.Lock()
	o := ss.running[opID]
	ss.mu.Unlock()
	if o == nil {
		return fmt.Errorf("%w: operation %q of session %q", ErrNotRunning, opID, session)
	}
	return ss.interrupt(ctx, opID, &protocol.Interrupt{Why: why})
}

// Store is the server's log.
func (s *Server) Store() protocol.Store { return s.store }

// Handle registers another handler on the server's mux (the MCP endpoint, the dashboard's
// extra pages), behind the same guard as the protocol: Host allow-list, Origin check,
// application/json bodies, body deadline and bearer token.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Kernels lists the kernels the server can start (Config.Kernels).
func (s *Server) Kernels(ctx context.Context) []KernelInfo {
	if s.cfg.Kernels == nil || s.cfg.Start == nil {
		return []KernelInfo{}
	}
	return s.cfg.Kernels(ctx)
}
