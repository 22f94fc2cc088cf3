package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server/locallog"
)

// The local door: a labmate run process of this machine runs its agent run itself and writes
// the run's stream into this server's log through a Unix socket (package server/locallog), so
// that the run is one story with the server's own: listed, followed live, cancelled (the
// process gets SIGINT, as from Ctrl-C). The door takes only a run's own messages (run_event,
// run_end, run_resume in the run's session) from the process that owns the run
// (Config.Owner), identified by the kernel (SO_PEERCRED), of this user only.

// localRun is a run another process runs, writing through the door.
type localRun struct {
	pid  int
	ss   *session
	done chan struct{} // closed when the server stops following it
}

// peerKey is the context key of a local connection's peer credentials.
type peerKey struct{}

// ServeLocal serves the local door on ln, a Unix socket only this user can reach, until ctx
// ends or the server closes.
func (s *Server) ServeLocal(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+locallog.Path, s.postLocal)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: headerTimeout, ReadTimeout: s.cfg.BodyTimeout,
		IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderSize,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if uc, ok := c.(*net.UnixConn); ok {
				if raw, err := uc.SyscallConn(); err == nil {
					raw.Control(func(fd uintptr) {
						if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
							ctx = context.WithValue(ctx, peerKey{}, cred)
						}
					})
				}
			}
			return ctx
		}}
	stop := context.AfterFunc(ctx, func() { hs.Close() })
	defer stop()
	stopped := context.AfterFunc(s.ctx, func() { hs.Close() })
	defer stopped()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// postLocal appends one message of a run its sender owns, and replies with the stored copy.
func (s *Server) postLocal(w http.ResponseWriter, r *http.Request) {
	cred, _ := r.Context().Value(peerKey{}).(*syscall.Ucred)
	if cred == nil || int(cred.Uid) != os.Getuid() {
		httpError(w, http.StatusForbidden, "the local door takes messages from this user's processes only")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxMessageBytes)
	var m protocol.EnhancedMessage
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		httpError(w, http.StatusBadRequest, "message: "+err.Error())
		return
	}
	id := m.OperationID
	switch {
	case m.Type != protocol.TypeRunEvent && m.Type != protocol.TypeRunEnd && m.Type != protocol.TypeRunResume:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("message type %q: the local door takes a run's run_event, run_end and run_resume only", m.Type))
		return
	case id == "" || m.SessionID != id:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("message of run %q in session %q: a run's messages are in its own session, named by its id", id, m.SessionID))
		return
	case s.cfg.Owner == nil:
		httpError(w, http.StatusNotImplemented, "this server follows no run of another process")
		return
	}
	if pid, _, live := s.cfg.Owner(id); !live || pid != int(cred.Pid) {
		httpError(w, http.StatusForbidden, fmt.Sprintf("run %s is not run by the process sending (pid %d)", id, cred.Pid))
		return
	}
	lr, err := s.localFor(id, int(cred.Pid))
	if err != nil {
		errorStatus(w, err, http.StatusServiceUnavailable)
		return
	}
	c, err := lr.ss.Append(context.WithoutCancel(r.Context()), &m)
	if err != nil {
		code := http.StatusInternalServerError
		switch {
		case errors.Is(err, protocol.ErrIllegalTransition):
			code = http.StatusConflict
		case errors.Is(err, protocol.ErrInvalidMessage), errors.Is(err, protocol.ErrUnknownType):
			code = http.StatusBadRequest
		}
		httpError(w, code, err.Error())
		return
	}
	// The sender goes on as if the message were kept: it must be, even if this server is
	// killed at once (the sender then writes the file itself, after it).
	if st, ok := s.store.(interface{ Sync(context.Context) error }); ok {
		if err := st.Sync(r.Context()); err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if m.Type == protocol.TypeRunEnd {
		s.dropLocal(id, lr)
	}
	writeJSON(w, http.StatusOK, c)
}

// localFor returns the followed run id of process pid, following it from now on when it is
// not yet (adoptLocal).
func (s *Server) localFor(id string, pid int) (*localRun, error) {
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

// watchLocal ends run id as process_died when its process stops owning it while its stream is
// open, and stops following it then.
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
