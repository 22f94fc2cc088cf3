package local

import (
	"fmt"
	"path/filepath"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/joblog"
)

// logOptions keep the log where job/local has always kept it: DIR/jobs/ID/log, flocked itself.
var logOptions = &joblog.Options{Log: "log"}

// logIndex is id's log: its stdout, stderr and followed files.
func (s *Scheduler) logIndex(id job.ID) (*joblog.Index, error) {
	sp, err := s.spec(id)
	if err != nil {
		return nil, err
	}
	dir := s.jobDir(id)
	return s.logs.Get(dir, joblog.Streams(filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr"), sp)), nil
}

// ingest appends to r's log the lines its streams have gained; with final (the job has ended)
// also an unfinished last line.
func (s *Scheduler) ingest(r *record, final bool) error {
	x, err := s.logIndex(r.ID)
	if err != nil {
		return err
	}
	if err := x.Collect(final); err != nil {
		return fmt.Errorf("job/local: %s: %w", r.ID, err)
	}
	return nil
}

// lastLine is the text of the last line in id's log.
func (s *Scheduler) lastLine(id job.ID) string {
	x, err := s.logIndex(id)
	if err != nil {
		return ""
	}
	return x.Last()
}
