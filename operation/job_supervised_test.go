package operation_test

import (
	"context"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/job/supervise"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// supervisedLocal is a local scheduler whose every job gets its supervisor at submission —
// job/supervise, the code labmate job supervise runs, holding the job's supervisor lock —
// as the scheduler of labmate serve starts one beside each job. Cancels through it (the
// follower's) are counted: the supervisor cancels through the scheduler itself.
type supervisedLocal struct {
	*local.Scheduler
	t        *testing.T
	cancels  atomic.Int32
	finished chan error
}

func (s *supervisedLocal) Submit(ctx context.Context, spec *job.Spec) (job.ID, error) {
	id, err := s.Scheduler.Submit(ctx, spec)
	if err != nil {
		return id, err
	}
	sup, err := s.Supervise(id, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	go func() { s.finished <- supervise.Run(context.Background(), s.Scheduler, sup, nil) }()
	return id, nil
}

func (s *supervisedLocal) Cancel(ctx context.Context, id job.ID, why string) error {
	s.cancels.Add(1)
	return s.Scheduler.Cancel(ctx, id, why)
}

// A job its supervisor watches is followed passively: the follower logs its lines and the
// telemetry read from them, and publishes the supervisor's verdicts, each once, instead of
// judging the job a second time; the supervisor's Hot-Fix stops the sloshing SCF, and the
// operation fails as interrupted with its verdict, the follower never cancelling anything.
func TestJobSupervisedFollowedPassively(t *testing.T) {
	needs(t, "pw.x")
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	ls, err := local.Open(t.TempDir(), &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2, Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ls.Close() })
	s := &supervisedLocal{Scheduler: ls, t: t, finished: make(chan error, 1)}
	spec := &job.Spec{Name: "al4-scf", Script: scfScript("al4.in", sloshingSCF(t), ""), Workspace: t.TempDir(),
		Resources: job.Resources{Cores: 1, WallTime: 5 * time.Minute}}
	r := runJob(t, s, jobRequest(spec, nil), nil)
	if err := <-s.finished; err != nil {
		t.Fatalf("the supervisor: %v", err)
	}
	_, failed := r.terminal()
	if failed == nil || failed.Reason != protocol.ReasonInterrupted || failed.Verdict == nil || failed.Verdict.Detector != "profile" {
		t.Fatalf("terminal %+v, want failed, interrupted by the supervisor's verdict", r.payloads[len(r.payloads)-1])
	}
	if failed.Result.Job.State != string(job.Cancelled) || !strings.Contains(failed.Result.Job.Reason, "perception: profile: ") {
		t.Errorf("result %+v: want the job CANCELLED by the supervisor, its verdict the reason", failed.Result.Job)
	}
	if n := s.cancels.Load(); n != 0 {
		t.Errorf("the follower cancelled the job %d times; its supervisor stops it", n)
	}
	recorded, err := ls.Verdicts(context.Background(), job.ID(failed.Result.Job.ID))
	if err != nil || len(recorded) == 0 {
		t.Fatalf("the supervisor recorded %v, %v", recorded, err)
	}
	logged, _ := r.verdicts()
	if len(logged) != len(recorded) {
		t.Fatalf("logged verdicts %+v, want the supervisor's %+v, each once", logged, recorded)
	}
	for i := range logged {
		if d := cmp.Diff(recorded[i], logged[i]); d != "" {
			t.Errorf("verdict %d (-the supervisor's +logged):\n%s", i, d)
		}
	}
	samples := 0
	for _, p := range r.payloads {
		if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Kind == protocol.ObsTelemetry {
			samples++
		}
	}
	if lines, _ := r.lines(); len(lines) == 0 || samples == 0 {
		t.Errorf("%d lines and %d telemetry samples logged: the follower logs the job's lines and what they say", len(lines), samples)
	}
}
