package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"syscall"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner/locallog"
)

// Each agent run is a stream in the protocol log: its own session, named by the run's id, in
// which the run's id is the operation id of one run_event per agent event and then one
// run_end; a resumable run_end may be followed by a run_resume and the resumed run's events,
// then its run_end, and so on; the run's checkpoints (agent.Checkpoints, run_checkpoint) are
// in the same stream, and a resume continues from the last. A run_event's payload is the event
// with its seq set to the message's seq in the session (the server is the one writer of a run's
// session and appends in order), so a follower's after=SEQ is the seq of the last line it read. Clients follow it
// from the log, on GET /v1/runs/ID/events (the events as NDJSON) or the session's WebSocket
// (the messages). The server keeps in memory only how to cancel the runs it is running.

// Resume starts continuing run id from its checkpoint, logged as resumed by by. It refuses,
// with an error that says why, a run the log does not have (wrapping
// protocol.ErrUnknownOperation), one that runs (409), one whose last run_end is not resumable
// (409), and one beyond Limits.Runs (503).
func (s *Runner) Resume(ctx context.Context, id, by string) error {
	runCtx, cancel := context.WithCancel(s.ctx)
	if err := s.claimRun(id, cancel); err != nil { // from here on no other resume of id can start
		cancel()
		return err
	}
	ss, next, err := s.logResume(ctx, id, by)
	if err != nil {
		s.endRun(id)
		cancel()
		return err
	}
	s.wg.Go(func() {
		s.runAndWatch(ss, id, cancel, func() string { return s.record(runCtx, ss, id, s.resumed(runCtx, id), next) })
	})
	return nil
}

// logResume checks that run id ended resumable, opens its session and logs its run_resume. It
// returns the session and the seq its next message gets.
func (s *Runner) logResume(ctx context.Context, id, by string) (*Session, int64, error) {
	op, err := s.RunInfo(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	if !op.State.Terminal() {
		return nil, 0, refuse(ErrConflict, "run %s is %s: the log has no end for it", id, op.State)
	}
	var end protocol.RunEnd
	for m, err := range s.store.Operation(ctx, id, id) {
		if err != nil {
			return nil, 0, err
		}
		if m.Type == protocol.TypeRunEnd {
			end = protocol.RunEnd{}
			if err := m.Decode(&end); err != nil {
				return nil, 0, err
			}
		}
	}
	if !end.Resumable {
		why := string(end.Reason)
		if end.Error != "" {
			why += ": " + end.Error
		}
		return nil, 0, refuse(ErrConflict, "run %s cannot be resumed: it ended (%s) without a checkpoint to continue", id, why)
	}
	ss, err := s.Open(id)
	if err != nil {
		return nil, 0, err
	}
	m, err := protocol.NewMessage(protocol.TypeRunResume, id, id, &protocol.RunResume{By: by})
	if err == nil {
		m, err = ss.Append(context.WithoutCancel(ctx), m)
	}
	if err != nil {
		s.Release(ss)
		return nil, 0, fmt.Errorf("run %s: logging its resume: %w", id, err)
	}
	return ss, m.Seq + 1, nil
}

// resumed is Config.Agents.Resume of run id, its errors before the first event saying that it was
// the checkpoint that could not be continued.
func (s *Runner) resumed(ctx context.Context, id string) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		first := true
		for ev, err := range s.cfg.Agents.Resume(ctx, id) {
			if err != nil && first {
				err = fmt.Errorf("resuming run %s from its checkpoint: %w", id, err)
			}
			first = false
			if !yield(ev, err) {
				return
			}
		}
	}
}

// resumeClosed resumes the runs closeRuns closed, when the server can (Config.Agents): they
// go on from their checkpoints by themselves. A run it cannot start now stays resumable.
func (s *Runner) resumeClosed(ids []string) {
	if s.cfg.Agents == nil {
		return
	}
	for _, id := range ids {
		if err := s.Resume(s.ctx, id, "labmate serve at its start: the previous server stopped while the run ran"); err != nil {
			s.Logf("run %s: not resumed at start-up: %v", id, err)
			continue
		}
		s.Logf("run %s: resumed from its checkpoint (the previous server stopped while it ran)", id)
	}
}

// ErrConflict is wrapped by the error of a request the state of what it names forbids (a run
// that runs already, or has no checkpoint to resume from), and ErrUnsupported by that of one
// this runner was not set up for (no agent, say).
var (
	ErrConflict    = errors.New("runner: conflict")
	ErrUnsupported = errors.New("runner: not supported")
)

// Refusal is a request refused as it stands, in its own words; it wraps kind (ErrConflict,
// ErrUnsupported, ErrBadTask).
type Refusal struct {
	kind error
	msg  string
}

func (e *Refusal) Error() string        { return e.msg }
func (e *Refusal) Is(target error) bool { return target == e.kind }

func refuse(kind error, format string, args ...any) error {
	return &Refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// claimRun registers run id as running, unless it runs already (409) or Limits.Runs are
// Running (503).
func (s *Runner) claimRun(id string, cancel context.CancelFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[id] != nil {
		return refuse(ErrConflict, "run %s is running: cancel it first (POST /v1/runs/%s/cancel)", id, id)
	}
	if lr := s.local[id]; lr != nil {
		return refuse(ErrConflict, "run %s is running in labmate run (pid %d): cancel it first (POST /v1/runs/%s/cancel, or Ctrl-C there)", id, lr.pid, id)
	}
	if len(s.runs) >= s.cfg.Limits.Runs {
		return busy(false, "%d agent runs are running, the server's limit (labmate serve --max-runs): wait for one to end or cancel one (POST /v1/runs/ID/cancel)", len(s.runs))
	}
	s.runs[id] = cancel
	return nil
}

func (s *Runner) endRun(id string) {
	s.mu.Lock()
	delete(s.runs, id)
	s.mu.Unlock()
}

// runAndWatch runs record, which logs run id, then lets the run go and closes its session's
// kernels unless an operation of the session runs (a resumed run restores its variables from
// its snapshots); when it parked on a job, it watches the job and resumes the run when the
// job ends (watchParked).
func (s *Runner) runAndWatch(ss *Session, id string, cancel context.CancelFunc, record func() (parkedOn string)) {
	jobID := func() string {
		defer s.Release(ss)
		defer ss.closeKernels(-1)
		defer s.endRun(id)
		defer cancel()
		return record()
	}()
	if jobID != "" {
		s.watchParked(id, jobID)
	}
}

// record logs the events of run id in its session, each with seq next, next+1, …, then its
// run_end (agent.LogRun): how the agent stopped, with how to resume it, or the error that
// ended the run. It returns the job the run parked on, if it did.
func (s *Runner) record(ctx context.Context, ss *Session, id string, events iter.Seq2[*agent.Event, error], next int64) (parkedOn string) {
	endOf := func(stop *agent.Stop) *protocol.RunEnd {
		end := agent.RunEndOf(stop)
		parkedOn = ""
		switch {
		case stop.Reason == agent.StopParked && end.Resumable:
			parkedOn = stop.Job
			s.parkedEnd(end, id, parkedOn)
		case end.Resumable:
			end.Resume = resumeHint(&s.cfg, id)
		}
		return end
	}
	for _, err := range agent.LogRun(ctx, runLog{ss}, id, next, events, endOf, func(err error) { s.Logf("%v", err) }) {
		if err != nil { // the run ends in error, parked on nothing
			s.Logf("run %s: %v", id, err)
			parkedOn = ""
		}
	}
	return parkedOn
}

// resumeHint says how resumable run id is continued: POST /v1/runs/ID/resume on a server that
// resumes runs (Config.Agents) — or on one started with a model, when this one has none —
// or LocalRuns.ResumeCommand without the server. "" when the server can say neither.
func resumeHint(cfg *Config, id string) string {
	if cfg.Agents == nil && cfg.LocalRuns == nil {
		return ""
	}
	post := "POST /v1/runs/" + id + "/resume (or the dashboard's Resume)"
	if cfg.Agents == nil {
		post += " once labmate serve runs with --model"
	}
	if cfg.LocalRuns == nil {
		return post
	}
	return post + ", or " + cfg.LocalRuns.ResumeCommand(id) + " while labmate serve is not running"
}

// closeRuns ends the runs a previous server left running (killed, or the machine went down)
// with a run_end of reason server_restart that says how to resume them from their checkpoints
// (resumeHint), or that this server cannot. It returns the runs it closed so. A run another
// process runs (local: labmate run, Config.LocalRuns) is left open while that process lives
// (returned in local, by id, with its pid) and ended as process_died when it does not.
func closeRuns(ctx context.Context, cfg *Config) (closed []string, local map[string]int, err error) {
	store, owner := cfg.Store, cfg.LocalRuns
	sessions, err := store.Sessions(ctx)
	if err != nil {
		return nil, nil, err
	}
	local = map[string]int{}
	for _, si := range sessions {
		ops, err := store.Operations(ctx, si.ID)
		if err != nil {
			return closed, local, err
		}
		for _, op := range ops {
			if op.Kind != protocol.KindAgentRun || !op.State.Live() {
				continue
			}
			var pid int
			found, live := false, false
			if owner != nil {
				pid, found, live = owner.Owner(op.ID)
			}
			if live {
				local[op.ID] = pid
				continue
			}
			hint := resumeHint(cfg, op.ID)
			end := locallog.Died(pid, hint) // labmate run was killed
			if !found {
				end = &protocol.RunEnd{Reason: protocol.ReasonServerRestart,
					Error: "the server stopped while the run ran, and this server cannot resume runs"}
				if hint != "" {
					end.Resumable, end.Resume = true, hint
					end.Error = "the server stopped while the run ran; its checkpoint continues it: " + hint
				}
			}
			// The run's cells cut short by the stop end first, then the run.
			for _, c := range ops {
				if c.ID != op.ID && c.Kind == "exec" && c.State.Live() {
					if _, err := store.Append(ctx, protocol.Restarted(si.ID, c.ID, c.State)); err != nil {
						return closed, local, fmt.Errorf("closing operation %s of run %s: %w", c.ID, op.ID, err)
					}
				}
			}
			m, err := protocol.NewMessage(protocol.TypeRunEnd, si.ID, op.ID, end)
			if err == nil {
				_, err = store.Append(ctx, m)
			}
			if err != nil {
				return closed, local, fmt.Errorf("closing run %s: %w", op.ID, err)
			}
			if !found {
				closed = append(closed, op.ID)
			}
		}
	}
	return closed, local, nil
}

// Running returns the cancel function of run id when the server is running it, or follows it
// Running in another process (whose cancel sends that process SIGINT, as Ctrl-C would).
func (s *Runner) Running(id string) context.CancelFunc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lr := s.local[id]; lr != nil {
		return func() {
			if pid, _, live := s.cfg.LocalRuns.Owner(id); live && pid == lr.pid {
				syscall.Kill(pid, syscall.SIGINT)
			}
		}
	}
	return s.runs[id]
}

// RunInfo returns run id's stream as the log lists it, or an error wrapping
// protocol.ErrUnknownOperation when the log has no such run. A run that has only just
// started may have nothing in the log yet: see running.
func (s *Runner) RunInfo(ctx context.Context, id string) (*protocol.OperationInfo, error) {
	ops, err := s.store.Operations(ctx, id)
	if errors.Is(err, protocol.ErrUnknownSession) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if op.ID == id && op.Kind == protocol.KindAgentRun {
			return &op, nil
		}
	}
	return nil, fmt.Errorf("%w: no run %s on this server", protocol.ErrUnknownOperation, id)
}

// RunRow is one run of GET /v1/runs.
type RunRow struct {
	ID      string           `json:"id"`
	Task    *agent.Task      `json:"task,omitempty"`
	State   protocol.State   `json:"state"`
	Events  int64            `json:"events"`
	Done    bool             `json:"done"`
	End     *protocol.RunEnd `json:"end,omitempty"` // how it ended (resumable, and how), when Done
	Created time.Time        `json:"created"`
	Updated time.Time        `json:"updated"`
	// The tokens the run's model calls used (input + output), from its latest stop event.
	Tokens int64 `json:"tokens,omitempty"`
}

// runRows keeps what listing has read of each run's session, so that each listing reads only
// the messages logged since the last one.
type runRows struct {
	mu   sync.Mutex
	byID map[string]*runRead
}

// runRead is a run's row as far as its session has been read (up to seq).
type runRead struct {
	seq int64
	row RunRow
	end *protocol.RunEnd // its latest run_end
}

// read brings run id's row up to date with its session's messages logged since the last read.
func (rr *runRows) read(ctx context.Context, store protocol.Store, id string) (RunRow, error) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rd := rr.byID[id]
	if rd == nil {
		rd = &runRead{row: RunRow{ID: id}}
		rr.byID[id] = rd
	}
	for m, err := range store.After(ctx, id, rd.seq) {
		if err != nil {
			return RunRow{}, err
		}
		rd.seq = m.Seq
		if m.OperationID != id {
			continue
		}
		switch m.Type {
		case protocol.TypeRunEvent:
			rd.row.Events++
			var ev agent.Event
			if rd.row.Events == 1 && m.Decode(&ev) == nil && ev.Start != nil {
				rd.row.Task = &ev.Start.Task
			}
			if bytes.Contains(m.Payload, []byte(`"stop"`)) && m.Decode(&ev) == nil && ev.Type == agent.EventStop && ev.Stop != nil {
				rd.row.Tokens = 0
				for _, u := range ev.Stop.Stats.Modules {
					rd.row.Tokens += u.Total()
				}
			}
		case protocol.TypeRunCheckpoint: // a run imported from an earlier labmate has no run_start
			var st struct {
				Task *agent.Task `json:"task"`
			}
			if rd.row.Task == nil && m.Decode(&st) == nil {
				rd.row.Task = st.Task
			}
		case protocol.TypeRunEnd:
			if e := (&protocol.RunEnd{}); m.Decode(e) == nil {
				rd.end = e
			}
		}
	}
	rw := rd.row
	rw.End = rd.end
	return rw, nil
}

// FollowRun yields the messages of run id's session with seq > after, from the log, live until
// the run's stream ends: at a run_end that nothing follows while the server is not running (or
// resuming) the run. The live session's fan-out only says that something was appended: a
// subscriber with room for one frame, which is cut off (and so woken) at the second.
func (s *Runner) FollowRun(ctx context.Context, id string, after int64) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		// ended: the run's latest message read is a run_end (or, when none is read, its
		// stream's state is terminal). endedAt: the seq after which the log was read once
		// more after the run was seen ended and not running.
		ended, endedAt := false, int64(-1)
		if op, err := s.RunInfo(ctx, id); err == nil {
			ended = op.State.Terminal()
		}
		for {
			ss := s.Lookup(id)
			var sub *Subscriber
			if ss != nil {
				sub = ss.Subscribe(1)
			}
			done := func() bool {
				if ss != nil {
					defer ss.Unsubscribe(sub)
				}
				for m, err := range s.store.After(ctx, id, after) {
					if errors.Is(err, protocol.ErrUnknownSession) && (ss != nil || s.Running(id) != nil) {
						break // the run has only just started: nothing is logged yet
					}
					if err != nil {
						yield(nil, err)
						return true
					}
					after = m.Seq
					if m.OperationID == id {
						ended = m.Type == protocol.TypeRunEnd
					}
					if !yield(m, nil) {
						return true
					}
				}
				running := s.Running(id) != nil
				switch {
				case ended && !running:
					// A resume that ran since the log was read has logged all it will: read
					// the log once more, and end when it has nothing new.
					if endedAt == after {
						return true
					}
					endedAt = after
					return false
				case ss == nil && running:
					// A resume is opening the run's session.
					select {
					case <-time.After(20 * time.Millisecond):
						return false
					case <-ctx.Done():
						return true
					}
				case ss == nil:
					yield(nil, fmt.Errorf("run %s is not running on this server and its log has no end", id))
					return true
				}
				var recheck <-chan time.Time
				if ended { // a resume that is refused appends nothing: look again now and then
					recheck = time.After(time.Second)
				}
				select {
				case <-sub.Ready:
				case <-sub.Dropped:
				case <-recheck:
				case <-ctx.Done():
					return true
				}
				return false
			}()
			if done {
				return
			}
		}
	}
}
