package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/protocol"
)

// Parked runs. An agent run that needs a job's result parks (agent.StopParked): its run_end
// has reason parked and is resumable, and the agent's stop event before it names the job. The
// server then watches the job (Config.Jobs) without holding the run: it takes none of the
// Limits.Runs places. When the job ends the server resumes the run — a run_resume whose by
// says which job ended and how — and the run's waiting wait_job call gets the job's outcome.
// At start-up, the runs the log shows parked are watched again, so a server stopped while a
// run is parked loses nothing.

// parkWatch is the jobs the server watches for parked runs, by run.
type parkWatch struct {
	mu  sync.Mutex
	run map[string]string // run id → job id
}

// parkedEnd is the run_end of a run that parked on job: it says that the server resumes it
// when the job ends, when it can.
func (s *Runner) parkedEnd(end *protocol.RunEnd, id, jobID string) {
	end.Job = jobID
	if _, err := s.cfg.Jobs.For(job.ID(jobID)); err == nil && s.cfg.Agents != nil {
		end.Resume = fmt.Sprintf("the server resumes it when job %s ends (or POST /v1/runs/%s/resume once it has)", jobID, id)
		return
	}
	end.Resume = fmt.Sprintf("once job %s has ended: labmate run --resume %s (it waits for the job)", jobID, id)
	if hint := resumeHint(&s.cfg, id); hint != "" {
		end.Resume = fmt.Sprintf("once job %s has ended: %s", jobID, hint)
	}
}

// watchParked waits for job jobID to end, then resumes run id, which parked on it. It
// returns when the job has ended and the resume started (or could not), or the server closes.
// A second watch of the same run and job is not started.
func (s *Runner) watchParked(id, jobID string) {
	if s.cfg.Agents == nil {
		return
	}
	sch, err := s.cfg.Jobs.For(job.ID(jobID))
	if err != nil {
		s.Logf("run %s: parked on job %s, which this server cannot watch: %v", id, jobID, err)
		return
	}
	p := &s.parks
	p.mu.Lock()
	if p.run[id] == jobID {
		p.mu.Unlock()
		return
	}
	p.run[id] = jobID
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if p.run[id] == jobID {
			delete(p.run, id)
		}
		p.mu.Unlock()
	}()
	// The job is in the log as an operation, even if it ended before a server followed it
	// (an agent's job ends between adoptions, or while no server runs).
	if st, err := sch.Status(s.ctx, job.ID(jobID)); err == nil {
		s.adoptJob(s.ctx, sch, st)
	}
	var last *job.Status
	for st, err := range sch.Watch(s.ctx, job.ID(jobID)) {
		if err != nil {
			if s.ctx.Err() == nil {
				s.Logf("run %s: watching job %s it is parked on: %v", id, jobID, err)
			}
			return
		}
		if last = st; st.State.Terminal() {
			break
		}
	}
	if last == nil || !last.State.Terminal() {
		return
	}
	by := fmt.Sprintf("job %s ended (%s): labmate serve resumed the run parked on it", jobID, last.State)
	for {
		err := s.Resume(s.ctx, id, by)
		var be *BusyError
		if !errors.As(err, &be) {
			if err != nil {
				s.Logf("run %s: job %s ended, but the run was not resumed: %v", id, jobID, err)
			} else {
				s.Logf("run %s: resumed (job %s ended: %s)", id, jobID, last.State)
			}
			return
		}
		select { // MaxRuns are running: the run waits its turn
		case <-time.After(time.Second):
		case <-s.ctx.Done():
			return
		}
	}
}

// watchParkedRuns watches again the jobs of the runs the log shows parked (a previous server
// stopped while they were).
func (s *Runner) watchParkedRuns(ctx context.Context) error {
	if s.cfg.Agents == nil || s.cfg.Jobs == nil {
		return nil
	}
	sessions, err := s.store.Sessions(ctx)
	if err != nil {
		return err
	}
	for _, si := range sessions {
		op, err := s.RunInfo(ctx, si.ID)
		if errors.Is(err, protocol.ErrUnknownOperation) || err == nil && !op.State.Terminal() {
			continue
		}
		if err != nil {
			return err
		}
		jobID, err := s.parkedOn(ctx, &si)
		if err != nil {
			return err
		}
		if jobID != "" {
			s.Logf("run %s: parked on job %s: watching it again", si.ID, jobID)
			s.wg.Go(func() { s.watchParked(si.ID, jobID) })
		}
	}
	return nil
}

// parkedOn is the job run id is parked on: its last run_end's, when that is a resumable
// parked end. Only the end of the session is read (a run_end and the session's updates that
// may follow it), the whole run only when that holds no run_end.
func (s *Runner) parkedOn(ctx context.Context, si *protocol.SessionInfo) (string, error) {
	var end *protocol.RunEnd
	read := func(after int64) error {
		for m, err := range s.store.After(ctx, si.ID, after) {
			if err != nil {
				return err
			}
			if m.OperationID == si.ID && m.Type == protocol.TypeRunEnd {
				end = &protocol.RunEnd{}
				if m.Decode(end) != nil {
					end = nil
				}
			}
		}
		return nil
	}
	if err := read(si.LastSeq - 16); err != nil {
		return "", err
	}
	if end == nil {
		if err := read(0); err != nil {
			return "", err
		}
	}
	if end == nil || end.Reason != protocol.Reason(agent.StopParked) || !end.Resumable {
		return "", nil
	}
	return end.Job, nil
}
