package local

import (
	"fmt"
	"path/filepath"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/joblog"
)

// logName keeps the log where job/local has always kept it: DIR/jobs/ID/log, flocked itself.
const logName = "log"

// logIndex is id's log: its stdout, stderr and followed files, read in the workspace p pins
// (when p is set: a workspace replaced since the job was submitted is not read).
func (s *Scheduler) logIndex(id job.ID, p *pin) (*joblog.Index, error) {
	sp, err := s.spec(id)
	if err != nil {
		return nil, err
	}
	dir := s.jobDir(id)
	streams := joblog.Streams(filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr"), sp)
	if p != nil {
		for i := range streams {
			if streams[i].Root != "" {
				streams[i].Root, streams[i].RootDev, streams[i].RootIno = p.Path, p.Dev, p.Ino
			}
		}
	}
	return s.logs.Get(dir, streams), nil
}

// ingest appends to r's log the lines its streams have gained; with final (the job has ended)
// also an unfinished last line.
func (s *Scheduler) ingest(r *record, final bool) error {
	x, err := s.logIndex(r.ID, r.Pin)
	if err != nil {
		return err
	}
	if err := x.Collect(final); err != nil {
		return fmt.Errorf("job/local: %s: %w", r.ID, err)
	}
	return nil
}

// lastLine is the text of the last line in r's log.
func (s *Scheduler) lastLine(r *record) string {
	x, err := s.logIndex(r.ID, r.Pin)
	if err != nil {
		return ""
	}
	return x.Last()
}
