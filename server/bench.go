package server

import (
	"net/http"
)

func (s *Server) sessionBench(w http.ResponseWriter, r *http.Request) {
	v, err := s.BenchView(r.Context(), r.PathValue("id"))
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}
