package operation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// A job as an operation. An operation of kind "job" submits a job.Spec to a job.Scheduler and
// follows it through the same lifecycle and perception as a cell:
//
//	operation_request {kind: job, job: SPEC}
//	operation_ack     {state: ACKNOWLEDGED, job: {id, native, state: QUEUED}}   (submitted)
//	operation_start   {state: STARTED, job: {id, native, state: RUNNING}}
//	operation_progress…  each log line as a stdout, stderr or file observation (a followed
//	                  file's lines name the file, as for a cell's follow), carrying its
//	                  job_seq; the telemetry the profile reads from it; resource samples;
//	                  perception's verdicts
//	operation_complete / operation_failed, with the job's exit code, signal and reason
//
// An Error verdict cancels the job (Scheduler.Cancel, the verdict as the reason) unless its
// spec's hotfix is off, and the operation fails with reason interrupted and the verdict, like
// a Hot-Fix; under on_warning a Warning does too.
//
// A job outlives whoever follows it. When the follower's ctx ends, or its iteration is
// stopped, the job runs on and the operation stays open in the log: the iteration's last
// element is an error wrapping ErrDetached. AttachJob (after a restart, with where the log
// stands, JobAttachment) follows it on to its end without repeating a line: it replays the
// lines already logged through a fresh Monitor, silently, so perception judges the rest
// with the whole history, and reads the job's log from the next line.

// ErrDetached ends the iteration of a job operation whose follower stopped while the job
// still runs: the operation is open in the log, and AttachJob takes it up again.
var ErrDetached = errors.New("operation: detached from the job, which runs on")

// JobPlan is a checked job request: the job to submit and how to watch it.
type JobPlan struct {
	Spec   *job.Spec
	Hotfix protocol.Hotfix // the spec's, defaulted to on_error
	Watch  *perception.Config
}

// JobRequest is spec as the operation_request of a job operation. watch, perception and
// expectSilence tune perception as for an exec (protocol.Request). CheckJob validates it.
func JobRequest(spec *job.Spec) *protocol.Request {
	raw, _ := json.Marshal(spec) // a Spec is plain data
	return &protocol.Request{Kind: protocol.KindJob, Job: raw}
}

// CheckJob validates a job request before anything is submitted; its errors wrap ErrRejected
// and name the field at fault. The profile is the spec's, or chosen from its command or script
// (qe for pw.x, lammps for lmp); the files the script visibly writes its progress to
// (FollowTargets: `pw.x -in x.in > x.out`, LAMMPS' log under -screen none) are followed
// beside the spec's. Perception knows it watches a batch job (perception.Expectation.Batch)
// and its wall time.
func CheckJob(req *protocol.Request) (*JobPlan, error) {
	switch {
	case req == nil:
		return nil, fmt.Errorf("%w: no request", ErrRejected)
	case req.Kind != protocol.KindJob:
		return nil, fmt.Errorf("%w: kind %q: a job request is of kind \"job\"", ErrRejected, req.Kind)
	case len(req.Job) == 0:
		return nil, fmt.Errorf("%w: job: missing: send the job spec", ErrRejected)
	case req.Kernel != "" || req.Code != "":
		return nil, fmt.Errorf("%w: kernel, code: a job runs the command or script of its spec", ErrRejected)
	case req.TimeoutS != 0:
		return nil, fmt.Errorf("%w: timeout_s: a job's limit is its spec's resources.wall_time", ErrRejected)
	case req.Hotfix != "" || req.Profile != "" || len(req.Follow) > 0:
		return nil, fmt.Errorf("%w: hotfix, profile, follow: give them in the job spec", ErrRejected)
	case req.ExpectSilenceS < 0:
		return nil, fmt.Errorf("%w: expect_silence_s: %v is negative", ErrRejected, req.ExpectSilenceS)
	}
	spec := &job.Spec{}
	dec := json.NewDecoder(bytes.NewReader(req.Job))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return nil, fmt.Errorf("%w: job: %w", ErrRejected, err)
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	if err := sandbox.CheckUserEnv(spec.Env); err != nil {
		return nil, fmt.Errorf("%w: job spec: %w", ErrRejected, err)
	}
	code := jobCode(spec)
	profile := perception.ProfileFor("shell", code)
	if spec.Profile != "" {
		var err error
		if profile, err = perception.ParseProfile(spec.Profile); err != nil {
			return nil, fmt.Errorf("%w: job spec: profile: %w", ErrRejected, err)
		}
	}
	if len(spec.Follow) > maxFollowed {
		return nil, fmt.Errorf("%w: job spec: follow: too many files: at most %d", ErrRejected, maxFollowed)
	}
	spec.Follow = withTargets(spec.Follow, "shell", code)
	th, err := perception.ParseThresholds(req.Perception)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	p := &JobPlan{Spec: spec, Hotfix: spec.Hotfix, Watch: &perception.Config{
		Watch:      req.Watch,
		Expect:     perception.Expectation{Silence: seconds(req.ExpectSilenceS), Batch: true, WallTime: spec.Resources.WallTime},
		Thresholds: th, Profile: profile, Code: code,
	}}
	if p.Hotfix == "" {
		p.Hotfix = protocol.HotfixOnError
	}
	if _, err := perception.New(p.Watch); err != nil {
		// A bad constraint's error names the watch and the column at fault already.
		return nil, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	return p, nil
}

// jobCode is what the job runs, as shell code: its script, or its command's words.
func jobCode(s *job.Spec) string {
	if s.Script != "" {
		return s.Script
	}
	return strings.Join(s.Command, " ")
}

// JobOptions are the optional parts of RunJob and AttachJob. A nil *JobOptions means none.
type JobOptions struct {
	// Judge is as for Exec (Options.Judge).
	Judge perception.Judge
	// Poll is how often the follower measures the job (job.Sampler), looks at its followed
	// files' sizes and runs perception's time-based detectors (default 500 ms). Lines are
	// judged as the scheduler yields them.
	Poll time.Duration
	// Artifacts, when set, keeps a copy of every artifact the job reports (see Keeper): the
	// files of its workspace it created or changed, reported when it ends.
	Artifacts Keeper

	noArtifacts bool // WatchJob's: the job's artifacts are not looked for
}

// RunJob takes job operation id of session through its lifecycle in log and yields each
// message once it is logged: the request; operation_failed (rejected) when CheckJob refuses
// it, or (error) when the scheduler refuses the job; else the ack with the job's id, and the
// job followed to its end (see the comment at the top of this file). An error ends the
// iteration: a message the log did not take, or ErrDetached when ctx ended or the iteration
// was stopped while the job runs. The job is cancelled only by perception's Hot-Fix, never by
// its follower going away. A job a supervisor watches where it runs (job.Supervised: job/local
// starts one beside each job) is followed passively: its lines and their telemetry are logged,
// and the verdicts are the supervisor's, published as it records them, its Hot-Fix the one
// that stops the job — perception does not judge the job a second time.
func RunJob(ctx context.Context, log Log, session, id string, sched job.Scheduler, req *protocol.Request, opts *JobOptions) iter.Seq2[*Message, error] {
	return func(yield func(*Message, error) bool) {
		op := New(log, session, id)
		step := op.stepper(ctx, yield)
		if !step(&Message{protocol.TypeRequest, req}) {
			return
		}
		plan, err := CheckJob(req)
		if err != nil {
			step(rejected(err))
			return
		}
		jid, err := sched.Submit(ctx, plan.Spec)
		if err != nil {
			step(&Message{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonError, Error: "submitting the job: " + err.Error()}})
			return
		}
		info := &protocol.JobInfo{ID: string(jid), State: string(job.Queued)}
		if st, err := sched.Status(ctx, jid); err == nil {
			info.Native, info.State, info.Reason = st.Native, string(st.State), st.Reason
		}
		if !step(&Message{protocol.TypeAck, &protocol.StatePayload{State: protocol.Acknowledged, Job: info}}) {
			return
		}
		f := newJobFollower(op, sched, jid, plan, opts)
		f.sv, _ = sched.(job.Supervised)
		f.run(ctx, 0, nil, yield)
	}
}

// JobAttachment is where a job operation stands in its log: what AttachJob needs to follow
// it on.
type JobAttachment struct {
	Request *protocol.Request
	Job     job.ID
	State   protocol.State // the operation's state in the log: ACKNOWLEDGED, STARTED or IN_PROGRESS
	After   int64          // the job's last log line logged (Observation.JobSeq)
	// Verdict is the last verdict logged, nil when none was.
	Verdict *protocol.Verdict
}

// ErrNotAttachable wraps JobAttachment's errors: the messages are not those of a job
// operation that was acknowledged and has not ended.
var ErrNotAttachable = errors.New("operation: not an open job operation")

// ReadJobAttachment reads one operation's messages, in log order (protocol.Store.After,
// filtered to the operation), and says where it stands.
func ReadJobAttachment(msgs iter.Seq[*protocol.EnhancedMessage]) (*JobAttachment, error) {
	a := &JobAttachment{}
	for m := range msgs {
		to, err := protocol.Next(a.State, m.Type)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotAttachable, err)
		}
		a.State = to
		p, err := protocol.DecodePayload(m)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotAttachable, err)
		}
		switch p := p.(type) {
		case *protocol.Request:
			a.Request = p
		case *protocol.StatePayload:
			if p.Job != nil && p.Job.ID != "" {
				a.Job = job.ID(p.Job.ID)
			}
		case *protocol.Progress:
			if o := p.Observation; o != nil && o.JobSeq > a.After {
				a.After = o.JobSeq
			}
			if p.Verdict != nil {
				a.Verdict = p.Verdict
			}
		}
	}
	switch {
	case a.Request == nil || a.Request.Kind != protocol.KindJob:
		return nil, fmt.Errorf("%w: no job request", ErrNotAttachable)
	case a.State.Terminal():
		return nil, fmt.Errorf("%w: it has ended (%s)", ErrNotAttachable, a.State)
	case a.Job == "":
		return nil, fmt.Errorf("%w: no job was submitted (state %s)", ErrNotAttachable, a.State)
	}
	return a, nil
}

// AttachJob follows job operation id of session, already submitted and logged up to at, on to
// its end: after a restart of the server that followed it. It logs and yields what RunJob
// would have from there: operation_start if it was not logged yet, the job's log lines after
// at.After, and the terminal message. A job a supervisor watches (job.Supervised) is followed
// passively, as RunJob does. Perception starts from the history: the lines up to
// at.After are replayed through the Monitor without being logged again.
func AttachJob(ctx context.Context, log Log, session, id string, sched job.Scheduler, at *JobAttachment, opts *JobOptions) iter.Seq2[*Message, error] {
	return attachJob(ctx, log, session, id, sched, at, opts, true)
}

// attachJob is AttachJob; a follower that is the job's supervisor (WatchJob) judges it
// itself, whatever supervision the scheduler reports.
func attachJob(ctx context.Context, log Log, session, id string, sched job.Scheduler, at *JobAttachment, opts *JobOptions, passive bool) iter.Seq2[*Message, error] {
	return func(yield func(*Message, error) bool) {
		op := &Op{log: log, session: session, id: id, state: at.State}
		plan, err := CheckJob(at.Request)
		if err != nil { // it was accepted once: the rules changed under it
			if err := op.Fail(ctx, &protocol.Failed{Reason: protocol.ReasonError, Error: "reattaching: " + err.Error()}); err != nil {
				yield(nil, err)
			}
			return
		}
		f := newJobFollower(op, sched, at.Job, plan, opts)
		if passive {
			f.sv, _ = sched.(job.Supervised)
		}
		f.started = at.State == protocol.Started || at.State == protocol.InProgress
		f.run(ctx, at.After, at, yield)
	}
}

// jobFollower follows one job operation. It is used from one goroutine (its run loop).
type jobFollower struct {
	op    *Op
	sched job.Scheduler
	id    job.ID
	plan  *JobPlan
	opts  JobOptions
	per   *perceiver // the perceive/Hot-Fix loop, as for a cell; stop cancels the job

	info      protocol.JobInfo
	started   bool
	startedAt time.Time
	cancelErr error // cancelling the job on the Hot-Fix's verdict failed
	bytes     int64
	after     int64 // the last line observed
	files     map[string]*fileWatch
	root      *os.Root
	lastRes   time.Time // the last resource sample logged
	listening bool
	yield     func(*Message, error) bool
	failed    bool // the log refused a message
	// sv, when the scheduler's jobs have supervisors (job/local), says whether one watches
	// this job: the follower then follows it passively (perceiver.passive), publishing the
	// supervisor's verdicts (seen of them so far) instead of judging the job a second time.
	sv   job.Supervised
	seen int
}

type fileWatch struct {
	size   int64
	line   bool      // a line of the file was observed since the last look
	logged time.Time // the last growth logged
}

const (
	defaultJobPoll = 500 * time.Millisecond
	resourceEvery  = 5 * time.Second // a resource sample is logged at most this often
	growthEvery    = 5 * time.Second // growth without a line is logged at most this often per file
)

func newJobFollower(op *Op, sched job.Scheduler, id job.ID, plan *JobPlan, opts *JobOptions) *jobFollower {
	f := &jobFollower{op: op, sched: sched, id: id, plan: plan, info: protocol.JobInfo{ID: string(id)}, files: map[string]*fileWatch{}}
	if opts != nil {
		f.opts = *opts
	}
	if f.opts.Poll <= 0 {
		f.opts.Poll = defaultJobPoll
	}
	return f
}

// emit logs m and yields it; false when the iteration is over (the log refused it, or the
// consumer stopped).
func (f *jobFollower) emit(ctx context.Context, m *Message) bool {
	if f.per != nil && f.per.quiet || f.failed || !f.listening {
		return !f.failed && f.listening
	}
	if err := f.op.append(context.WithoutCancel(ctx), m); err != nil {
		f.failed = true
		f.yield(nil, err)
		return false
	}
	if !f.yield(m, nil) {
		f.listening = false
		return false
	}
	return true
}

// start logs operation_start once, before any progress.
func (f *jobFollower) start(ctx context.Context, now time.Time) bool {
	if f.started {
		return true
	}
	f.started, f.startedAt = true, now
	info := f.info
	info.State = string(job.Running)
	if !f.emit(ctx, &Message{protocol.TypeStart, &protocol.StatePayload{State: protocol.Started, Job: &info}}) {
		return false
	}
	return f.per.observe(&protocol.Observation{Kind: protocol.ObsEvent, Time: now, Event: &protocol.Event{Name: protocol.EventStarted}}, true)
}

// cancel is the Hot-Fix's stop for a job: Scheduler.Cancel, with the verdict as the reason.
func (f *jobFollower) cancel(ctx context.Context, v *protocol.Verdict) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	f.cancelErr = f.sched.Cancel(cctx, f.id, fmt.Sprintf("perception: %s: %s", v.Detector, v.Message))
}

// line observes one line of the job's log.
func (f *jobFollower) line(ctx context.Context, l *job.Line) bool {
	if l.Seq <= f.after {
		return true // seen already (a Logs restarted after an error)
	}
	f.after = l.Seq
	t := l.Time
	if t.IsZero() {
		t = time.Now()
	}
	o := &protocol.Observation{Time: t, Line: l.Text, JobSeq: l.Seq}
	switch l.Stream {
	case "stdout":
		o.Kind = protocol.ObsStdout
	case "stderr":
		o.Kind = protocol.ObsStderr
	default:
		o.Kind, o.Path = protocol.ObsFile, l.Stream
		if fw := f.files[l.Stream]; fw != nil {
			fw.line = true
		}
	}
	f.bytes += int64(len(l.Text)) + 1
	if !f.per.quiet && !f.start(ctx, t) {
		return false
	}
	return f.per.observe(o, true)
}

// supervised makes the follower passive once a supervisor watches the job (it stays so: a
// supervisor that dies is started again by the scheduler), and publishes the verdicts the
// supervisor recorded since the last look.
func (f *jobFollower) supervised(ctx context.Context) bool {
	if f.sv == nil {
		return true
	}
	if !f.per.passive {
		if !f.sv.Supervised(ctx, f.id) {
			return true
		}
		f.per.passive = true
	}
	vs, err := f.sv.Verdicts(ctx, f.id)
	if err != nil {
		return true // read again at the next look
	}
	for _, v := range vs[min(f.seen, len(vs)):] {
		f.seen++
		if v.State == protocol.Normal {
			continue
		}
		if !f.start(ctx, time.Now()) || !f.per.follow(v) { // a verdict is progress: it follows the start
			return false
		}
	}
	return true
}

// settle publishes, once the job has ended, what its supervisor judged last: the supervisor
// records the verdict it stopped the job with after the stop, and lets go of the job once it
// has recorded all (bounded by a minute).
func (f *jobFollower) settle(ctx context.Context) bool {
	for deadline := time.Now().Add(time.Minute); ; {
		gone := !f.sv.Supervised(ctx, f.id)
		if !f.supervised(ctx) {
			return false
		}
		if gone || time.Now().After(deadline) {
			return true
		}
		select {
		case <-ctx.Done():
			return true
		case <-time.After(f.opts.Poll / 5):
		}
	}
}

// look measures the job, looks at its followed files and runs the time-based detectors.
func (f *jobFollower) look(ctx context.Context, now time.Time) bool {
	if !f.supervised(ctx) {
		return false
	}
	if !f.started {
		return true
	}
	if s, ok := f.sched.(job.Sampler); ok {
		if u, err := s.Usage(ctx, f.id); err == nil {
			o := &protocol.Observation{Kind: protocol.ObsResource, Time: now, Resource: &protocol.Resource{
				CPUSeconds: u.CPUSeconds, RSSBytes: u.RSSBytes, WallSeconds: now.Sub(f.startedAt).Seconds(),
				OutputBytes: f.bytes, MemoryLimit: u.MemoryLimit}}
			log := now.Sub(f.lastRes) >= resourceEvery
			if log {
				f.lastRes = now
			}
			if !f.per.observe(o, log) {
				return false
			}
		}
	}
	if f.root != nil {
		for _, p := range f.plan.Spec.Follow {
			fw := f.files[p]
			info, err := f.root.Stat(p)
			if fw == nil || err != nil || !info.Mode().IsRegular() {
				continue
			}
			grew := info.Size() != fw.size
			fw.size = info.Size()
			if grew && !fw.line { // it grows without a complete line: it is active
				o := &protocol.Observation{Kind: protocol.ObsFile, Time: now, Path: p}
				log := now.Sub(fw.logged) >= growthEvery
				if log {
					fw.logged = now
				}
				if !f.per.observe(o, log) {
					return false
				}
			}
			fw.line = false
		}
	}
	return f.per.tick(now)
}

type lineOrErr struct {
	l   *job.Line
	err error
}

// run follows the job from its log line after to its end. at, when reattaching, is where the
// log stood.
func (f *jobFollower) run(ctx context.Context, after int64, at *JobAttachment, yield func(*Message, error) bool) {
	f.yield, f.listening = yield, true
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	per, err := newPerceiver(fctx, f.plan.Watch, f.plan.Hotfix, f.opts.Judge,
		func(v *protocol.Verdict) { f.cancel(ctx, v) }, func(m *Message) bool { return f.emit(ctx, m) })
	if err != nil { // CheckJob accepted it
		f.emit(ctx, &Message{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonError, Error: err.Error()}})
		return
	}
	f.per = per
	// A job's workspace may lie inside another workspace whose code can replace it, or a
	// directory above it, with a symbolic link: the followed files are read only through a
	// path without one.
	if root, err := OpenRootNoLinks(f.plan.Spec.Workspace); err == nil {
		f.root = root
		defer root.Close()
		for _, p := range f.plan.Spec.Follow {
			fw := &fileWatch{}
			if info, err := root.Stat(p); err == nil {
				fw.size = info.Size()
			}
			f.files[p] = fw
		}
	}
	if st, err := f.sched.Status(ctx, f.id); err == nil {
		f.info.Native = st.Native
		if !st.Started.IsZero() {
			f.startedAt = st.Started
		}
	}
	if f.sv != nil && f.sv.Supervised(ctx, f.id) {
		f.per.passive = true
		if at != nil && at.Verdict != nil { // its verdicts up to the last logged are in the log
			if vs, err := f.sv.Verdicts(ctx, f.id); err == nil {
				if i := slices.IndexFunc(vs, func(v *protocol.Verdict) bool { return sameVerdict(v, at.Verdict) }); i >= 0 {
					f.seen = i + 1
				}
			}
		}
	}
	if at != nil && !f.replay(ctx, at) {
		return
	}
	f.after = after

	lines := make(chan lineOrErr, 256)
	readLogs := func(after int64) {
		defer close(lines)
		for l, err := range f.sched.Logs(fctx, f.id, after, true) {
			select {
			case lines <- lineOrErr{l, err}:
			case <-fctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}
	go readLogs(after)
	states := make(chan *job.Status, 8)
	go func() {
		for st, err := range f.sched.Watch(fctx, f.id) {
			if err != nil {
				return
			}
			select {
			case states <- st:
			case <-fctx.Done():
				return
			}
		}
	}()
	tick := time.NewTicker(f.opts.Poll)
	defer tick.Stop()
	logErrs := 0
	for {
		select {
		case <-ctx.Done():
			f.detach(context.Cause(ctx))
			return
		case le, ok := <-lines:
			switch {
			case ok && le.err == nil:
				logErrs = 0
				if !f.line(ctx, le.l) {
					return
				}
				continue
			case ok: // the scheduler stumbled: read on from the last line seen
				if ctx.Err() != nil {
					continue
				}
				if logErrs++; logErrs > 30 {
					f.detach(fmt.Errorf("reading the job's log: %w", le.err))
					return
				}
				for range lines { // drain until readLogs closes it
				}
				time.Sleep(f.opts.Poll)
				lines = make(chan lineOrErr, 256)
				go readLogs(f.after)
				continue
			}
			// Every line is read and the job has ended.
			st, err := f.final(ctx)
			if err != nil {
				f.detach(err)
				return
			}
			f.finish(ctx, st)
			return
		case st := <-states:
			if st.Native != "" {
				f.info.Native = st.Native
			}
			if st.State == job.Running && !f.start(ctx, time.Now()) {
				return
			}
		case jv := <-f.per.judged:
			if !f.per.verdict(jv) {
				return
			}
		case now := <-tick.C:
			if !f.look(ctx, now) {
				return
			}
		}
		if !f.listening || f.failed {
			return
		}
	}
}

// detach ends the iteration with ErrDetached for why, the job running on, unless it is over.
func (f *jobFollower) detach(why error) {
	if f.listening && !f.failed {
		f.yield(nil, fmt.Errorf("%w: %w", ErrDetached, why))
	}
}

// replay judges the lines already logged (up to at.After) without logging them, and then
// whatever the Hot-Fix would have done about the verdict they give.
func (f *jobFollower) replay(ctx context.Context, at *JobAttachment) bool {
	if at.After > 0 {
		f.per.quiet = true
		for l, err := range f.sched.Logs(ctx, f.id, 0, false) {
			if err != nil || l.Seq > at.After {
				break
			}
			f.line(ctx, l)
		}
		f.per.quiet = false
	}
	now := time.Now()
	if f.started { // the silence clock starts again now: what it did while nobody watched is unknown
		f.per.mon.Observe(&protocol.Observation{Kind: protocol.ObsEvent, Time: now, Event: &protocol.Event{Name: protocol.EventRestarted}})
	}
	if v := f.per.mon.Verdict(); !f.per.passive && v.State != protocol.Normal && (at.Verdict == nil || at.Verdict.State != v.State || at.Verdict.Detector != v.Detector) {
		if !f.start(ctx, now) { // a verdict is progress: it follows the start
			return false
		}
		if !f.emit(ctx, &Message{protocol.TypeProgress, &protocol.Progress{Verdict: &v}}) {
			return false
		}
	}
	return true // a verdict the Hot-Fix acts on cancelled the job as it was replayed: the server may have stopped between the verdict and the cancel
}

// final is the job's terminal status, once its log has been read to the end.
func (f *jobFollower) final(ctx context.Context) (*job.Status, error) {
	for i := 0; ; i++ {
		st, err := f.sched.Status(ctx, f.id)
		if err == nil && st.State.Terminal() {
			return st, nil
		}
		if i == 20 {
			if err == nil {
				err = fmt.Errorf("job %s: its log ended while it is %s", f.id, st.State)
			}
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(f.opts.Poll):
		}
	}
}

// finish logs the end of the run and the terminal message.
func (f *jobFollower) finish(ctx context.Context, st *job.Status) {
	if st.Native != "" {
		f.info.Native = st.Native
	}
	if f.per.passive && !f.settle(ctx) {
		return
	}
	if !f.started && st.State == job.Completed && !f.start(ctx, st.Started) {
		return
	}
	if f.started {
		ev := protocol.EventFinished
		if st.State == job.Cancelled {
			ev = protocol.EventInterrupted
		}
		if !f.per.observe(&protocol.Observation{Kind: protocol.ObsEvent, Time: time.Now(), Event: &protocol.Event{Name: ev, Detail: string(st.State)}}, true) {
			return
		}
		if !f.per.end() {
			return
		}
		since := st.Started
		if since.IsZero() {
			since = f.startedAt
		}
		if f.opts.noArtifacts {
			since = time.Time{} // jobArtifacts looks for none
		}
		for _, a := range jobArtifacts(f.plan.Spec.Workspace, since, f.opts.Artifacts) {
			if !f.emit(ctx, artifactMessage(a)) {
				return
			}
		}
	}
	final := f.per.mon.Verdict()
	if f.per.passive { // the supervisor's, not this Monitor's
		final = protocol.Verdict{State: protocol.Normal}
	}
	f.emit(ctx, jobTerminal(st, f.per.trigger, f.cancelErr, final, f.bytes))
}

// sameVerdict reports whether a and b say the same thing.
func sameVerdict(a, b *protocol.Verdict) bool {
	return a.State == b.State && a.Detector == b.Detector && a.Message == b.Message
}

// jobTerminal reports how the job ended. A job the Hot-Fix cancelled fails as interrupted
// with the triggering verdict — also when it completed before the cancel took hold, since
// the verdict condemned its result; one that failed by itself (a non-zero exit, its wall
// time, a vanished process) keeps its own reason, with the verdict as evidence.
func jobTerminal(st *job.Status, trigger *protocol.Verdict, cancelErr error, final protocol.Verdict, out int64) *Message {
	res := &protocol.Result{OutputBytes: out, ExitCode: st.ExitCode, WorkspaceOK: true, Job: &protocol.JobInfo{
		ID: string(st.ID), Native: st.Native, State: string(st.State), Reason: st.Reason, Signal: st.Signal}}
	if !st.Started.IsZero() && !st.Ended.IsZero() {
		res.DurationS = st.Ended.Sub(st.Started).Seconds()
	}
	reason := protocol.ReasonError
	switch st.State {
	case job.Completed:
		res.Status = protocol.StatusOK
	case job.Cancelled:
		res.Status, reason = protocol.StatusInterrupted, protocol.ReasonInterrupted
	case job.TimedOut:
		res.Status, reason = protocol.StatusTimeout, protocol.ReasonTimeout
	default:
		res.Status = protocol.StatusError
	}
	if res.Status != protocol.StatusOK {
		res.Error = describeJobEnd(st)
	}
	if trigger != nil && (st.State == job.Cancelled || st.State == job.Completed) {
		msg := fmt.Sprintf("hot-fix: %s: %s", trigger.Detector, trigger.Message)
		switch {
		case st.State == job.Completed && cancelErr != nil:
			msg += " (cancelling the job failed: " + cancelErr.Error() + "; it ran to its end, and its result is not to be trusted)"
		case st.State == job.Completed:
			msg += " (the job finished before the cancel took hold; its result is not to be trusted)"
		}
		return &Message{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonInterrupted, Error: msg, Verdict: trigger, Result: res}}
	}
	if res.Status == protocol.StatusOK {
		return &Message{protocol.TypeComplete, &protocol.Complete{Result: res}}
	}
	fl := &protocol.Failed{Reason: reason, Error: res.Error, Result: res}
	switch {
	case trigger != nil:
		fl.Verdict = trigger
	case final.State != protocol.Normal:
		fl.Verdict = &final
	}
	return &Message{protocol.TypeFailed, fl}
}

// describeJobEnd says how a job that did not complete ended: its state, exit code or signal,
// and the scheduler's reason.
func describeJobEnd(st *job.Status) string {
	var parts []string
	switch {
	case st.Signal != "":
		parts = append(parts, "killed by "+st.Signal)
	case st.ExitCode != nil && *st.ExitCode != 0:
		parts = append(parts, "exit code "+strconv.Itoa(*st.ExitCode))
	}
	if st.Reason != "" {
		parts = append(parts, st.Reason)
	}
	s := fmt.Sprintf("job %s %s", st.ID, strings.ToLower(string(st.State)))
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	return s
}
