package runner

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/labmate/labmate/job"
	jobtools "github.com/labmate/labmate/job/tools"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// Jobs in the server. Every job the server follows is an operation in the protocol log: its
// own session, named by the job's id, in which the job's id is the operation id, run by
// operation.RunJob (request → ack with the job → start → one progress per log line, with its
// job_seq, telemetry and perception's verdicts → terminal). Clients follow it like any other
// session (WebSocket, GET /v1/sessions/ID/messages); an Error verdict cancels the job unless
// its spec's hotfix is off. A local job's supervisor (labmate job supervise) runs its
// perception and Hot-Fix where it runs; the runner then follows the job passively, publishing
// the supervisor's verdicts in the job's stream instead of judging it a second time.
//
// A job outlives the server. Close detaches from the jobs it follows (they run on, their
// operations stay open in the log); New follows again every job operation left open
// (operation.AttachJob, from its last job_seq, so no line is logged twice), and the server
// adopts the jobs it finds running in its schedulers that the log does not have — submitted
// with labmate job submit over the same data directory — on start and every
// Config.JobPoll, following them from their first line.
//
// Faces submit through Server.Jobs, never Config.Jobs directly: that is what puts a job in
// the log and under perception, and what assigns its workspace — a client of the server
// never chooses a host directory (see jobWorkspace).

// jobTracker is what the server keeps in memory of its jobs: which it follows now.
type jobTracker struct {
	mu      sync.Mutex
	follows map[job.ID]bool
	settled map[job.ID]bool // ended jobs adopt is done with: logged ended, or with no spec to log
	pending int             // submissions between the scheduler's Submit and being followed
}

const defaultJobPoll = 3 * time.Second

// endedPerLook bounds the ended jobs one look adopts (each is followed through its whole log),
// so that a job directory full of jobs that ended while no server ran is logged a few at a time.
const endedPerLook = 8

// Jobs returns the schedulers every face of the server uses (REST, MCP, the agent), by kind:
// Submit goes through the server — the job gets a workspace the server assigns (the spec's
// workspace, relative, is taken inside it), is logged as an operation and watched by
// perception — and Status, Logs, Cancel, List and Watch pass through to Config.Jobs. Nil
// when the server runs no jobs.
func (s *Runner) Jobs() job.Schedulers { return s.JobsIn("") }

// JobsIn is Jobs for an in-process caller with a workspace of its own under
// Config.Workspaces (an agent run's): a job it submits runs in that workspace, or in a
// directory inside it, and is followed in the log like any other; a workspace outside root is
// refused.
func (s *Runner) JobsIn(root string) job.Schedulers {
	if s.cfg.Jobs == nil {
		return nil
	}
	m := job.Schedulers{}
	for k, sch := range s.cfg.Jobs {
		if sch != nil {
			m[k] = &serverScheduler{Scheduler: sch, s: s, kind: k, root: root}
		}
	}
	return m
}

// serverScheduler is one of Config.Jobs with Submit through the server, in the workspaces it
// assigns, or inside root.
type serverScheduler struct {
	job.Scheduler
	s    *Runner
	kind string
	root string
}

func (ss *serverScheduler) Submit(ctx context.Context, spec *job.Spec) (job.ID, error) {
	return ss.s.submitJob(ctx, ss.kind, spec, ss.root)
}

// Usage passes job.Sampler through, when the scheduler offers it.
func (ss *serverScheduler) Usage(ctx context.Context, id job.ID) (*job.Usage, error) {
	if m, ok := ss.Scheduler.(job.Sampler); ok {
		return m.Usage(ctx, id)
	}
	return nil, fmt.Errorf("%w: the %s scheduler does not measure its jobs", errors.ErrUnsupported, ss.kind)
}

// submitted is a scheduler whose Submit returns a job already submitted: RunJob logs the
// request and the ack of a job the server submitted (or adopted) before.
type submitted struct {
	job.Scheduler
	id job.ID
}

func (p submitted) Submit(context.Context, *job.Spec) (job.ID, error) { return p.id, nil }

func (p submitted) Usage(ctx context.Context, id job.ID) (*job.Usage, error) {
	if m, ok := p.Scheduler.(job.Sampler); ok {
		return m.Usage(ctx, id)
	}
	return nil, errors.ErrUnsupported
}

// Supervised and Verdicts pass job.Supervised through: a job its supervisor watches is
// followed passively (operation.RunJob), the supervisor's verdicts published.
func (p submitted) Supervised(ctx context.Context, id job.ID) bool {
	sv, ok := p.Scheduler.(job.Supervised)
	return ok && sv.Supervised(ctx, id)
}

func (p submitted) Verdicts(ctx context.Context, id job.ID) ([]*protocol.Verdict, error) {
	if sv, ok := p.Scheduler.(job.Supervised); ok {
		return sv.Verdicts(ctx, id)
	}
	return nil, nil
}

// ErrJobSpec is matched (errors.Is) by the reasons SubmitJob refuses a job: the client's
// to fix.
var ErrJobSpec = errors.New("job spec")

// specError is a refusal of a job spec, in its own words.
type specError struct{ error }

func (e specError) Is(target error) bool { return target == ErrJobSpec }
func (e specError) Unwrap() error        { return e.error }

// SubmitJob submits spec to the scheduler of kind, in a workspace the server assigns
// (spec.Workspace, when set, must be a relative directory inside it), and follows it as an
// operation in session ID, operation ID, where ID is the job's id.
func (s *Runner) SubmitJob(ctx context.Context, kind string, spec *job.Spec) (job.ID, error) {
	return s.submitJob(ctx, kind, spec, "")
}

// submitJob is SubmitJob; with root, the job runs in spec.Workspace, which must be root or a
// directory inside it, and is not removed when the job is refused.
func (s *Runner) submitJob(ctx context.Context, kind string, spec *job.Spec, root string) (job.ID, error) {
	if s.cfg.Jobs == nil {
		return "", errors.New("this server runs no jobs")
	}
	sched := s.cfg.Jobs[kind]
	if sched == nil {
		return "", specError{fmt.Errorf("job spec: scheduler %q: not available here (choose %s)", kind, strings.Join(s.JobKinds(), " or "))}
	}
	if spec == nil {
		return "", specError{errors.New("job spec: missing")}
	}
	c := *spec
	ws, fresh := spec.Workspace, root == ""
	var err error
	if fresh {
		ws, err = s.jobWorkspace(spec.Workspace)
	} else {
		ws, err = s.inside(root, ws)
	}
	if err != nil {
		return "", err
	}
	drop := func() {
		if fresh {
			os.RemoveAll(ws)
		}
	}
	c.Workspace = ws
	req := operation.JobRequest(&c)
	plan, err := operation.CheckJob(req)
	if err != nil {
		drop()
		return "", specError{err}
	}
	s.jobs.mu.Lock()
	s.jobs.pending++
	s.jobs.mu.Unlock()
	defer func() {
		s.jobs.mu.Lock()
		s.jobs.pending--
		s.jobs.mu.Unlock()
	}()
	id, err := sched.Submit(ctx, plan.Spec)
	if err != nil {
		drop()
		return "", specError{fmt.Errorf("submitting the job: %w", err)}
	}
	// Returned once the job is acknowledged in the log, so that its session has it.
	acked := make(chan struct{})
	var once sync.Once
	ack := func() { once.Do(func() { close(acked) }) }
	if !s.followJob(id, string(id), func(ctx context.Context, log operation.Log) iter.Seq2[*operation.Message, error] {
		return func(yield func(*operation.Message, error) bool) {
			defer ack()
			for m, err := range operation.RunJob(ctx, log, string(id), string(id), submitted{sched, id}, req, s.jobOptions()) {
				if err != nil || m.Type != protocol.TypeRequest {
					ack()
				}
				if !yield(m, err) {
					return
				}
			}
		}
	}) {
		return id, nil // the server is closing: the next one adopts the job
	}
	select {
	case <-acked:
	case <-ctx.Done():
	}
	return id, s.durable(ctx) // the caller tells its client: the log has it for good first
}

// JobKinds are the kinds of Config.Jobs the runner has a scheduler for, sorted.
func (s *Runner) JobKinds() []string {
	ks := make([]string, 0, len(s.cfg.Jobs))
	for k, v := range s.cfg.Jobs {
		if v != nil {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

func (s *Runner) jobOptions() *operation.JobOptions {
	o := &operation.JobOptions{Judge: s.cfg.Judge}
	if s.cfg.Artifacts != nil {
		o.Artifacts = s.cfg.Artifacts
	}
	return o
}

// inside checks that ws is root or inside it, root being inside Config.Workspaces, with their
// symbolic links resolved, and returns ws resolved: the path it checked, which the scheduler
// opens with no link followed (a link swapped in since has the job refused).
func (s *Runner) inside(root, ws string) (string, error) {
	within := func(dir, p string) (string, bool) {
		rd, err1 := filepath.EvalSymlinks(dir)
		rp, err2 := filepath.EvalSymlinks(p)
		if err1 != nil || err2 != nil {
			return "", false
		}
		rel, err := filepath.Rel(rd, rp)
		return rp, err == nil && filepath.IsLocal(rel)
	}
	_, ok := within(s.cfg.Workspaces, root)
	real := ""
	if ok = ok && filepath.IsAbs(ws); ok {
		real, ok = within(root, ws)
	}
	if s.cfg.Workspaces == "" || !ok {
		return "", specError{fmt.Errorf("job spec: workspace %q: not inside the caller's workspace %s", ws, root)}
	}
	return real, nil
}

// jobWorkspace makes the workspace of a job a client submits: a fresh directory under
// Config.Workspaces/jobs, or the directory rel inside it. A client names no host directory:
// an absolute rel, or one that climbs out ("..", a symbolic link), is refused.
func (s *Runner) jobWorkspace(rel string) (string, error) {
	if err := jobtools.ConfinedPath(rel); err != nil {
		return "", specError{fmt.Errorf("job spec: workspace: %w", err)}
	}
	base := s.cfg.Workspaces
	if base == "" {
		base = filepath.Join(os.TempDir(), "labmate-workspaces")
	}
	parent := filepath.Join(base, "jobs")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("making the job's workspace: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "job-")
	if err != nil {
		return "", fmt.Errorf("making the job's workspace: %w", err)
	}
	if rel == "" {
		return dir, nil
	}
	root, err := os.OpenRoot(dir)
	if err == nil {
		err = root.MkdirAll(filepath.Clean(rel), 0o755) // os.Root refuses a path that leaves it
		root.Close()
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", specError{fmt.Errorf("job spec: workspace: %q: %w", rel, err)}
	}
	full := filepath.Join(dir, rel)
	real, err := filepath.EvalSymlinks(full)
	realDir, err2 := filepath.EvalSymlinks(dir)
	if err != nil || err2 != nil || !strings.HasPrefix(real+string(filepath.Separator), realDir+string(filepath.Separator)) {
		os.RemoveAll(dir)
		return "", specError{fmt.Errorf("job spec: workspace: %q: leaves the job's workspace, which the server assigns", rel)}
	}
	return real, nil
}

// followJob runs the operation of job id in session in the background, unless it is
// Followed already or the server is closing; false then. Its messages go through the live
// session, so that its subscribers see them at once.
func (s *Runner) followJob(id job.ID, session string, run func(ctx context.Context, log operation.Log) iter.Seq2[*operation.Message, error]) bool {
	s.jobs.mu.Lock()
	if s.jobs.follows[id] {
		s.jobs.mu.Unlock()
		return false
	}
	s.jobs.follows[id] = true
	s.jobs.mu.Unlock()
	var log operation.Log = s.store
	ss, err := s.Open(session)
	if err == nil {
		log = ss
	} // else: no room for another live session; nobody follows this one live
	log = detachedLog{log}
	done := func() {
		if ss != nil {
			s.Release(ss)
		}
		s.jobs.mu.Lock()
		delete(s.jobs.follows, id)
		s.jobs.mu.Unlock()
	}
	f := func() {
		defer done()
		for _, err := range run(s.ctx, log) {
			if err != nil {
				if !errors.Is(err, operation.ErrDetached) || s.ctx.Err() == nil {
					s.Logf("job %s: %v", id, err)
				}
				return
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		go done()
		return false
	}
	s.wg.Go(f)
	return true
}

// detachedLog appends whatever its caller's context says: a job's request and ack are logged
// even when the server closes between them.
type detachedLog struct{ operation.Log }

func (l detachedLog) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	return l.Log.Append(context.WithoutCancel(ctx), m)
}

// Followed reports whether the server follows job id now.
func (s *Runner) Followed(id job.ID) bool {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	return s.jobs.follows[id]
}

// settled reports whether adopt is done with ended job id.
func (s *Runner) settled(id job.ID) bool {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	return s.jobs.settled[id]
}

// settle marks ended job id as one adopt is done with.
func (s *Runner) settle(id job.ID) {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	s.jobs.settled[id] = true
}

// reattachJobs follows again every job operation the log has open: a previous server
// Followed them when it stopped.
func (s *Runner) reattachJobs(ctx context.Context) {
	sessions, err := s.store.Sessions(ctx)
	if err != nil {
		s.Logf("jobs: listing the sessions: %v", err)
		return
	}
	n := 0
	for _, si := range sessions {
		ops, err := s.store.Operations(ctx, si.ID)
		if err != nil {
			continue
		}
		for _, o := range ops {
			if o.Kind == protocol.KindJob && !o.State.Terminal() && s.attach(ctx, si.ID, o.ID) {
				n++
			}
		}
	}
	if n > 0 {
		s.Logf("following %d jobs again that the previous server followed", n)
	}
}

// attach follows the open job operation op of session on from where its log stands. A job
// whose scheduler this server does not have is closed in the log as failed, saying so.
func (s *Runner) attach(ctx context.Context, session, op string) bool {
	var msgs []*protocol.EnhancedMessage
	for m, err := range s.store.Operation(ctx, session, op) {
		if err != nil {
			s.Logf("job operation %s/%s: reading it: %v", session, op, err)
			return false
		}
		msgs = append(msgs, m)
	}
	at, err := operation.ReadJobAttachment(slices.Values(msgs))
	if err != nil {
		if len(msgs) > 0 && !msgs[len(msgs)-1].Type.Terminal() {
			s.failJobOp(session, op, "following the job again: "+err.Error())
		}
		return false
	}
	sched := s.cfg.Jobs[job.Kind(at.Job)]
	if sched == nil {
		s.failJobOp(session, op, fmt.Sprintf("job %s: this server has no %s scheduler to follow it with (labmate job status %s reaches it)", at.Job, job.Kind(at.Job), at.Job))
		return false
	}
	return s.followJob(at.Job, session, func(ctx context.Context, log operation.Log) iter.Seq2[*operation.Message, error] {
		return operation.AttachJob(ctx, log, session, op, sched, at, s.jobOptions())
	})
}

// failJobOp closes a job operation the server cannot follow.
func (s *Runner) failJobOp(session, op, why string) {
	m, err := protocol.NewMessage(protocol.TypeFailed, session, op, protocol.Failed{Reason: protocol.ReasonError, Error: why})
	if err == nil {
		_, err = s.store.Append(context.Background(), m)
	}
	if err != nil {
		s.Logf("job operation %s/%s: closing it: %v", session, op, err)
	}
}

// adopter follows, on start and every Config.JobPoll, the jobs that run in the schedulers
// without being followed.
func (s *Runner) adopter() {
	t := time.NewTicker(s.cfg.JobPoll)
	defer t.Stop()
	for {
		s.adopt(s.ctx)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			return
		}
	}
}

// adopt follows every job that nobody follows: one the log has open is attached; one it
// does not have (labmate job submit) becomes an operation in its own session, its request
// built from its spec, followed from its first line — to its end, if it ended between two
// looks (a short job) or while no server ran, endedPerLook of those at a time.
func (s *Runner) adopt(ctx context.Context) {
	ended := 0
	for _, kind := range s.JobKinds() {
		sched := s.cfg.Jobs[kind]
		all, err := sched.List(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.Logf("jobs: listing the %s jobs: %v", kind, err)
			}
			continue
		}
		for _, st := range all {
			if ctx.Err() != nil {
				return
			}
			if s.Followed(st.ID) || s.settled(st.ID) {
				continue
			}
			if st.State.Terminal() {
				if ended++; ended > endedPerLook {
					continue // the next look
				}
			}
			s.jobs.mu.Lock()
			busy := s.jobs.pending > 0 // it may be the one being submitted: the next round sees
			s.jobs.mu.Unlock()
			if busy {
				return
			}
			s.adoptJob(ctx, sched, st)
		}
	}
}

// adoptJob follows job st of sched unless it is followed: one the log has open is attached;
// one it does not have becomes an operation in its own session, its request built from its
// spec, followed from its first line (to its end, if it has ended).
func (s *Runner) adoptJob(ctx context.Context, sched job.Scheduler, st *job.Status) {
	if s.Followed(st.ID) {
		return
	}
	id := string(st.ID)
	ops, err := s.store.Operations(ctx, id)
	switch {
	case errors.Is(err, protocol.ErrUnknownSession):
	case err != nil:
		return
	default:
		i := slices.IndexFunc(ops, func(o protocol.OperationInfo) bool { return o.ID == id })
		if i >= 0 {
			if ops[i].Kind == protocol.KindJob && !ops[i].State.Terminal() {
				s.attach(ctx, id, id)
			} else if st.State.Terminal() {
				s.settle(st.ID)
			}
			return // it ended in the log (rejected, or its scheduler was missing): left alone
		}
	}
	if st.Spec == nil {
		if st.State.Terminal() {
			s.settle(st.ID) // nothing to log it by, now or later
		}
		return
	}
	req := operation.JobRequest(st.Spec)
	jid := st.ID
	if s.followJob(jid, id, func(ctx context.Context, log operation.Log) iter.Seq2[*operation.Message, error] {
		return operation.RunJob(ctx, log, id, id, submitted{sched, jid}, req, s.jobOptions())
	}) {
		s.Logf("job %s: adopted (submitted outside the server): following it with perception", jid)
	}
}
