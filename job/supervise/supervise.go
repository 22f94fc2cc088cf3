// Package supervise is what watches a local job where it runs: the process job/local starts
// beside each job (labmate's hidden labmate job supervise), which outlives labmate and runs
// the job's perception and Hot-Fix, and its workspace quota, from the job's start to its end,
// whether or not any other labmate process is open.
//
// It follows the job as labmate job wait does (operation.WatchJob: every line of its log
// judged by perception, an Error verdict cancelling the job unless its spec's hotfix is off,
// the verdict as the reason), records every verdict that is not Normal beside the job
// (local.Scheduler.RecordVerdict: labmate job status shows the last, a follower of the job
// prints them), and stops the job, FAILED with the quota in its reason, when its workspace
// grows past Resources.DiskBytes (sandbox.WatchQuota). When the job ends, the files its
// workspace gained or changed are kept in the artifact store (Options.Artifacts) and recorded
// beside the job (local.Scheduler.RecordArtifacts), as a server following it would keep
// them, so that they outlive the workspace with no server running. One supervisor per job: it holds the job's
// supervisor lock (local.Scheduler.Supervise) until the job has ended, and a labmate that
// opens the job meanwhile (job wait, logs -f) reads its verdicts instead of judging the job
// again.
package supervise

import (
	"context"
	"fmt"
	"io"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// Options are the optional parts of Run; nil means none.
type Options struct {
	// Log receives a line for each thing the supervisor does (its verdicts, a stop); nil: none.
	Log io.Writer
	// Artifacts, when set, keeps the job's artifacts when it ends (DATA/artifacts), and they
	// are recorded beside the job; nil: the job's workspace is not looked at.
	Artifacts operation.Keeper
}

// Run supervises job sup.ID of s until the job has ended (or ctx ends: the job runs on, and
// another supervisor may take it up), and releases sup. The error is the scheduler's, or ctx's.
func Run(ctx context.Context, s *local.Scheduler, sup *local.Supervision, opts *Options) error {
	defer sup.Release()
	if opts == nil {
		opts = &Options{}
	}
	say := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "labmate: job %s: "+format+"\n", append([]any{sup.ID}, args...)...)
		}
	}
	id := sup.ID
	st, err := s.Status(ctx, id)
	if err != nil {
		return err
	}
	if st.State.Terminal() {
		return nil
	}
	say("supervising (%s)", st.State)
	if q, err := s.Quota(id); err != nil {
		say("no workspace quota: %v", err)
	} else if q != nil {
		q.Breach = func(err error) {
			say("stopping it: %v", err)
			if err := s.Fail(context.WithoutCancel(ctx), id, err.Error()); err != nil {
				say("stopping it: %v", err)
			}
		}
		stop := sandbox.WatchQuota(q)
		defer stop()
		say("workspace quota %s on %s", sandbox.FormatSize(q.Limit), q.Workspace)
	}
	if st.Spec == nil { // nothing to judge it by: wait for its end
		for _, err := range s.Watch(ctx, id) {
			if err != nil {
				return err
			}
		}
		return s.Dispatch()
	}
	jo := operation.JobOptions{Artifacts: opts.Artifacts}
	var arts []*protocol.Artifact
	var last *protocol.Verdict
	record := func(v *protocol.Verdict) {
		if v == nil || v.State == protocol.Normal || (last != nil && last.State == v.State && last.Detector == v.Detector && last.Message == v.Message) {
			return
		}
		last = v
		say("perception: %s · %s: %s", v.State, v.Detector, v.Message)
		if err := s.RecordVerdict(id, v); err != nil {
			say("%v", err)
		}
	}
	for m, err := range operation.WatchJob(ctx, s, id, st.Spec, 0, &jo) {
		if err != nil {
			return err
		}
		switch p := m.Payload.(type) {
		case *protocol.Progress:
			record(p.Verdict)
			if p.Observation != nil && p.Observation.Artifact != nil {
				arts = append(arts, p.Observation.Artifact)
			}
		case *protocol.Failed:
			record(p.Verdict)
			if p.Reason == protocol.ReasonInterrupted && p.Verdict != nil {
				say("perception stopped it: %s: %s", p.Verdict.Detector, p.Verdict.Message)
			}
		}
	}
	if len(arts) > 0 {
		if err := s.RecordArtifacts(id, arts); err != nil {
			say("recording its artifacts: %v", err)
		} else {
			say("kept %d artifacts of its workspace", len(arts))
		}
	}
	if st, err := s.Status(context.WithoutCancel(ctx), id); err == nil && st.Reason != "" {
		say("ended %s: %s", st.State, st.Reason)
	} else if err == nil {
		say("ended %s", st.State)
	}
	return s.Dispatch() // the jobs queued behind this one start now, labmate open or not
}

var _ job.Supervised = (*local.Scheduler)(nil)
