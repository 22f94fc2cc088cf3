package operation_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/job/slurm"
	"github.com/labmate/labmate/job/slurm/slurmtest"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

func TestMain(m *testing.M) { slurmtest.Main(m) }

// schedulers are the two schedulers a job operation runs on: job/local in the real sandbox
// and job/slurm on the shared one-node cluster.
var schedulers = []struct {
	name string
	new  func(t testing.TB) job.Scheduler
}{
	{"local", localScheduler},
	{"slurm", slurmScheduler},
}

func localScheduler(t testing.TB) job.Scheduler {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	s, err := local.Open(t.TempDir(), &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2, Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func slurmScheduler(t testing.TB) job.Scheduler {
	t.Helper()
	c := slurmtest.Shared(t)
	s, err := slurm.New(t.TempDir(), &slurm.Options{Env: c.Env, Poll: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// eachScheduler runs f on both schedulers, in parallel.
func eachScheduler(t *testing.T, f func(t *testing.T, s job.Scheduler)) {
	for _, sc := range schedulers {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			f(t, sc.new(t))
		})
	}
}

// needs skips t when cmd is not installed.
func needs(t testing.TB, cmd string) {
	if _, err := exec.LookPath(cmd); err != nil {
		t.Skipf("%s is not installed", cmd)
	}
}

// jobRun is a job operation run to its end: its logged messages and its decoded payloads.
type jobRun struct {
	msgs     []*protocol.EnhancedMessage
	payloads []any
	store    protocol.Store
}

// runJob runs a job operation to its end and checks its log against the state machine.
func runJob(t *testing.T, s job.Scheduler, req *protocol.Request, opts *operation.JobOptions) *jobRun {
	t.Helper()
	store := protocol.NewMemStore()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, err := range operation.RunJob(ctx, store, "s", "op", s, req, opts) {
		if err != nil {
			t.Fatal(err)
		}
	}
	return readRun(t, store)
}

func readRun(t *testing.T, store protocol.Store) *jobRun {
	t.Helper()
	r := &jobRun{msgs: stored(t, store, "s"), store: store}
	testutil.Replay(t, slices.Values(r.msgs))
	for _, m := range r.msgs {
		p, err := protocol.DecodePayload(m)
		if err != nil {
			t.Fatal(err)
		}
		r.payloads = append(r.payloads, p)
	}
	return r
}

func (r *jobRun) terminal() (*protocol.Complete, *protocol.Failed) {
	switch p := r.payloads[len(r.payloads)-1].(type) {
	case *protocol.Complete:
		return p, nil
	case *protocol.Failed:
		return nil, p
	}
	return nil, nil
}

// verdicts are the non-Normal verdicts logged, with the message each came in.
func (r *jobRun) verdicts() (vs []*protocol.Verdict, at []int) {
	for i, p := range r.payloads {
		if pr, ok := p.(*protocol.Progress); ok && pr.Verdict != nil && pr.Verdict.State != protocol.Normal {
			vs, at = append(vs, pr.Verdict), append(at, i)
		}
	}
	return vs, at
}

// lines are the job's log lines as logged: stream (stdout, stderr or the file) → texts.
func (r *jobRun) lines() (out []string, seqs []int64) {
	for _, p := range r.payloads {
		if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.JobSeq > 0 {
			o := pr.Observation
			src := string(o.Kind)
			if o.Kind == protocol.ObsFile {
				src = o.Path
			}
			out, seqs = append(out, src+": "+o.Line), append(seqs, o.JobSeq)
		}
	}
	return out, seqs
}

func jobRequest(spec *job.Spec, perception map[string]string) *protocol.Request {
	req := operation.JobRequest(spec)
	req.Perception = perception
	return req
}

// sloshingSCF is a Quantum ESPRESSO SCF that never converges (perception's corpus,
// f_qe_scf_sloshing.sh, cut to 40 steps): a 4-atom aluminium cell elongated 4× along z, plain
// linear mixing at mixing_beta = 1: the estimated scf accuracy reaches 3e-5 Ry, then climbs to
// 100 Ry and oscillates there until electron_maxstep. About 0.27 s per iteration here.
func sloshingSCF(t testing.TB) string {
	return testutil.CorpusInput(t, "f_qe_scf_sloshing", "electron_maxstep = 60", "electron_maxstep = 40")
}

// healthySCF is a small silicon SCF converging to a tight threshold in 22 iterations (≈4 s):
// the 30 Ry case of perception's corpus h_qe_quiet_file.sh.
func healthySCF(t testing.TB) string {
	return testutil.CorpusInput(t, "h_qe_quiet_file", "$ecut", "30")
}

// scfScript writes input to in and runs pw.x on it; the output goes where redirect says.
func scfScript(in, input, redirect string) string {
	return fmt.Sprintf("cat > %s <<'IN'\n%sIN\npw.x -in %s%s\n", in, input, in, redirect)
}

// timedCancel records when Cancel returned (Slurm's own times are whole seconds).
type timedCancel struct {
	job.Scheduler
	cancelled time.Time
}

func (s *timedCancel) Cancel(ctx context.Context, id job.ID, why string) error {
	err := s.Scheduler.Cancel(ctx, id, why)
	s.cancelled = time.Now()
	return err
}

func (s *timedCancel) Usage(ctx context.Context, id job.ID) (*job.Usage, error) {
	if m, ok := s.Scheduler.(job.Sampler); ok {
		return m.Usage(ctx, id)
	}
	return nil, errors.ErrUnsupported
}

// A QE SCF that sloshes and never converges, submitted as a job, is cancelled by perception
// within seconds of the pattern being clear; with hotfix off it runs to its end, its verdicts
// recorded.
func TestJobSloshingSCF(t *testing.T) {
	needs(t, "pw.x")
	eachScheduler(t, func(t *testing.T, s job.Scheduler) {
		spec := &job.Spec{Name: "al4-scf", Script: scfScript("al4.in", sloshingSCF(t), ""), Workspace: t.TempDir(),
			Resources: job.Resources{Cores: 1, WallTime: 5 * time.Minute}}
		timed := &timedCancel{Scheduler: s}
		r := runJob(t, timed, jobRequest(spec, nil), nil)
		_, failed := r.terminal()
		if failed == nil || failed.Reason != protocol.ReasonInterrupted || failed.Verdict == nil || failed.Verdict.Detector != "profile" {
			t.Fatalf("terminal %+v, want failed, interrupted by the profile's verdict", r.payloads[len(r.payloads)-1])
		}
		if failed.Result == nil || failed.Result.Job == nil || failed.Result.Job.State != string(job.Cancelled) ||
			!strings.Contains(failed.Result.Job.Reason, "perception: profile: ") {
			t.Errorf("result %+v: want the job CANCELLED with perception's verdict as the reason", failed.Result)
		}
		vs, at := r.verdicts()
		if len(vs) == 0 || vs[0].State != protocol.Error {
			t.Fatalf("verdicts %+v: want an Error first", vs)
		}
		clear := r.payloads[at[0]].(*protocol.Progress).Observation // the line that made it clear
		if clear == nil || clear.JobSeq == 0 {
			t.Fatalf("the Error verdict came with %+v, want the line that made it clear", clear)
		}
		st, err := s.Status(context.Background(), job.ID(failed.Result.Job.ID))
		if err != nil {
			t.Fatal(err)
		}
		toVerdict := r.msgs[at[0]].Timestamp - protocol.UnixSeconds(clear.Time)
		toCancel := timed.cancelled.Sub(clear.Time)
		ended := r.msgs[len(r.msgs)-1].Timestamp - protocol.UnixSeconds(clear.Time)
		t.Logf("%s: pattern clear at job line %d (%q), %.2fs into the run (%s's clock); verdict logged %.0f ms after the line was read; Cancel returned %.0f ms after it; job %s, its end logged %.0f ms after it",
			t.Name(), clear.JobSeq, strings.TrimSpace(clear.Line), clear.Time.Sub(st.Started).Seconds(), st.ID, toVerdict*1000, toCancel.Seconds()*1000, st.State, ended*1000)
		if toCancel > 5*time.Second || toCancel < 0 {
			t.Errorf("the job was cancelled %v after the line that made the fault clear, want within a few seconds", toCancel)
		}

		// Hotfix off: the same SCF runs to electron_maxstep, its verdicts on record.
		off := *spec
		off.Hotfix, off.Workspace = protocol.HotfixOff, t.TempDir()
		r = runJob(t, s, jobRequest(&off, nil), nil)
		_, failed = r.terminal()
		if failed == nil || failed.Reason != protocol.ReasonError || failed.Result.Job.State != string(job.Failed) {
			t.Fatalf("hotfix off: terminal %+v, want the job failed by itself (pw.x exits 2)", r.payloads[len(r.payloads)-1])
		}
		if failed.Verdict == nil || failed.Verdict.State != protocol.Error {
			t.Errorf("hotfix off: terminal verdict %+v, want perception's Error as evidence", failed.Verdict)
		}
		if vs, _ := r.verdicts(); len(vs) == 0 {
			t.Error("hotfix off: no verdict recorded")
		}
		out, _ := r.lines()
		if !slices.ContainsFunc(out, func(l string) bool { return strings.Contains(l, "convergence NOT achieved after  40 iterations") }) {
			t.Errorf("hotfix off: the SCF did not run to its end: last lines %q", out[max(0, len(out)-3):])
		}
		t.Logf("%s: with hotfix off the SCF ran %.2fs to electron_maxstep (40)", t.Name(), failed.Result.DurationS)
	})
}

// A healthy SCF writing only to a file (stdout redirected into it, followed without being
// named: FollowTargets) completes with no false verdict, under tight silence limits.
func TestJobQuietFileSCF(t *testing.T) {
	needs(t, "pw.x")
	eachScheduler(t, func(t *testing.T, s job.Scheduler) {
		spec := &job.Spec{Name: "si-scf", Script: scfScript("si.in", healthySCF(t), " > si.out"), Workspace: t.TempDir(),
			Resources: job.Resources{Cores: 1, WallTime: 5 * time.Minute}}
		r := runJob(t, s, jobRequest(spec, map[string]string{"silence": "1s", "silence_error": "2s"}), nil)
		done, failed := r.terminal()
		if done == nil {
			t.Fatalf("terminal %+v, want completed", failed)
		}
		if vs, _ := r.verdicts(); len(vs) > 0 {
			t.Errorf("false verdicts on a healthy SCF: %+v", vs)
		}
		ack, _ := r.payloads[1].(*protocol.StatePayload)
		start, _ := r.payloads[2].(*protocol.StatePayload)
		if ack == nil || ack.Job == nil || ack.Job.ID == "" || start == nil || start.Job == nil || start.Job.State != string(job.Running) ||
			start.Job.Native == "" || done.Result.Job == nil || done.Result.Job.ID != ack.Job.ID || *done.Result.ExitCode != 0 {
			t.Errorf("ack %+v, start %+v, result %+v: want the job's id in each, its native id from the start, exit code 0", ack, start, done.Result)
		}
		out, _ := r.lines()
		if !slices.ContainsFunc(out, func(l string) bool {
			return strings.HasPrefix(l, "si.out: ") && strings.Contains(l, "convergence has been achieved")
		}) {
			t.Errorf("si.out was not followed: %d lines, first %q", len(out), out[:min(3, len(out))])
		}
		var telemetry int
		for _, p := range r.payloads {
			if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Kind == protocol.ObsTelemetry {
				telemetry++
			}
		}
		if telemetry == 0 {
			t.Error("no telemetry read from the QE profile")
		}
	})
}

// A job quiet for longer than its silence limits is not stalled while it computes or while
// its followed log file grows; one that neither prints, nor writes, nor computes is, where
// the scheduler measures its jobs (job/local).
func TestJobQuietButBusy(t *testing.T) {
	tight := map[string]string{"silence": "1s", "silence_error": "2s"}
	cases := []struct {
		name   string
		script string
		follow []string
		idle   bool // the job is idle: stopped where the scheduler measures CPU
	}{
		{"cpu loop", "echo start; end=$((SECONDS+5)); while [ $SECONDS -lt $end ]; do :; done; echo done", nil, false},
		{"log file grows", "echo start; for i in $(seq 25); do printf . >> progress.log; sleep 0.2; done; echo done", []string{"progress.log"}, false},
		{"idle", "echo start; sleep 5; echo done", nil, true},
	}
	eachScheduler(t, func(t *testing.T, s job.Scheduler) {
		_, measures := s.(job.Sampler)
		for _, c := range cases {
			spec := &job.Spec{Name: c.name, Script: c.script, Follow: c.follow, Workspace: t.TempDir(), Resources: job.Resources{WallTime: time.Minute}}
			r := runJob(t, s, jobRequest(spec, tight), nil)
			done, failed := r.terminal()
			switch {
			case c.idle && measures:
				if failed == nil || failed.Reason != protocol.ReasonInterrupted || failed.Verdict == nil || failed.Verdict.Detector != "stagnation" {
					t.Errorf("%s: terminal %+v, want interrupted by the stagnation detector", c.name, r.payloads[len(r.payloads)-1])
				} else {
					t.Logf("%s: %s", c.name, failed.Verdict.Message)
				}
			case done == nil:
				t.Errorf("%s: terminal %+v %+v, want completed", c.name, failed, failed.Verdict)
			default:
				if vs, _ := r.verdicts(); len(vs) > 0 {
					t.Errorf("%s: verdicts %+v, want none", c.name, vs)
				}
			}
		}
	})
}

// A follower that goes away leaves the job running and its operation open; AttachJob
// follows it on to its end from the log, without repeating or losing a line.
func TestJobReattach(t *testing.T) {
	eachScheduler(t, func(t *testing.T, s job.Scheduler) {
		spec := &job.Spec{Name: "count", Script: "for i in $(seq 30); do echo line $i; sleep 0.1; done", Workspace: t.TempDir()}
		store := protocol.NewMemStore()
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		n := 0
		var detached error
		for m, err := range operation.RunJob(ctx, store, "s", "op", s, jobRequest(spec, nil), nil) {
			if err != nil {
				detached = err
				break
			}
			if p, ok := m.Payload.(*protocol.Progress); ok && p.Observation != nil && p.Observation.JobSeq > 0 {
				if n++; n == 5 {
					cancel(errors.New("the server stopped"))
				}
			}
		}
		if !errors.Is(detached, operation.ErrDetached) {
			t.Fatalf("the iteration ended with %v, want ErrDetached", detached)
		}
		msgs := stored(t, store, "s")
		at, err := operation.ReadJobAttachment(slices.Values(msgs))
		if err != nil {
			t.Fatal(err)
		}
		if at.After < 5 || at.State != protocol.InProgress {
			t.Fatalf("attachment %+v: want in progress after line 5 or later", at)
		}
		for _, err := range operation.AttachJob(context.Background(), store, "s", "op", s, at, nil) {
			if err != nil {
				t.Fatal(err)
			}
		}
		r := readRun(t, store)
		if done, failed := r.terminal(); done == nil {
			t.Fatalf("terminal %+v, want completed", failed)
		}
		out, seqs := r.lines()
		var want []string
		for i := 1; i <= 30; i++ {
			want = append(want, fmt.Sprintf("stdout: line %d", i))
		}
		if !slices.Equal(out, want) || !slices.IsSorted(seqs) {
			t.Errorf("lines after reattaching at %d: %q (seqs %v), want line 1…30 once each", at.After, out, seqs)
		}
	})
}

// RunJob rejects what CheckJob refuses, before anything is submitted.
func TestCheckJob(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		name string
		req  *protocol.Request
		want string
	}{
		{"no spec", &protocol.Request{Kind: "job"}, "job: missing"},
		{"code", &protocol.Request{Kind: "job", Code: "x", Job: []byte(`{"command":["true"],"workspace":"` + ws + `"}`)}, "kernel, code"},
		{"unknown field", &protocol.Request{Kind: "job", Job: []byte(`{"command":["true"],"workspace":"` + ws + `","cpus":2}`)}, `unknown field "cpus"`},
		{"relative workspace", operation.JobRequest(&job.Spec{Command: []string{"true"}, Workspace: "ws"}), "not an absolute path"},
		{"profile", operation.JobRequest(&job.Spec{Command: []string{"true"}, Workspace: ws, Profile: "vasp"}), `unknown profile "vasp"`},
		{"watch", func() *protocol.Request {
			r := operation.JobRequest(&job.Spec{Command: []string{"true"}, Workspace: ws})
			r.Watch = []string{"x <"}
			return r
		}(), "watch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := operation.CheckJob(c.req)
			if !errors.Is(err, operation.ErrRejected) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckJob: %v, want ErrRejected saying %q", err, c.want)
			}
		})
	}
	p, err := operation.CheckJob(operation.JobRequest(&job.Spec{Script: "pw.x -in x.in > x.out\nlmp -in in.cu -screen none", Workspace: ws}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Watch.Profile != "qe" || !slices.Equal(p.Spec.Follow, []string{"x.out", "log.lammps"}) || p.Hotfix != protocol.HotfixOnError || !p.Watch.Expect.Batch {
		t.Errorf("plan %+v %+v: want profile qe, x.out and log.lammps followed, on_error, a batch expectation", p.Spec, p.Watch)
	}
}
