package server

import (
	"net/http"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

func (s *Server) sessionRoutes() {
	s.mux.HandleFunc("PATCH /v1/sessions/{id}", s.patchSession)
	s.mux.HandleFunc("POST /v1/sessions/{id}/close", s.closeSession)
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	out, err := runner.ListSessions(r.Context(), s.Store())
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// patchSession serves PATCH /v1/sessions/ID {"name": NAME}: it logs a session_update with the
// new name (closed as it was) and replies with the update.
func (s *Server) patchSession(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name *string `json:"name"`
	}
	if !s.decode(w, r, "session update", &in) {
		return
	}
	if in.Name == nil {
		httpError(w, http.StatusBadRequest, `session update: name: missing; send {"name": "…"}`)
		return
	}
	name, err := runner.CheckSessionName(*in.Name)
	if err != nil {
		httpError(w, http.StatusBadRequest, "session update: "+err.Error())
		return
	}
	ss, ok := s.openKnown(w, r)
	if !ok {
		return
	}
	defer s.Release(ss)
	u, err := ss.Update(r.Context(), func(u *protocol.SessionUpdate) { u.Name = name })
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, u)
}

// openKnown opens the session the request names, replying 404 when it does not exist.
func (s *Server) openKnown(w http.ResponseWriter, r *http.Request) (*runner.Session, bool) {
	id := r.PathValue("id")
	ok, err := s.Known(r.Context(), id)
	if err != nil {
		storeError(w, err)
		return nil, false
	}
	if !ok {
		httpError(w, http.StatusNotFound, "no session "+id+" on this server")
		return nil, false
	}
	ss, err := s.Open(id)
	if err != nil {
		errorStatus(w, err, http.StatusServiceUnavailable)
		return nil, false
	}
	return ss, true
}

// closeSession serves POST /v1/sessions/ID/close: the session's queued and running operations
// are interrupted, its kernels closed, it leaves the server's memory when nobody is connected,
// and a session_update says it is closed (its name kept). The session of a running agent run
// is not closed: cancel the run first (409).
func (s *Server) closeSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.Running(id) != nil {
		httpError(w, http.StatusConflict, "session "+id+" is agent run "+id+", which is running: cancel it first (POST /v1/runs/"+id+"/cancel)")
		return
	}
	ss, ok := s.openKnown(w, r)
	if !ok {
		return
	}
	u, err := s.CloseSession(r.Context(), ss)
	if err != nil {
		errorStatus(w, err, http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, u)
}
