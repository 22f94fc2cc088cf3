package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// session owns a workspace, its kernels (one per kind, started on first use), the queue of
// its operations (run in order) and the subscribers of its live stream.
type session struct {
	s  *Server
	id string

	mu      sync.Mutex // serialises append+publish, so subscribers see seq order
	subs    map[*subscriber]struct{}
	ws      string
	kernels map[string]kernel.Kernel
	used    time.Time

	queue   chan *op
	running map[string]*op // queued or running operations by id
}

// op is one accepted operation.
type op struct {
	id     string
	plan   *operation.Plan
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *Server) session(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[id]; ss != nil {
		return ss
	}
	ss := &session{s: s, id: id, subs: map[*subscriber]struct{}{}, kernels: map[string]kernel.Kernel{},
		queue: make(chan *op, 1024), running: map[string]*op{}, used: time.Now()}
	s.sessions[id] = ss
	if s.closing {
		// Close is waiting on wg (a WaitGroup must not grow then): this worker sees the
		// server stopped and ends at once, failing whatever was queued.
		go ss.work()
	} else {
		s.wg.Go(ss.work)
	}
	return ss
}

// append stores m in the session's log and publishes the stored copy.
func (ss *session) append(ctx context.Context, t protocol.Type, opID string, payload any) (*protocol.EnhancedMessage, error) {
	m, err := protocol.NewMessage(t, ss.id, opID, payload)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	stored, err := ss.s.store.Append(ctx, m)
	if err != nil {
		return nil, err
	}
	if len(ss.subs) > 0 {
		data, err := json.Marshal(stored)
		if err != nil {
			return nil, err
		}
		for sub := range ss.subs {
			if !sub.offer(frame{stored.Seq, data}) {
				delete(ss.subs, sub)
			}
		}
	}
	return stored, nil
}

// submit accepts an operation_request: it is logged, checked, and either acknowledged and
// queued or failed as rejected. It returns the operation's id.
func (ss *session) submit(ctx context.Context, opID string, req *protocol.Request) (string, error) {
	if opID == "" {
		opID = uuid.NewString()
	}
	// Registered before the request is logged, so that an interrupt racing the request finds it.
	o := &op{id: opID}
	o.ctx, o.cancel = context.WithCancel(ss.s.ctx)
	ss.mu.Lock()
	if ss.running[opID] != nil {
		ss.mu.Unlock()
		o.cancel()
		return "", fmt.Errorf("operation %s: already running", opID)
	}
	ss.running[opID] = o
	ss.mu.Unlock()
	forget := func() {
		ss.mu.Lock()
		delete(ss.running, opID)
		ss.mu.Unlock()
		o.cancel()
	}
	if _, err := ss.append(ctx, protocol.TypeRequest, opID, req); err != nil {
		forget()
		return "", err
	}
	plan, err := operation.Check(req)
	if err == nil && ss.s.cfg.Start == nil {
		err = fmt.Errorf("%w: this server runs no kernels", operation.ErrRejected)
	}
	if err != nil {
		forget()
		_, aerr := ss.append(ctx, protocol.TypeFailed, opID, &protocol.Failed{Reason: protocol.ReasonRejected, Error: err.Error()})
		return opID, aerr
	}
	o.plan = plan
	if _, err := ss.append(ctx, protocol.TypeAck, opID, &protocol.StatePayload{State: protocol.Acknowledged}); err != nil {
		forget()
		return opID, err
	}
	select {
	case ss.queue <- o:
	default:
		ss.finish(o, &protocol.Failed{Reason: protocol.ReasonRejected, Error: "the session's queue is full (1024 operations)"})
	}
	return opID, nil
}

// interrupt logs an operation_interrupt and stops the operation (running or queued).
func (ss *session) interrupt(ctx context.Context, opID string, in *protocol.Interrupt) error {
	if _, err := ss.append(ctx, protocol.TypeInterrupt, opID, in); err != nil {
		return err
	}
	ss.mu.Lock()
	o := ss.running[opID]
	ss.mu.Unlock()
	if o != nil {
		o.cancel()
	}
	return nil
}

// work runs the session's operations one after the other.
func (ss *session) work() {
	for {
		select {
		case o := <-ss.queue:
			ss.run(o)
		case <-ss.s.ctx.Done():
			for {
				select {
				case o := <-ss.queue:
					ss.finish(o, &protocol.Failed{Reason: protocol.ReasonInterrupted, Error: "the server shut down before the operation started"})
				default:
					ss.closeKernels()
					return
				}
			}
		}
	}
}

func (ss *session) run(o *op) {
	if o.ctx.Err() != nil { // interrupted or shut down while queued
		ss.finish(o, &protocol.Failed{Reason: protocol.ReasonInterrupted, Error: ss.s.stopReason("before the operation started")})
		return
	}
	k, err := ss.kernel(o.ctx, o.plan.Kernel)
	if err != nil {
		ss.finish(o, &protocol.Failed{Reason: protocol.ReasonError, Error: err.Error()})
		return
	}
	for m := range operation.Exec(o.ctx, k, o.plan, &operation.Options{Judge: ss.s.cfg.Judge}) {
		if f, ok := m.Payload.(*protocol.Failed); ok {
			if ss.s.ctx.Err() != nil && f.Reason == protocol.ReasonInterrupted && f.Verdict == nil {
				f.Error = "the server shut down while the operation ran"
			}
			ss.finish(o, f)
			return
		}
		if m.Type == protocol.TypeComplete {
			ss.done(o, m.Type, m.Payload)
			return
		}
		if _, err := ss.append(context.Background(), m.Type, o.id, m.Payload); err != nil {
			ss.s.logf("session %s: operation %s: %v", ss.id, o.id, err)
		}
	}
}

func (ss *session) finish(o *op, f *protocol.Failed) { ss.done(o, protocol.TypeFailed, f) }

// done appends the operation's terminal message (durable before it is published).
func (ss *session) done(o *op, t protocol.Type, payload any) {
	if _, err := ss.append(context.Background(), t, o.id, payload); err != nil {
		ss.s.logf("session %s: operation %s: terminal message: %v", ss.id, o.id, err)
	}
	ss.mu.Lock()
	delete(ss.running, o.id)
	ss.used = time.Now()
	ss.mu.Unlock()
	o.cancel()
}

// kernel returns the session's kernel of that kind, starting it on first use. The session's
// first kernel may come pre-warmed from the pool; its workspace becomes the session's.
func (ss *session) kernel(ctx context.Context, name string) (kernel.Kernel, error) {
	ss.mu.Lock()
	k, ws := ss.kernels[name], ss.ws
	ss.mu.Unlock()
	if k != nil {
		return k, nil
	}
	var err error
	if ws == "" {
		k, ws, err = ss.s.pool.take(ctx, name)
	} else {
		k, err = ss.s.cfg.Start(ctx, name, ws)
	}
	if err != nil {
		return nil, fmt.Errorf("starting the %s kernel: %w", name, err)
	}
	ss.mu.Lock()
	ss.kernels[name], ss.ws, ss.used = k, ws, time.Now()
	ss.mu.Unlock()
	return k, nil
}

// reap closes the session's kernels when it has been idle for longer than idle.
func (ss *session) reap(idle time.Duration) {
	ss.mu.Lock()
	quiet := len(ss.running) == 0 && len(ss.kernels) > 0 && time.Since(ss.used) > idle
	ss.mu.Unlock()
	if quiet {
		ss.closeKernels()
	}
}

func (ss *session) closeKernels() {
	ss.mu.Lock()
	ks := ss.kernels
	ss.kernels = map[string]kernel.Kernel{}
	ss.mu.Unlock()
	for _, k := range ks {
		k.Close()
	}
}

// newWorkspace makes a fresh workspace directory under root.
func newWorkspace(root string) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("workspaces: %w", err)
	}
	dir, err := os.MkdirTemp(root, "ws-")
	if err != nil {
		return "", fmt.Errorf("workspaces: %w", err)
	}
	return filepath.Abs(dir)
}

// decodeRequest reads an operation_request payload.
func decodeRequest(raw json.RawMessage) (*protocol.Request, error) {
	var req protocol.Request
	if len(raw) == 0 {
		return nil, errors.New("operation_request payload: missing")
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("operation_request payload: %w", err)
	}
	return &req, nil
}
