package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	// /healthz: {"ok": true}, with "stuck_sessions" listing the sessions whose host-side work
	// on their workspace (starting a kernel, serving the bench) has taken longer than
	// stuckAfter. The server still serves every other session then, so ok stays true: a stuck
	// session is degraded service for that session alone.
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{"ok": true}
		if stuck := s.Stuck(); len(stuck) > 0 {
			body["stuck_sessions"] = stuck
		}
		writeJSON(w, http.StatusOK, body)
	})
	s.dashboardRoutes()
	s.memoryRoutes()
	s.campaignRoutes()
	s.mux.HandleFunc("GET /v1/kernels", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Kernels(r.Context()))
	})
	s.mux.HandleFunc("GET /v1/sessions", s.listSessions)
	s.mux.HandleFunc("POST /v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusCreated, map[string]string{"id": uuid.NewString()})
	})
	s.sessionRoutes()
	s.mux.HandleFunc("GET /v1/sessions/{id}/ws", s.handleWS)
	s.mux.HandleFunc("GET /v1/sessions/{id}/messages", s.sessionMessages)
	s.mux.HandleFunc("GET /v1/sessions/{id}/operations", s.listOperations)
	s.mux.HandleFunc("POST /v1/sessions/{id}/operations", s.postOperation)
	s.mux.HandleFunc("GET /v1/sessions/{id}/operations/{op}/messages", s.operationMessages)
	s.mux.HandleFunc("POST /v1/sessions/{id}/operations/{op}/interrupt", s.postInterrupt)
	s.mux.HandleFunc("GET /v1/sessions/{id}/artifacts/{path...}", s.artifact)
	s.mux.HandleFunc("GET /v1/artifacts/{sum}/{path...}", s.storedArtifact)
	s.mux.HandleFunc("POST /v1/artifacts/{sum}/pin", s.pinArtifact)
	s.mux.HandleFunc("DELETE /v1/artifacts/{sum}/pin", s.pinArtifact)
	s.mux.HandleFunc("GET /v1/sessions/{id}/bench", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.BenchView(r.Context(), r.PathValue("id"))
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
	s.runRoutes()
	s.jobRoutes()
}

func (s *Server) listOperations(w http.ResponseWriter, r *http.Request) {
	list, err := s.Store().Operations(r.Context(), r.PathValue("id"))
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) sessionMessages(w http.ResponseWriter, r *http.Request) {
	after, err := afterParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.collectAfter(w, r, after, s.Store().After(r.Context(), r.PathValue("id"), after))
}

// operationMessages serves GET /v1/sessions/ID/operations/OP/messages?after=SEQ: the
// operation's messages with seq > SEQ (all without it).
func (s *Server) operationMessages(w http.ResponseWriter, r *http.Request) {
	after, err := afterParam(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	msgs := s.Store().Operation(r.Context(), r.PathValue("id"), r.PathValue("op"))
	s.collectAfter(w, r, after, func(yield func(*protocol.EnhancedMessage, error) bool) {
		for m, err := range msgs {
			if err == nil && m.Seq <= after {
				continue
			}
			if !yield(m, err) {
				return
			}
		}
	})
}

// collectAfter answers the messages of seq as one JSON list; none after an after=SEQ past the
// end of the session's log is a 400 that says so (checkAfter), with the log's last seq.
func (s *Server) collectAfter(w http.ResponseWriter, r *http.Request, after int64, seq func(func(*protocol.EnhancedMessage, error) bool)) {
	list := []*protocol.EnhancedMessage{}
	for m, err := range seq {
		if err != nil {
			storeError(w, err)
			return
		}
		list = append(list, m)
	}
	if len(list) == 0 {
		if err := s.CheckAfter(r.Context(), r.PathValue("id"), after); err != nil {
			afterError(w, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, list)
}

// postOperation submits an operation_request payload; the reply names the operation, whose
// messages then arrive on the session's stream. The request is checked where every exec is
// (operation.Check, in submit): what the exec tools' cells (operation.Cell) may not do, it may
// not do either, and it is refused with the same words.
func (s *Server) postOperation(w http.ResponseWriter, r *http.Request) {
	var req protocol.Request
	if !s.decode(w, r, "operation_request payload", &req) {
		return
	}
	ss, err := s.Open(r.PathValue("id"))
	if err != nil {
		errorStatus(w, err, http.StatusServiceUnavailable)
		return
	}
	defer s.Release(ss)
	id, err := ss.Submit(r.Context(), r.URL.Query().Get("operation_id"), &req)
	if err != nil {
		errorStatus(w, err, http.StatusBadRequest)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"operation_id": id})
}

func (s *Server) postInterrupt(w http.ResponseWriter, r *http.Request) {
	var in protocol.Interrupt
	if r.ContentLength != 0 {
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxMessageBytes)
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			httpError(w, http.StatusBadRequest, "operation_interrupt payload: "+err.Error())
			return
		}
	}
	// An operation another process runs (labmate run, exec, lab run, campaign run) is interrupted
	// there, through the log.
	if err := s.Interrupt(r.Context(), r.PathValue("id"), r.PathValue("op"), in.Why); err != nil {
		httpError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"operation_id": r.PathValue("op")})
}

func storeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, protocol.ErrUnknownSession) || errors.Is(err, protocol.ErrUnknownOperation) {
		code = http.StatusNotFound
	}
	httpError(w, code, err.Error())
}

// afterError answers a refused after=SEQ with 400, any other error as storeError does.
func afterError(w http.ResponseWriter, err error) {
	var pe *runner.PastEnd
	if errors.As(err, &pe) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error(), "last_seq": pe.Last})
		return
	}
	storeError(w, err)
}

// decode reads a request's JSON body, of at most Config.MaxMessageBytes, into v, refusing
// unknown fields; false when it could not, answered 400 with the error after what.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, what string, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxMessageBytes)
	if err := decodeStrict(r, v); err != nil {
		httpError(w, http.StatusBadRequest, what+": "+err.Error())
		return false
	}
	return true
}

func httpError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
