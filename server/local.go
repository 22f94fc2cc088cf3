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

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server/locallog"
)

// The local door: a labmate run process of this machine runs its agent run itself and writes
// the run's stream into this server's log through a Unix socket (package server/locallog), so
// that the run is one story with the server's own: listed, followed live, cancelled (the
// process gets SIGINT, as from Ctrl-C). The door takes only a run's own messages (run_event,
// run_end, run_resume in the run's session) from the process that owns the run
// (Config.Owner), identified by the kernel (SO_PEERCRED), of this user only.

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
	stopped := context.AfterFunc(s.Context(), func() { hs.Close() })
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
	lr, err := s.LocalFor(id, int(cred.Pid))
	if err != nil {
		code := http.StatusServiceUnavailable // not 409: the sender reads that as an illegal transition
		if errors.Is(err, runner.ErrBusy) {
			code = statusOf(err, code)
		}
		httpError(w, code, err.Error())
		return
	}
	c, err := lr.Session.Append(context.WithoutCancel(r.Context()), &m)
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
	if st, ok := s.Store().(interface{ Sync(context.Context) error }); ok {
		if err := st.Sync(r.Context()); err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if m.Type == protocol.TypeRunEnd {
		s.DropLocal(id, lr)
	}
	writeJSON(w, http.StatusOK, c)
}
