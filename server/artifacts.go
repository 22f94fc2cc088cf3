package server

import (
	"errors"
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

// ErrNoArtifact is wrapped by OpenArtifact for a file it cannot serve: a bad path, or none
// such in a live session's workspace; ErrBadArtifactPath for the former.
var (
	ErrNoArtifact      = errors.New("server: no such artifact")
	ErrBadArtifactPath = fmt.Errorf("%w: bad path", ErrNoArtifact)
)

// OpenArtifact opens the file rel (an artifact's path: clean, relative, slash-separated,
// without dot-entries) in the workspace of session, which must be live on this server. The
// file is opened through an os.Root on the workspace, so neither .. nor a symlink the cell
// planted reaches outside it; only a regular file is opened (a FIFO would block, a device has
// no end). The caller closes it.
func (s *Server) OpenArtifact(session, rel string) (*os.File, os.FileInfo, error) {
	if err := checkArtifactPath(rel); err != nil {
		return nil, nil, err
	}
	ws := ""
	if ss := s.lookup(session); ss != nil {
		ss.mu.Lock()
		ws = ss.ws
		ss.mu.Unlock()
	}
	if ws == "" {
		return nil, nil, fmt.Errorf("%w: session %s has no workspace on this server: it has run no cell here, "+
			"or it was idle and dropped (its artifacts went with the workspace)", ErrNoArtifact, session)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: session %s: workspace: %w", ErrNoArtifact, session, err)
	}
	defer root.Close()
	f, info, err := operation.OpenWorkspaceFile(root, rel)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: session %s has no file %q in its workspace", ErrNoArtifact, session, rel)
	}
	return f, info, nil
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
		return fmt.Errorf("%w: %q: want a clean relative path inside the workspace", ErrBadArtifactPath, rel)
	}
	for part := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return fmt.Errorf("%w: %q: dot-entries (and ..) are not artifacts", ErrBadArtifactPath, rel)
		}
	}
	return nil
}
