package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labmate/labmate/memory"
)

// memoryRoutes serve the dashboard's memory browser over Config.Memory: search facts and
// skills, one entry with its history (whose provenance links to operations of the log),
// the namespaces, and freezing one.
func (s *Server) memoryRoutes() {
	if s.cfg.Memory == nil {
		return
	}
	s.mux.HandleFunc("GET /v1/memory/search", s.memorySearch)
	s.mux.HandleFunc("GET /v1/memory/entries/{id}", s.memoryEntry)
	s.mux.HandleFunc("GET /v1/memory/namespaces", func(w http.ResponseWriter, r *http.Request) {
		list, err := s.cfg.Memory.Namespaces(r.Context())
		if err != nil {
			memoryError(w, err)
			return
		}
		if list == nil {
			list = []memory.Namespace{}
		}
		writeJSON(w, http.StatusOK, list)
	})
	s.mux.HandleFunc("POST /v1/memory/freeze", s.memoryFreeze)
}

// memorySearch serves GET /v1/memory/search?q=TEXT&type=fact|skill&ns=NS&retired=1&limit=N.
func (s *Server) memorySearch(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q := &memory.Query{Text: v.Get("q")}
	switch t := v.Get("type"); t {
	case "", "all":
	case "fact":
		q.Kinds = memory.FactKinds
	case "skill":
		q.Kinds = []memory.Kind{memory.KindSkill}
	default:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("type=%q: want fact, skill or all", t))
		return
	}
	if ns := strings.TrimSpace(v.Get("ns")); ns != "" {
		q.Namespaces = []string{ns}
	}
	if v.Get("retired") == "1" {
		q.Status = []memory.Status{memory.StatusActive, memory.StatusSuperseded, memory.StatusInvalidated}
	}
	q.Limit = 50
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("limit=%q: want 1 to 500", l))
			return
		}
		q.Limit = n
	}
	list := []*memory.Result{}
	for res, err := range s.cfg.Memory.Search(r.Context(), q) {
		if err != nil {
			memoryError(w, err)
			return
		}
		list = append(list, res)
	}
	writeJSON(w, http.StatusOK, list)
}

// memoryEntry serves GET /v1/memory/entries/ID: the entry and its history, oldest first.
func (s *Server) memoryEntry(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	e, err := s.cfg.Memory.Get(r.Context(), &memory.GetParams{ID: id})
	if err != nil {
		memoryError(w, err)
		return
	}
	history := []*memory.Change{}
	for c, err := range s.cfg.Memory.History(r.Context(), &memory.HistoryParams{EntryID: id}) {
		if err != nil {
			memoryError(w, err)
			return
		}
		history = append(history, c)
	}
	writeJSON(w, http.StatusOK, map[string]any{"entry": e, "history": history})
}

// memoryFreeze serves POST /v1/memory/freeze {"namespace": NS, "frozen": BOOL}.
func (s *Server) memoryFreeze(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxMessageBytes)
	var p struct {
		Namespace string `json:"namespace"`
		Frozen    *bool  `json:"frozen"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		httpError(w, http.StatusBadRequest, "freeze: "+err.Error())
		return
	}
	if p.Frozen == nil {
		httpError(w, http.StatusBadRequest, `freeze: "frozen" (true or false) is missing`)
		return
	}
	if err := s.cfg.Memory.Freeze(r.Context(), &memory.FreezeParams{Namespace: p.Namespace, Frozen: *p.Frozen, Actor: "dashboard"}); err != nil {
		memoryError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespace": p.Namespace, "frozen": *p.Frozen})
}

func memoryError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, memory.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, memory.ErrInvalid), errors.Is(err, memory.ErrBadQuery), errors.Is(err, memory.ErrBadSkill):
		code = http.StatusBadRequest
	case errors.Is(err, memory.ErrFrozen), errors.Is(err, memory.ErrConflict), errors.Is(err, memory.ErrNotActive):
		code = http.StatusConflict
	}
	httpError(w, code, err.Error())
}
