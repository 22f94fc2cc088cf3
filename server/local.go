package server

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server/locallog"
)

// The other processes of this machine (labmate run, exec, campaign run, lab run) append to the
// server's log file themselves (package protocol/sqlite takes many writers). The server follows
// what they append (tailLog): live sessions publish it to their subscribers, and an agent run
// another process runs (Config.Owner) is followed as one of the server's — listed, followed
// live, cancelled (the process gets SIGINT, as from Ctrl-C) — and ended as process_died when
// its process stops without ending it.

// tailer is a Store other processes append to as well: Tail yields what they append.
type tailer interface {
	Tail(ctx context.Context) iter.Seq2[*protocol.EnhancedMessage, error]
}

// localRun is a run another process runs.
type localRun struct {
	pid  int
	ss   *session
	done chan struct{} // closed when the server stops following it
}

// tailLog follows what other processes append to the log until the server closes.
func (s *Server) tailLog() {
	t, ok := s.store.(tailer)
	if !ok {
		return
	}
	for s.ctx.Err() == nil {
		for m, err := range t.Tail(s.ctx) {
			if err != nil {
				s.logf("following what other processes append to the log: %v", err)
				break
			}
			s.foreign(m)
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// foreign publishes m, which another process appended, to its live session, after following the
// run it belongs to when another process runs that.
func (s *Server) foreign(m *protocol.EnhancedMessage) {
	id := m.OperationID
	isRun := m.SessionID == id && (m.Type == protocol.TypeRunEvent || m.Type == protocol.TypeRunResume)
	if isRun && s.cfg.Owner != nil {
		s.mu.Lock()
		lr, mine := s.local[id], s.runs[id] != nil
		s.mu.Unlock()
		if lr == nil && !mine { // a followed run's watcher sees its process stop
			if pid, _, live := s.cfg.Owner(id); live {
				if err := s.adoptLocal(id, pid); err != nil {
					s.logf("run %s of labmate run (pid %d): not followed: %v", id, pid, err)
				}
			}
		}
	}
	if ss := s.lookup(m.SessionID); ss != nil {
		ss.publish(m)
	}
	if m.Type == protocol.TypeRunEnd {
		s.mu.Lock()
		lr := s.local[id]
		s.mu.Unlock()
		if lr != nil {
			s.dropLocal(id, lr)
		}
	}
}

// publish hands m, appended by another process, to the session's subscribers. A subscriber
// skips what it has and fills a gap from the log (catchUp), so a message published out of order
// costs a read, never a loss.
func (ss *session) publish(m *protocol.EnhancedMessage) {
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for sub := range ss.subs {
		if !sub.offer(frame{m.Seq, data}) {
			delete(ss.subs, sub)
		}
	}
}

// catchUp reads session id's log after last up to seq before (exclusive) and sends what it reads
// with send: a frame came with a seq beyond the next, another process appended what lies
// between. It returns the last seq sent.
func (s *Server) catchUp(ctx context.Context, id string, last, before int64, send func(*protocol.EnhancedMessage) error) (int64, error) {
	for m, err := range s.store.After(ctx, id, last) {
		if err != nil {
			return last, err
		}
		if m.Seq >= before {
			break
		}
		if err := send(m); err != nil {
			return last, err
		}
		last = m.Seq
	}
	return last, nil
}

// adoptLocal follows run id, which process pid runs: its session stays live (its followers are
// woken by each message), running says it runs (a cancel sends the process SIGINT), and a
// watcher ends the run as process_died when the process stops without ending it.
func (s *Server) adoptLocal(id string, pid int) error {
	s.mu.Lock()
	if s.runs[id] != nil {
		s.mu.Unlock()
		return refuse(http.StatusConflict, "run %s is run by this server, not by process %d", id, pid)
	}
	old := s.local[id]
	s.mu.Unlock()
	if old != nil {
		s.dropLocal(id, old)
	}
	ss, err := s.open(id)
	if err != nil {
		return err
	}
	lr := &localRun{pid: pid, ss: ss, done: make(chan struct{})}
	s.mu.Lock()
	if s.local == nil {
		s.local = map[string]*localRun{}
	}
	s.local[id] = lr
	s.mu.Unlock()
	s.goWorker(func() { s.watchLocal(id, lr) })
	return nil
}

// dropLocal stops following run id's lr.
func (s *Server) dropLocal(id string, lr *localRun) {
	s.mu.Lock()
	if s.local[id] != lr {
		s.mu.Unlock()
		return
	}
	delete(s.local, id)
	s.mu.Unlock()
	close(lr.done)
	s.release(lr.ss)
}

// localPoll is how often the server looks whether the processes of the runs it follows live.
const localPoll = 500 * time.Millisecond

// watchLocal ends run id as process_died when its process stops while its stream is open, and
// stops following it then.
func (s *Server) watchLocal(id string, lr *localRun) {
	t := time.NewTicker(localPoll)
	defer t.Stop()
	for {
		select {
		case <-lr.done:
			return
		case <-s.ctx.Done():
			s.dropLocal(id, lr)
			return
		case <-t.C:
		}
		if pid, _, live := s.cfg.Owner(id); live && pid == lr.pid {
			continue
		}
		if op, err := s.runInfo(s.ctx, id); err == nil && op.State.Live() {
			hint := ""
			if h := resumeHint(&s.cfg); h != nil {
				hint = h(id)
			}
			if _, err := agent.AppendRun(s.ctx, lr.ss, protocol.TypeRunEnd, id, locallog.Died(lr.pid, hint)); err != nil &&
				!errors.Is(err, protocol.ErrIllegalTransition) {
				s.logf("run %s: ending it after its process %d stopped: %v", id, lr.pid, err)
			}
		}
		s.dropLocal(id, lr)
		return
	}
}
