package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labmate/labmate/runner"
)

// campaignRoutes serve the dashboard's campaign page.
func (s *Server) campaignRoutes() {
	if s.cfg.Campaigns == nil {
		return
	}
	s.mux.HandleFunc("GET /v1/campaigns", func(w http.ResponseWriter, r *http.Request) {
		list, err := s.Campaigns(r.Context())
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, list)
	})
	s.mux.HandleFunc("POST /v1/campaigns", func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, runner.MaxCampaignBody) // a CSV may come inline
		var spec runner.CampaignSpec
		if err := decodeStrict(r, &spec); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("campaign: the request has more than %d bytes; a CSV may have at most %d", tooLarge.Limit, runner.MaxCSVBytes))
				return
			}
			httpError(w, http.StatusBadRequest, "campaign: "+err.Error())
			return
		}
		st, err := s.StartCampaign(r.Context(), &spec)
		switch {
		case errors.Is(err, runner.ErrTooManyCampaigns):
			httpError(w, http.StatusServiceUnavailable, err.Error())
			return
		case err != nil:
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusCreated, st)
	})
	s.mux.HandleFunc("GET /v1/campaigns/{id}", func(w http.ResponseWriter, r *http.Request) {
		st, err := s.CampaignState(r.Context(), r.PathValue("id"))
		switch {
		case errors.Is(err, runner.ErrUnknownCampaign):
			httpError(w, http.StatusNotFound, err.Error())
			return
		case err != nil:
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, st)
	})
	s.mux.HandleFunc("POST /v1/campaigns/{id}/step", func(w http.ResponseWriter, r *http.Request) {
		n := 1
		if v := r.URL.Query().Get("n"); v != "" {
			var err error
			if n, err = strconv.Atoi(v); err != nil || n < 1 || n > runner.MaxBudget {
				httpError(w, http.StatusBadRequest, fmt.Sprintf("n=%q: want 1 to %d turns", v, runner.MaxBudget))
				return
			}
		}
		st, err := s.StepCampaign(r.Context(), r.PathValue("id"), n)
		switch {
		case errors.Is(err, runner.ErrUnknownCampaign):
			httpError(w, http.StatusNotFound, err.Error())
		case err != nil:
			httpError(w, http.StatusInternalServerError, err.Error())
		default:
			writeJSON(w, http.StatusOK, st)
		}
	})
}

// decodeStrict decodes a JSON request body into v, refusing unknown fields.
func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
