package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// Session owns a workspace, its kernels (one per kind, started on first use), the queue of
// its operations (run in order by a worker that runs while there are some) and the
// subscribers of its live stream. It lives in the server while it is used; the janitor drops
// one that has been idle for Limits.Idle (closing its kernels), and a later request
// for it makes it anew over the same log, in a fresh workspace.
type Session struct {
	s  *Runner
	id string

	refs int // connections, Run calls and requests using it (guarded by Runner.mu)

	// metaMu serialises the session's updates (name, closed) with the requests that reopen it.
	metaMu sync.Mutex
	meta   *protocol.SessionUpdate // the latest update; nil: not read from the log yet

	// mu serialises append+publish, so subscribers see seq order, and guards the fields
	// below. It is never held while opening, reading or waiting on the workspace's files or
	// on a kernel (which code in the workspace controls), and the server's lock never waits
	// for it (TryLock): one session's stuck workspace stops that session alone.
	mu      sync.Mutex
	subMu   sync.Mutex // guards subs: held briefly, never while appending
	subs    map[*Subscriber]struct{}
	ws      string
	kernels map[string]kernel.Kernel
	bench   *benchrun.Served // the workspace's bench, served while kernels run there
	serving bool             // the bench is being started (outside mu)
	used    time.Time

	// busy is the host-side work on the workspace under way (a kernel's start, the bench's),
	// which /healthz reports once it takes longer than stuckAfter.
	busy atomic.Pointer[busyNote]

	readsMu sync.Mutex
	reads   map[string]*bench.Reading // the last plate-reader reading of each labware, by load name

	last    int64          // the seq of the latest message this process appended (0: none yet)
	queue   []*op          // accepted, not started
	working bool           // a worker is running the queue
	running map[string]*op // queued or running operations by id
}

// op is one accepted operation.
type op struct {
	id     string
	life   *operation.Op
	plan   *operation.Plan
	opts   *operation.Options // nil: the runner's (execOptions)
	ctx    context.Context
	cancel context.CancelFunc
}

// busyNote is what a session is doing on its workspace, since when.
type busyNote struct {
	what  string
	since time.Time
}

// stuckAfter is how long host-side work on a session's workspace (starting a kernel, serving
// its bench) may take before /healthz reports the session stuck.
const stuckAfter = 30 * time.Second

// doing notes that the session is doing what, until the returned func is called.
func (ss *Session) doing(what string) func() {
	n := &busyNote{what: what, since: time.Now()}
	ss.busy.Store(n)
	return func() { ss.busy.CompareAndSwap(n, nil) }
}

// StuckSession is one session in /healthz's stuck_sessions.
type StuckSession struct {
	ID    string    `json:"id"`
	Doing string    `json:"doing"`
	Since time.Time `json:"since"`
}

// Stuck lists the sessions whose host-side work has taken longer than stuckAfter, oldest
// first. It takes no session's lock.
func (s *Runner) Stuck() []StuckSession {
	s.mu.Lock()
	all := slices.Collect(maps.Values(s.sessions))
	s.mu.Unlock()
	out := []StuckSession{}
	for _, ss := range all {
		if n := ss.busy.Load(); n != nil && time.Since(n.since) > stuckAfter {
			out = append(out, StuckSession{ID: ss.id, Doing: n.what, Since: n.since.UTC()})
		}
	}
	slices.SortFunc(out, func(a, b StuckSession) int { return a.Since.Compare(b.Since) })
	return out
}

// Open returns the live session id, making it when it is new; its caller releases it. A new
// session beyond Limits.Sessions takes the place of the least recently used one that
// holds nothing (no connection, operation or kernel), or is refused.
func (s *Runner) Open(id string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[id]; ss != nil {
		ss.refs++
		return ss, nil
	}
	if len(s.sessions) >= s.cfg.Limits.Sessions && !s.evictLocked() {
		return nil, busy(false, "%d sessions are live, the server's limit (labmate serve --max-sessions): "+
			"each has a connection, an operation or kernels; a session is dropped after %v without an operation and with no connection",
			len(s.sessions), s.cfg.Limits.Idle)
	}
	ss := &Session{s: s, id: id, subs: map[*Subscriber]struct{}{}, kernels: map[string]kernel.Kernel{},
		running: map[string]*op{}, used: time.Now(), refs: 1}
	s.sessions[id] = ss
	return ss, nil
}

// Release ends a use of ss that open began.
func (s *Runner) Release(ss *Session) {
	s.mu.Lock()
	ss.refs--
	s.mu.Unlock()
}

// Lookup returns the live session id, or nil.
func (s *Runner) Lookup(id string) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// evictLocked drops the least recently used session that holds nothing; false when there
// is none. s.mu is held; a session whose lock is taken is busy, and skipped (the server's
// lock never waits for a session's).
func (s *Runner) evictLocked() bool {
	var oldest *Session
	for _, ss := range s.sessions {
		if ss.refs > 0 || !ss.mu.TryLock() {
			continue
		}
		empty, used := len(ss.running) == 0 && len(ss.kernels) == 0 && !ss.serving, ss.used
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

// reap closes the kernels of the sessions idle for longer than idle (not those of an agent run
// that runs), and drops those of them that nobody uses. A session whose lock is taken is not
// idle; the server's lock never waits for a session's, and each session's kernels are closed
// on their own, so one that does not close holds up no other.
func (s *Runner) reap(idle time.Duration) {
	s.mu.Lock()
	var quiet []*Session
	for id, ss := range s.sessions {
		if s.runs[id] != nil || !ss.mu.TryLock() {
			continue // an agent run's kernels live while it runs, however long its model thinks
		}
		ok := len(ss.running) == 0 && !ss.serving && time.Since(ss.used) > idle
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
		go ss.closeKernels(idle)
	}
}

// Append stores m in the session's log and publishes the stored copy to the session's
// subscribers once the log has it for good (show): the session is the operation.Log of its
// operations.
func (ss *Session) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.appendLocked(ctx, m)
}

// appendLocked is Append with ss.mu held.
func (ss *Session) appendLocked(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	stored, err := ss.s.store.Append(ctx, m)
	if err != nil {
		return nil, err
	}
	ss.last = stored.Seq
	ss.subMu.Lock()
	listened := len(ss.subs) > 0
	ss.subMu.Unlock()
	if listened {
		f, err := frameOf(stored)
		if err != nil {
			return nil, err
		}
		ss.s.show(ss, f)
	}
	return stored, nil
}

// Submit accepts an operation_request: it is logged (after a session_update that reopens the
// session when it was closed), checked, and either acknowledged and queued or failed as rejected. It returns the operation's id. A request beyond a limit (the
// session's queue, the server's operations, a kernel that cannot be started now) is refused
// with an error wrapping ErrBusy, and not logged.
func (ss *Session) Submit(ctx context.Context, opID string, req *protocol.Request) (string, error) {
	return ss.submit(ctx, opID, req, nil)
}

// submit is Submit of an operation watched with opts (nil: the runner's, execOptions).
func (ss *Session) submit(ctx context.Context, opID string, req *protocol.Request, opts *operation.Options) (string, error) {
	s := ss.s
	if opID == "" {
		opID = uuid.NewString()
	}
	plan, err := operation.Check(req)
	if err == nil && s.cfg.Kernels == nil {
		err = fmt.Errorf("%w: this server runs no kernels", operation.ErrRejected)
	}
	// Registered before the request is logged, so that an interrupt racing the request finds it.
	o := &op{id: opID, opts: opts}
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
	case len(ss.running) >= s.cfg.Limits.Queue:
		refusal = busy(true, "session %s has %d operations queued or running, the limit of a session (labmate serve --max-queue): "+
			"wait for one to end", ss.id, len(ss.running))
	case err == nil && ss.kernels[plan.Kernel] == nil && !s.pool.canStart(plan.Kernel):
		refusal = s.pool.full()
	}
	if refusal == nil && !s.ops.take() {
		refusal = busy(false, "%d operations are queued or running on this server, its limit (labmate serve --max-operations): "+
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
	// The caller tells its client the operation is accepted: the log has it for good first.
	if err := s.durable(ctx); err != nil {
		return opID, err
	}
	return opID, nil
}

// Interrupt logs an operation_interrupt and stops the operation: a running one is
// interrupted, a queued one leaves the queue and ends at once. An operation this runner does
// not run is interrupted through the log by the process that runs it (elsewhere.go).
func (ss *Session) Interrupt(ctx context.Context, opID string, in *protocol.Interrupt) error {
	ss.mu.Lock()
	o := ss.running[opID]
	ss.mu.Unlock()
	if o == nil {
		return ss.s.interruptElsewhere(ctx, ss.id, opID, in)
	}
	m, err := protocol.NewMessage(protocol.TypeInterrupt, ss.id, opID, in)
	if err != nil {
		return err
	}
	if _, err := ss.Append(ctx, m); err != nil {
		return err
	}
	if err := ss.s.durable(ctx); err != nil { // the caller tells its client the interrupt is taken
		return err
	}
	ss.stop(o)
	return nil
}

// stop stops operation o, whose interrupt is logged: a running one is interrupted, a queued
// one leaves the queue and ends at once.
func (ss *Session) stop(o *op) {
	ss.mu.Lock()
	queued := ss.running[o.id] == o && slices.Contains(ss.queue, o)
	if queued {
		ss.queue = slices.DeleteFunc(ss.queue, func(q *op) bool { return q == o })
	}
	ss.mu.Unlock()
	o.cancel()
	if queued {
		ss.finish(o, &protocol.Failed{Reason: protocol.ReasonInterrupted, Error: ss.s.stopReason("before the operation started")})
	}
}

// work runs the session's queue, one operation after the other, until it is empty.
func (ss *Session) work() {
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

func (ss *Session) run(o *op) {
	if o.ctx.Err() != nil { // interrupted or shut down while queued
		ss.finish(o, &protocol.Failed{Reason: protocol.ReasonInterrupted, Error: ss.s.stopReason("before the operation started")})
		return
	}
	k, err := ss.kernel(o.ctx, o.plan.Kernel)
	if err != nil {
		ss.finish(o, &protocol.Failed{Reason: protocol.ReasonError, Error: err.Error()})
		return
	}
	opts := o.opts
	if opts == nil {
		opts = ss.s.execOptions()
	} else if opts.Artifacts == nil && ss.s.cfg.Artifacts != nil {
		o := *opts
		o.Artifacts = ss.s.cfg.Artifacts
		opts = &o
	}
	gone := false // the interpreter died with the cell
	for m, err := range o.life.Run(o.ctx, k, o.plan, opts) {
		if err != nil {
			ss.s.Logf("session %s: %v", ss.id, err)
			continue
		}
		if f, ok := m.Payload.(*protocol.Failed); ok {
			gone = f.Reason == protocol.ReasonCrashed || f.Reason == protocol.ReasonError && f.Result == nil
		}
	}
	if gone {
		ss.dropKernel(o.plan.Kernel, k) // the next cell starts a fresh one
	}
	ss.done(o)
}

// dropKernel closes k, the session's kernel of that name, and forgets it.
func (ss *Session) dropKernel(name string, k kernel.Kernel) {
	ss.mu.Lock()
	mine := ss.kernels[name] == k
	if mine {
		delete(ss.kernels, name)
	}
	ss.mu.Unlock()
	if mine {
		k.Close()
	}
}

// useWorkspace makes ws (when set) the session's workspace, unless it has one already: an
// agent run's session works in the run's workspace.
func (ss *Session) useWorkspace(ws string) {
	if ws == "" {
		return
	}
	ss.mu.Lock()
	if ss.ws == "" && len(ss.kernels) == 0 {
		ss.ws = ws
	}
	ss.mu.Unlock()
}

// finish ends an operation that did not run with f.
func (ss *Session) finish(o *op, f *protocol.Failed) {
	if err := o.life.Fail(context.Background(), f); err != nil {
		ss.s.Logf("session %s: terminal message: %v", ss.id, err)
	}
	ss.done(o)
}

// done forgets an operation that ended.
func (ss *Session) done(o *op) {
	ss.mu.Lock()
	delete(ss.running, o.id)
	ss.used = time.Now()
	ss.mu.Unlock()
	ss.s.ops.put()
	o.cancel()
}

// kernel returns the session's kernel of that kind, starting it on first use. The session's
// first kernel may come pre-warmed from the pool; its workspace becomes the session's.
func (ss *Session) kernel(ctx context.Context, name string) (kernel.Kernel, error) {
	ss.mu.Lock()
	k, ws := ss.kernels[name], ss.ws
	ss.mu.Unlock()
	if k != nil {
		return k, nil
	}
	done := ss.doing("starting the " + name + " kernel")
	k, ws, err := ss.s.pool.take(ctx, name, ws)
	done()
	if err != nil {
		return nil, fmt.Errorf("starting the %s kernel: %w", name, err)
	}
	ss.mu.Lock()
	ss.kernels[name], ss.ws, ss.used = k, ws, time.Now()
	serve := ss.bench == nil && !ss.serving
	ss.serving = ss.serving || serve
	ss.mu.Unlock()
	if serve {
		ss.serveBench(ctx, ws)
	}
	return k, nil
}

// serveBench serves the workspace's bench (labmate.bench() in a cell), persisted in its
// journal, without holding the session's lock: it opens and replays files in the workspace.
// A bench that cannot be served (a journal that code in the workspace replaced with a FIFO or
// a symbolic link) is logged, and the session's bench endpoint says why.
func (ss *Session) serveBench(ctx context.Context, ws string) {
	done := ss.doing("serving the bench")
	b, err := benchrun.Serve(ctx, ws, &benchrun.ServeOptions{Keep: true,
		Approve: benchrun.Refuse("a session's cells ask nobody; run the protocol with labmate lab run --approve ask"),
		Note:    ss.noteReading})
	done()
	if err != nil {
		ss.s.Logf("session %s: no bench: %v", ss.id, err)
	}
	ss.mu.Lock()
	ss.serving = false
	closed := len(ss.kernels) == 0 // its kernels were closed meanwhile
	if !closed {
		ss.bench = b
	}
	ss.mu.Unlock()
	if closed && b != nil {
		if err := b.Close(); err != nil {
			ss.s.Logf("session %s: the bench: %v", ss.id, err)
		}
	}
}

// closeKernels closes the session's kernels if it is still idle for longer than idle (0:
// unconditionally, at shutdown; negative: when no operation runs).
func (ss *Session) closeKernels(idle time.Duration) {
	ss.mu.Lock()
	if idle != 0 && len(ss.running) > 0 || idle > 0 && time.Since(ss.used) <= idle {
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
			ss.s.Logf("session %s: the bench: %v", ss.id, err)
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
