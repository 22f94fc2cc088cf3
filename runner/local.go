package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server/locallog"
)

// LocalRun is a run another process runs, writing through the door.
type LocalRun struct {
	pid     int
	Session *Session
	done    chan struct{} // closed when the server stops following it
}

// LocalFor returns the followed run id of process pid, following it from now on when it is
// not yet (adoptLocal).
func (s *Runner) LocalFor(id string, pid int) (*LocalRun, error) {
	s.mu.Lock()
	lr := s.local[id]
	s.mu.Unlock()
	if lr != nil && lr.pid == pid {
		return lr, nil
	}
	if err := s.adoptLocal(id, pid); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if lr = s.local[id]; lr == nil {
		return nil, fmt.Errorf("run %s: its process stopped", id)
	}
	return lr, nil
}

// adoptLocal follows run id, which process pid runs: its session stays live (its followers are
// woken by each message), running says it runs (a cancel sends the process SIGINT), and a
// watcher ends the run as process_died when the process stops owning it without ending it.
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
	if s.local == nil {
		s.local = map[string]*LocalRun{}
	}
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

// localPoll is how often the server looks whether the processes of the runs it follows live.
const localPoll = 500 * time.Millisecond

// watchLocal ends run id as process_died when its process stops owning it while its stream is
// Open, and stops following it then.
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
		if pid, _, live := s.cfg.Owner(id); live && pid == lr.pid {
			continue
		}
		if op, err := s.RunInfo(s.ctx, id); err == nil && op.State.Live() {
			hint := ""
			if h := resumeHint(&s.cfg); h != nil {
				hint = h(id)
			}
			if _, err := agent.AppendRun(s.ctx, lr.Session, protocol.TypeRunEnd, id, locallog.Died(lr.pid, hint)); err != nil &&
				!errors.Is(err, protocol.ErrIllegalTransition) {
				s.Logf("run %s: ending it after its process %d stopped: %v", id, lr.pid, err)
			}
		}
		s.DropLocal(id, lr)
		return
	}
}
