package server

import (
	"archive/zip"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/runner"
)

// memoryRoutes serve the dashboard's memory browser over Config.Memory: search facts and
// skills, one entry with its history (whose provenance links to operations of the log),
// the namespaces, and freezing one; and a person's own writes: adding a fact (through
// consolidation, as labmate memory add does), editing one (its old text kept in the history)
// and invalidating an entry (kept, with the reason).
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
	s.mux.HandleFunc("POST /v1/memory/facts", s.memoryAddFact)
	s.mux.HandleFunc("PATCH /v1/memory/entries/{id}", s.memoryEditFact)
	s.mux.HandleFunc("POST /v1/memory/entries/{id}/invalidate", s.memoryInvalidate)
	s.mux.HandleFunc("POST /v1/memory/freeze", s.memoryFreeze)
	s.mux.HandleFunc("GET /v1/memory/export", s.memoryExport)
}

// memoryExport serves GET /v1/memory/export?namespace=NS: the folder labmate memory export
// writes (facts/ID.md, skills/NAME/SKILL.md), of one namespace and its children or of all,
// as a zip file.
func (s *Server) memoryExport(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("namespace")
	if ns != "" {
		if err := memory.ValidNamespace(ns); err != nil {
			memoryError(w, err)
			return
		}
	}
	dir, err := os.MkdirTemp("", "labmate-export-")
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer os.RemoveAll(dir)
	if err := s.ExportMemory(r.Context(), dir, ns); err != nil {
		memoryError(w, err)
		return
	}
	name := "memory"
	if ns != "" {
		name += "-" + strings.ReplaceAll(ns, "/", "_")
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.zip"`, name))
	zw := zip.NewWriter(w)
	if err := zw.AddFS(os.DirFS(dir)); err != nil {
		s.Logf("memory export: %v", err) // the status is sent: the client sees a broken zip
		return
	}
	if err := zw.Close(); err != nil {
		s.Logf("memory export: %v", err)
	}
}

// memorySearch serves GET /v1/memory/search?q=TEXT&type=fact|skill|all&kind=K&tag=T&ns=NS&retired=1&limit=N:
// the memory tools' search_memory (runner.SearchMemory: the same arguments, defaults and limits —
// 8 results, at most 50), its arguments as query parameters (kind, tag and ns repeatable;
// type=fact stands for every fact kind). The reply is the hits, best first, each
// {"fact": …} or {"skill": …} with its score.
func (s *Server) memorySearch(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	in := &runner.MemorySearch{Query: v.Get("q"), Kinds: v["kind"], Tags: v["tag"]}
	switch t := v.Get("type"); t {
	case "", "all":
	case "fact":
		for _, k := range memory.FactKinds {
			in.Kinds = append(in.Kinds, string(k))
		}
	case "skill":
		in.Kinds = append(in.Kinds, string(memory.KindSkill))
	default:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("type=%q: want fact, skill or all", t))
		return
	}
	for _, ns := range v["ns"] {
		if ns = strings.TrimSpace(ns); ns != "" {
			in.Namespaces = append(in.Namespaces, ns)
		}
	}
	switch rt := v.Get("retired"); rt {
	case "", "0", "false":
	case "1", "true":
		in.Retired = true
	default:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("retired=%q: want 1 or 0", rt))
		return
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("limit=%q: want a number, 1 to 50", l))
			return
		}
		in.Limit = n
	}
	hits, err := s.SearchMemory(r.Context(), in)
	if err != nil {
		memoryError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, hits)
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
	var p struct {
		Namespace string `json:"namespace"`
		Frozen    *bool  `json:"frozen"`
	}
	if !s.decode(w, r, "freeze", &p) {
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

// memoryActor is who the history says made a change from the dashboard or REST.
const memoryActor = "dashboard"

// memoryAddFact serves POST /v1/memory/facts {"namespace", "text", "kind", "tags",
// "evidence", "confidence", "source"}: a fact as a person wrote it, through consolidation
// (labmate memory add): an exact or near duplicate in the namespace is merged into the fact
// there. Namespace defaults to "user", kind to "observation". The reply, 201 (200 when
// merged), is {"event": "ADD" or "MERGE", "fact": the stored fact}.
func (s *Server) memoryAddFact(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Namespace  string   `json:"namespace"`
		Text       string   `json:"text"`
		Kind       string   `json:"kind"`
		Tags       []string `json:"tags"`
		Evidence   []string `json:"evidence"`
		Confidence float64  `json:"confidence"`
		Source     string   `json:"source"`
	}
	if !s.decode(w, r, "add fact", &p) {
		return
	}
	if p.Namespace == "" {
		p.Namespace = "user"
	}
	f := &memory.Fact{Text: strings.TrimSpace(p.Text), Kind: memory.Kind(p.Kind), Tags: p.Tags, Evidence: p.Evidence,
		Confidence: p.Confidence, Provenance: memory.Provenance{Source: p.Source}}
	id, event, err := s.AddFact(r.Context(), p.Namespace, memoryActor, f)
	if err != nil {
		memoryError(w, err)
		return
	}
	e, err := s.cfg.Memory.Get(r.Context(), &memory.GetParams{ID: id})
	if err != nil {
		memoryError(w, err)
		return
	}
	code := http.StatusCreated
	if event == memory.EventMerge {
		code = http.StatusOK
	}
	writeJSON(w, code, map[string]any{"event": event, "fact": e.Fact})
}

// memoryEditFact serves PATCH /v1/memory/entries/ID {"text", "kind", "tags", "confidence",
// "reason"}: a person's edit of an active fact in place; fields left out are kept, and the
// history keeps the old text. A skill changes by a new version (update_skill, labmate memory
// sync), not here. The reply is {"fact": the fact}.
func (s *Server) memoryEditFact(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Text       *string   `json:"text"`
		Kind       string    `json:"kind"`
		Tags       *[]string `json:"tags"`
		Confidence float64   `json:"confidence"`
		Reason     string    `json:"reason"`
	}
	if !s.decode(w, r, "edit", &p) {
		return
	}
	id := r.PathValue("id")
	e, err := s.cfg.Memory.Get(r.Context(), &memory.GetParams{ID: id})
	if err != nil {
		memoryError(w, err)
		return
	}
	if e.Fact == nil {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("edit %s: a skill is changed by a new version (update_skill, labmate memory sync), not edited in place", id))
		return
	}
	u := &memory.UpdateFactParams{ID: id, Kind: memory.Kind(p.Kind), Confidence: p.Confidence, Actor: memoryActor, Reason: p.Reason}
	if p.Text != nil {
		if u.Text = strings.TrimSpace(*p.Text); u.Text == "" {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("edit %s: the text is empty (invalidate the fact instead)", id))
			return
		}
	}
	if p.Tags != nil {
		u.Tags = *p.Tags
	}
	if p.Confidence < 0 || p.Confidence > 1 {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("edit %s: confidence %g: want 0 to 1", id, p.Confidence))
		return
	}
	f, err := s.cfg.Memory.UpdateFact(r.Context(), u)
	if err != nil {
		memoryError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"fact": f})
}

// memoryInvalidate serves POST /v1/memory/entries/ID/invalidate {"reason"}: the entry, a fact
// or a skill, is retired and kept, with the reason (required) in its history. The reply is
// {"entry": the entry}.
func (s *Server) memoryInvalidate(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Reason string `json:"reason"`
	}
	if !s.decode(w, r, "invalidate", &p) {
		return
	}
	id := r.PathValue("id")
	if p.Reason = strings.TrimSpace(p.Reason); p.Reason == "" {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("invalidate %s: say why (reason)", id))
		return
	}
	e, err := s.cfg.Memory.Invalidate(r.Context(), &memory.InvalidateParams{ID: id, Actor: memoryActor, Reason: p.Reason})
	if err != nil {
		memoryError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"entry": e})
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
