package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// session owns a workspace, its kernels (one per kind, started on first use), the queue of
// its operations (run in order by a worker that runs while there are some) and the
// subscribers of its live stream. It lives in the server while it is used; the janitor drops
// one that has been idle for Config.IdleTimeout (closing its kernels), and a later request
// for it makes it anew over the same log, in a fresh workspace.
type session struct {
	s  *Server
	id string

	refs int // connections, Exec calls and requests using it (guarded by Server.mu)

	// metaMu serialises the session's updates (name, closed) with the requests that reopen it.
	metaMu sync.Mutex
	meta   *protocol.SessionUpdate // the latest update; nil: not read from the log yet

	mu      sync.Mutex // serialises append+publish, so subscribers see seq order
	subs    map[*subscriber]struct{}
	ws      string
	kernels map[string]kernel.Kernel
	bench   *benchrun.Served // the workspace's bench, served while kernels run there
	used    time.Time

	readsMu sync.Mutex
	reads   map[string]*bench.Reading // the last plate-reader reading of each labware, by load name

	queue   []*op          // accepted, not started
	working bool           // a worker is running the queue
	running map[string]*op // queued or running operations by id
}

// op is one accepted operation.
type op struct {
	id     string
	life   *operation.Op
	plan   *operation.Plan
	ctx    context.Context
	cancel context.CancelFunc
}

// open returns the live session id, making it when it is new; its caller releases it. A new
// session beyond Config.MaxSessions takes the place of the least recently used one that
// holds nothing (no connection, operation or kernel), or is refused.
func (s *Server) open(id string) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[id]; ss != nil {
		ss.refs++
		return ss, nil
	}
	if len(s.sessions) >= s.cfg.MaxSessions && !s.evictLocked() {
		return nil, busy(http.StatusServiceUnavailable, "%d sessions are live, the server's limit (labmate serve --max-sessions): "+
			"each has a connection, an operation or kernels; a session is dropped after %v without an operation and with no connection",
			len(s.sessions), s.cfg.IdleTimeout)
	}
	ss := &session{s: s, id: id, subs: map[*subscriber]struct{}{}, kernels: map[string]kernel.Kernel{},
		running: map[string]*op{}, used: time.Now(), refs: 1}
	s.sessions[id] = ss
	return ss, nil
}

// release ends a use of ss that open began.
func (s *Server) release(ss *session) {
	s.mu.Lock()
	ss.refs--
	s.mu.Unlock()
}

// lookup returns the live session id, or nil.
func (s *Server) lookup(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// evictLocked drops the least recently used session that holds nothing; false when there
// is none. s.mu is held.
func (s *Server) evictLocked() bool {
	var oldest *session
	for _, ss := range s.sessions {
		if ss.refs > 0 {
			continue
		}
		ss.mu.Lock()
		empty, used := len(ss.running) == 0 && len(ss.kernels) == 0, ss.used
		ss.mu.Unlock()
		if empty && (oldest == nil || used.Before(oldest.used)) {
			oldest = ss
		}
	}
	if oldest == nil {
		return false
	}
	delete(s.sessions, oldest.id)
	return true
}

// reap closes the kernels of the sessions idle for longer than idle, and drops those of
// them that nobody uses.
func (s *Server) reap(idle time.Duration) {
	s.mu.Lock()
	var quiet []*session
	for id, ss := range s.sessions {
		ss.mu.Lock()
		ok := len(ss.running) == 0 && time.Since(ss.used) > idle
		ss.mu.Unlock()
		if !ok {
			continue
		}
		quiet = append(quiet, ss)
		if ss.refs == 0 {
			delete(s.sessions, id)
		}
	}
	s.mu.Unlock()
	for _, ss := range quiet {
		ss.closeKernels(idle)
	}
}

// Append stores m in the session's log and publishes the stored copy: the session is the
// operation.Log of its operations.
func (ss *session) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
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

// submit accepts an operation_request: it is logged (after a session_update that reopens the
// session when it was closed), checked, and either acknowledged and queued or failed as rejected. It returns the operation's id. A request beyond a limit (the
// session's queue, the server's operations, a kernel that cannot be started now) is refused
// with an error wrapping ErrBusy, and not logged.
func (ss *session) submit(ctx context.Context, opID string, req *protocol.Request) (string, error) {
	s := ss.s
	if opID == "" {
		opID = uuid.NewString()
	}
	plan, err := operation.Check(req)
	if err == nil && s.cfg.Start == nil {
		err = fmt.Errorf("%w: this server runs no kernels", operation.ErrRejected)
	}
	// Registered before the request is logged, so that an interrupt racing the request finds it.
	o := &op{id: opID}
	o.ctx, o.cancel = context.WithCancel(s.ctx)
	// Held until the request is logged: a session being closed closes first, then this
	// request reopens it.
	ss.metaMu.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			ss.metaMu.Unlock()
		}
	}
	defer unlock()
	ss.mu.Lock()
	refusal := error(nil)
	switch {
	case ss.running[opID] != nil:
		refusal = fmt.Errorf("operation %s: already running", opID)
	case len(ss.running) >= s.cfg.MaxQueue:
		refusal = busy(http.StatusTooManyRequests, "session %s has %d operations queued or running, the limit of a session (labmate serve --max-queue): "+
			"wait for one to end", ss.id, len(ss.running))
	case err == nil && ss.kernels[plan.Kernel] == nil && !s.pool.canStart(plan.Kernel):
		refusal = s.pool.full()
	}
	if refusal == nil && !s.ops.take() {
		refusal = busy(http.StatusServiceUnavailable, "%d operations are queued or running on this server, its limit (labmate serve --max-operations): "+
			"wait for some to end", s.ops.limit())
	}
	if refusal != nil {
		ss.mu.Unlock()
		o.cancel()
		return "", refusal
	}
	ss.running[opID] = o
	ss.mu.Unlock()
	forget := func() {
		ss.mu.Lock()
		delete(ss.running, opID)
		ss.mu.Unlock()
		s.ops.put()
		o.cancel()
	}
	if rerr := ss.reopenLocked(ctx); rerr != nil {
		forget()
		return "", rerr
	}
	o.life = operation.New(ss, ss.id, opID)
	if aerr := o.life.Request(ctx, req); aerr != nil {
		forget()
		return "", aerr
	}
	unlock()
	if err != nil {
		forget()
		return opID, o.life.Reject(ctx, err)
	}
	o.plan = plan
	if err := o.life.Ack(ctx); err != nil {
		forget()
		return opID, err
	}
	ss.mu.Lock()
	ss.queue = append(ss.queue, o)
	start := !ss.working
	ss.working = true
	ss.mu.Unlock()
	if start {
		s.goWorker(ss.work)
	}
	return opID, nil
}

// interrupt logs an operation_interrupt and stops the operation: a running one is
// interrupted, a queued one leaves the queue and ends at once.
func (ss *session) interrupt(ctx context.Context, opID string, in *protocol.Interrupt) error {
	m, err := protocol.NewMessage(protocol.TypeInterrupt, ss.id, opID, in)
	if err != nil {
		return err
	}
	if _, err := ss.Append(ctx, m); err != nil {
		return err
	}
	ss.mu.Lock()
	o := ss.running[opID]
	queued := o != nil && slices.Contains(ss.queue, o)
	if queued {
		ss.queue = slices.DeleteFunc(ss.queue, func(q *op) bool { return q == o })
	}
	ss.mu.Unlock()
	if o != nil {
		o.cancel()
	}
	if queued {
		ss.finish(o, &protocol.Failed{Reason: protocol.ReasonInterrupted, Error: ss.s.stopReason("before the operation started")})
	}
	return nil
}

// work runs the session's queue, one operation after the other, until it is empty.
func (ss *session) work() {
	for {
		ss.mu.Lock()
		if len(ss.queue) == 0 {
			ss.working = false
			ss.mu.Unlock()
			return
		}
		o := ss.queue[0]
		ss.queue[0] = nil
		ss.queue = ss.queue[1:]
		ss.mu.Unlock()
		ss.run(o)
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
	for _, err := range o.life.Run(o.ctx, k, o.plan, ss.s.execOptions()) {
		if err != nil {
			ss.s.logf("session %s: %v", ss.id, err)
		}
	}
	ss.done(o)
}

// finish ends an operation that did not run with f.
func (ss *session) finish(o *op, f *protocol.Failed) {
	if err := o.life.Fail(context.Background(), f); err != nil {
		ss.s.logf("session %s: terminal message: %v", ss.id, err)
	}
	ss.done(o)
}

// done forgets an operation that ended.
func (ss *session) done(o *op) {
	ss.mu.Lock()
	delete(ss.running, o.id)
	ss.used = time.Now()
	ss.mu.Unlock()
	ss.s.ops.put()
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
	k, ws, err := ss.s.pool.take(ctx, name, ws)
	if err != nil {
		return nil, fmt.Errorf("starting the %s kernel: %w", name, err)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.kernels[name], ss.ws, ss.used = k, ws, time.Now()
	if ss.bench == nil {
		// labmate.bench() in a cell: the workspace's bench, persisted in its journal.
		b, err := benchrun.Serve(ctx, ws, &benchrun.ServeOptions{Keep: true,
			Approve: benchrun.Refuse("a session's cells ask nobody; run the protocol with labmate lab run --approve ask"),
			Note:    ss.noteReading})
		if err != nil {
			ss.s.logf("session %s: no bench: %v", ss.id, err)
		}
		ss.bench = b
	}
	return k, nil
}

// closeKernels closes the session's kernels if it is still idle for longer than idle (0:
// unconditionally, at shutdown).
func (ss *session) closeKernels(idle time.Duration) {
	ss.mu.Lock()
	if idle > 0 && (len(ss.running) > 0 || time.Since(ss.used) <= idle) {
		ss.mu.Unlock()
		return
	}
	ks, b := ss.kernels, ss.bench
	ss.kernels, ss.bench = map[string]kernel.Kernel{}, nil
	ss.mu.Unlock()
	for _, k := range ks {
		k.Close()
	}
	if b != nil {
		if err := b.Close(); err != nil {
			ss.s.logf("session %s: the bench: %v", ss.id, err)
		}
	}
}

// newWorkspace makes a fresh workspace directory under root.
func newWorkspace(root string) (string, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
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
