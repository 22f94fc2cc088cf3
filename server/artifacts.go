package server

import (
	"fmt"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// artifactCSP goes on every artifact answer: a file is the cell's, and the cell is hostile.
// Should a browser render one as a document (opened in a tab, say), it runs in a sandbox —
// a unique origin, no script, no plugins, no forms — loads nothing and may not be framed.
const artifactCSP = "sandbox; default-src 'none'; frame-ancestors 'none'"

// artifact serves GET /v1/sessions/ID/artifacts/PATH: the bytes of a regular file in the
// workspace of a session live on this server (what an artifact observation names), with
// ranges and conditional requests. PATH must be a clean relative path without dot-entries;
// the file is opened through an os.Root on the workspace, so neither .. nor a symlink the
// cell planted reaches outside it, and a FIFO or device is refused. Its Content-Type comes
// from its extension (protocol.ArtifactType); passive types (protocol.InlineArtifact) are
// served inline, everything else (HTML, SVG, XML, unknown) as an attachment, and every
// answer carries artifactCSP and nosniff.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	id, rel := r.PathValue("id"), r.PathValue("path")
	if err := checkArtifactPath(rel); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	ws := ""
	if ss := s.lookup(id); ss != nil {
		ss.mu.Lock()
		ws = ss.ws
		ss.mu.Unlock()
	}
	if ws == "" {
		httpError(w, http.StatusNotFound, fmt.Sprintf("session %s has no workspace on this server: it has run no cell here, "+
			"or it was idle and dropped (its artifacts went with the workspace)", id))
		return
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		httpError(w, http.StatusNotFound, fmt.Sprintf("session %s: workspace: %v", id, err))
		return
	}
	defer root.Close()
	f, info, err := operation.OpenWorkspaceFile(root, rel)
	if err != nil {
		httpError(w, http.StatusNotFound, fmt.Sprintf("session %s has no file %q in its workspace", id, rel))
		return
	}
	defer f.Close()
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

// checkArtifactPath accepts what an artifact's path can be: clean, relative, inside the
// workspace, slash-separated, without dot-entries.
func checkArtifactPath(rel string) error {
	if rel == "" || strings.ContainsRune(rel, '\\') || path.Clean(rel) != rel || path.IsAbs(rel) {
		return fmt.Errorf("artifact path %q: want a clean relative path inside the workspace", rel)
	}
	for part := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return fmt.Errorf("artifact path %q: dot-entries (and ..) are not artifacts", rel)
		}
	}
	return nil
}
