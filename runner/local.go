package runner

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner/locallog"
)

// The other processes of this machine (labmate run, exec, campaign run, lab run) append to the
// runner's log file themselves (package protocol/sqlite takes many writers). The runner follows
// what they append (tailLog): live sessions publish it to their subscribers, an interrupt another
// process asks for one of this runner's operations stops it (elsewhere.go), and an agent run
// another process runs (Config.LocalRuns) is followed as one of the runner's — listed, followed
// live, cancelled (the process gets SIGINT, as from Ctrl-C) — and ended as process_died when
// its process stops without ending it.

// tailer is a Store other processes append to as well: Tail yields what they append.
type tailer interface {
	Tail(ctx context.Context) iter.Seq2[*protocol.EnhancedMessage, error]
}

// LocalRun is a run another process runs, appending to the log itself.
type LocalRun struct {
	pid     int
	Session *Session
	done    chan struct{} // closed when the runner stops following it
}

// tailLog follows what other processes append to the log until the runner closes.
func (s *Runner) tailLog() {
	if t, ok := s.store.(tailer); ok {
		follow(s.ctx, t, s.foreign, func(err error) { s.Logf("following what other processes append to the log: %v", err) })
	}
}

// follow hands handle each message other processes append to t until ctx ends; a Tail that
// fails is said to failed, and taken up again a second later.
func follow(ctx context.Context, t tailer, handle func(*protocol.EnhancedMessage), failed func(error)) {
	for ctx.Err() == nil {
		for m, err := range t.Tail(ctx) {
			if err != nil {
				failed(err)
				break
			}
			handle(m)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// foreign publishes m, which another process appended, to its live session, after following the
// run it belongs to when another process runs that.
func (s *Runner) foreign(m *protocol.EnhancedMessage) {
	id := m.OperationID
	isRun := m.SessionID == id && (m.Type == protocol.TypeRunEvent || m.Type == protocol.TypeRunResume || m.Type == protocol.TypeRunCheckpoint)
	if isRun && s.cfg.LocalRuns != nil {
		s.mu.Lock()
		lr, mine := s.local[id], s.runs[id] != nil
		s.mu.Unlock()
		if lr == nil && !mine { // a followed run's watcher sees its process stop
			if pid, _, live := s.cfg.LocalRuns.Owner(id); live {
				if err := s.adoptLocal(id, pid); err != nil {
					s.Logf("run %s of labmate run (pid %d): not followed: %v", id, pid, err)
				}
			}
		}
	}
	s.others.note(m)
	if ss := s.Lookup(m.SessionID); ss != nil {
		ss.publish(m)
		if m.Type == protocol.TypeInterrupt { // asked of another process for one of ours (elsewhere.go)
			ss.interrupted(m.OperationID)
		}
	}
	if m.Type == protocol.TypeRunEnd {
		s.mu.Lock()
		lr := s.local[id]
		s.mu.Unlock()
		if lr != nil {
			s.DropLocal(id, lr)
		}
	}
}

// publish hands m, appended by another process, to the session's subscribers. Subscribe skips
// what a listener has and fills a gap from the log, so a message published out of order costs
// a read, never a loss.
func (ss *Session) publish(m *protocol.EnhancedMessage) {
	f, err := frameOf(m)
	if err != nil {
		return
	}
	ss.subMu.Lock()
	defer ss.subMu.Unlock()
	ss.offer(f)
}

// adoptLocal follows run id, which process pid runs: its session stays live (its followers are
// woken by each message), running says it runs (a cancel sends the process SIGINT), and a
// watcher ends the run as process_died when the process stops without ending it.
func (s *Runner) adoptLocal(id string, pid int) error {
	s.mu.Lock()
	if s.runs[id] != nil {
		s.mu.Unlock()
		return refuse(ErrConflict, "run %s is run by this server, not by process %d", id, pid)
	}
	old := s.local[id]
	s.mu.Unlock()
	if old != nil {
		s.DropLocal(id, old)
	}
	ss, err := s.Open(id)
	if err != nil {
		return err
	}
	lr := &LocalRun{pid: pid, Session: ss, done: make(chan struct{})}
	s.mu.Lock()
	s.local[id] = lr
	s.mu.Unlock()
	s.goWorker(func() { s.watchLocal(id, lr) })
	return nil
}

// DropLocal stops following run id's lr.
func (s *Runner) DropLocal(id string, lr *LocalRun) {
	s.mu.Lock()
	if s.local[id] != lr {
		s.mu.Unlock()
		return
	}
	delete(s.local, id)
	s.mu.Unlock()
	close(lr.done)
	s.Release(lr.Session)
}

// localPoll is how often the runner looks whether the processes of the runs it follows live.
const localPoll = 500 * time.Millisecond

// watchLocal ends run id as process_died when its process stops while its stream is open, and
// stops following it then.
func (s *Runner) watchLocal(id string, lr *LocalRun) {
	t := time.NewTicker(localPoll)
	defer t.Stop()
	for {
		select {
		case <-lr.done:
			return
		case <-s.ctx.Done():
			s.DropLocal(id, lr)
			return
		case <-t.C:
		}
		if pid, _, live := s.cfg.LocalRuns.Owner(id); live && pid == lr.pid {
			continue
		}
		if op, err := s.RunInfo(s.ctx, id); err == nil && op.State.Live() {
			// Its cells cut short by the stop end first (elsewhere.go), then the run.
			if st, ok := s.store.(*sqlite.Store); ok {
				if err := locallog.Orphaned(s.ctx, st, lr.Session, id); err != nil {
					s.Logf("run %s: ending its cells after its process %d stopped: %v", id, lr.pid, err)
				}
			}
			if _, err := agent.AppendRun(s.ctx, lr.Session, protocol.TypeRunEnd, id, locallog.Died(lr.pid, resumeHint(&s.cfg, id))); err != nil &&
				!errors.Is(err, protocol.ErrIllegalTransition) {
				s.Logf("run %s: ending it after its process %d stopped: %v", id, lr.pid, err)
			}
		}
		s.DropLocal(id, lr)
		return
	}
}
