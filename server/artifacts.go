package server

import (
	"errors"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// artifactCSP goes on every artifact answer: a file is the cell's, and the cell is hostile.
// Should a browser render one as a document (opened in a tab, say), it runs in a sandbox —
// a unique origin, no script, no plugins, no forms — loads nothing and may not be framed.
const artifactCSP = "sandbox; default-src 'none'; frame-ancestors 'none'"

// storedArtifact serves GET /v1/artifacts/SHA256/NAME: the bytes the artifact store keeps
// under the digest (410 Gone, saying when, for one evicted for space). NAME, the artifact's
// path, gives its type and file name.
func (s *Server) storedArtifact(w http.ResponseWriter, r *http.Request) {
	rel := r.PathValue("path")
	if err := runner.CheckArtifactPath(rel); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	if s.cfg.Artifacts == nil {
		httpError(w, http.StatusNotFound, "this server keeps no artifacts (no artifact store)")
		return
	}
	f, info, err := s.cfg.Artifacts.Open(r.PathValue("sum"))
	if err != nil {
		code := http.StatusNotFound
		if ev := (*artifact.EvictedError)(nil); errors.As(err, &ev) {
			code = http.StatusGone
		}
		httpError(w, code, err.Error())
		return
	}
	defer f.Close()
	serveArtifact(w, r, rel, f, info)
}

// artifact serves GET /v1/sessions/ID/artifacts/PATH: the bytes of a file in the session's
// workspace (OpenArtifact), with ranges and conditional requests. Its Content-Type comes
// from its extension (protocol.ArtifactType); passive types (protocol.InlineArtifact) are
// served inline, everything else (HTML, SVG, XML, unknown) as an attachment, and every
// answer carries artifactCSP and nosniff.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	rel := r.PathValue("path")
	f, info, err := s.OpenArtifact(r.PathValue("id"), rel)
	if err != nil {
		code := http.StatusNotFound
		if errors.Is(err, ErrBadArtifactPath) {
			code = http.StatusBadRequest
		}
		httpError(w, code, err.Error())
		return
	}
	defer f.Close()
	serveArtifact(w, r, rel, f, info)
}

// pinArtifact serves POST /v1/artifacts/SHA256/pin and DELETE /v1/artifacts/SHA256/pin: the
// kept file is kept from eviction, or let go again.
func (s *Server) pinArtifact(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Artifacts == nil {
		httpError(w, http.StatusNotFound, "this server keeps no artifacts (no artifact store)")
		return
	}
	sum, pin := r.PathValue("sum"), r.Method == http.MethodPost
	err := s.cfg.Artifacts.Unpin(sum)
	if pin {
		err = s.cfg.Artifacts.Pin(sum)
	}
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, artifact.ErrNotStored) {
			code = http.StatusNotFound
		}
		httpError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sha256": sum, "pinned": pin})
}

// serveArtifact answers with an artifact's bytes, as hostile content.
func serveArtifact(w http.ResponseWriter, r *http.Request, rel string, f *os.File, info os.FileInfo) {
	typ := protocol.ArtifactType(rel)
	disposition := "attachment"
	if protocol.InlineArtifact(typ) {
		disposition = "inline"
	}
	h := w.Header()
	if strings.HasPrefix(typ, "text/") {
		h.Set("Content-Type", typ+"; charset=utf-8")
	} else {
		h.Set("Content-Type", typ)
	}
	h.Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": path.Base(rel)}))
	h.Set("Content-Security-Policy", artifactCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-cache")
	http.ServeContent(w, r, "", info.ModTime(), f)
}
