package slurm

import (
	"context"
	"iter"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/joblog"
)

// A job's log is collected into its directory's log.jsonl (see job/joblog), under an flock of
// log.lock, as job/slurm has always kept it.
var logOptions = &joblog.Options{Log: "log.jsonl", Lock: "log.lock"}

func (s *Scheduler) logIndex(rec *record) *joblog.Index {
	return s.logs.Get(s.jobDir(rec.ID), joblog.Streams(rec.Stdout, rec.Stderr, rec.Spec))
}

// lastLine is the last line the job's log holds, after collecting all of it.
func (s *Scheduler) lastLine(rec *record) string {
	x := s.logIndex(rec)
	if x.Collect(true) != nil {
		return ""
	}
	return x.Last()
}

// Logs yields the job's lines with Seq > after; with follow, until the job has ended and its
// streams are read to the end.
func (s *Scheduler) Logs(ctx context.Context, id job.ID, after int64, follow bool) iter.Seq2[*job.Line, error] {
	return func(yield func(*job.Line, error) bool) {
		rec, err := s.load(id)
		if err != nil {
			yield(nil, err)
			return
		}
		status := s.status
		if follow {
			status = s.patientStatus
		}
		x := s.logIndex(rec)
		look := func(ctx context.Context) (bool, error) {
			// The state first: when it is terminal, every line the job wrote is in its files.
			st, err := status(ctx, rec)
			if err != nil {
				return false, err
			}
			done := st.State.Terminal()
			return done, x.Collect(done)
		}
		for l, err := range x.Tail(ctx, after, follow, look, &joblog.TailOptions{Poll: s.poll}) {
			if !yield(l, err) {
				return
			}
		}
	}
}
