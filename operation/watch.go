package operation

import (
	"context"
	"iter"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/protocol"
)

// WatchJob follows job id, submitted with spec, to its end with perception, for a follower
// that keeps no protocol log (labmate job wait, labmate job logs -f): it yields what AttachJob
// would log for the job's operation from its log line after on — operation_start, the lines
// (JobLine) with their telemetry and verdicts, the terminal message, and — only when
// opts.Artifacts keeps them (a job's supervisor, which records them beside the job) — the
// job's artifacts (else its workspace is not read for them) — and, like the server's follower, cancels
// the job on a verdict its spec's hotfix acts on — also when a supervisor watches the job: it
// is what a supervisor runs (job/supervise). The lines up to after are
// judged silently first, so perception sees the whole history. Stopping the iteration, or
// ctx ending, leaves the job running (the last element is then an error wrapping
// ErrDetached).
func WatchJob(ctx context.Context, sched job.Scheduler, id job.ID, spec *job.Spec, after int64, opts *JobOptions) iter.Seq2[*Message, error] {
	at := &JobAttachment{Request: JobRequest(spec), Job: id, State: protocol.Acknowledged, After: after}
	log := LogFunc(func(_ context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) { return m, nil })
	o := JobOptions{}
	if opts != nil {
		o = *opts
	}
	o.noArtifacts = o.Artifacts == nil // nothing keeps them: the follower that logs the job reports them
	return attachJob(ctx, log, string(id), string(id), sched, at, &o, false)
}

// JobLine is the job's log line an observation of a job operation carries, nil when it
// carries none (telemetry, resources, a followed file that grew without a whole line).
func JobLine(o *protocol.Observation) *job.Line {
	if o == nil || o.JobSeq <= 0 {
		return nil
	}
	l := &job.Line{Seq: o.JobSeq, Text: o.Line, Time: o.Time}
	switch o.Kind {
	case protocol.ObsStdout:
		l.Stream = "stdout"
	case protocol.ObsStderr:
		l.Stream = "stderr"
	case protocol.ObsFile:
		l.Stream = o.Path
	default:
		return nil
	}
	return l
}
