package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/labmate/labmate/artifact"
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
// without dot-entries) that a cell of session reported. It is served from the artifact store
// (Config.Artifacts) when the session's log reports the file with a digest the store keeps —
// the newest such report — so a figure outlives the session's workspace and the server; an
// evicted one is an error that says when it was evicted. Otherwise the file is opened in the
// workspace of session, which must be live on this server: through an os.Root on the
// workspace, so neither .. nor a symlink the cell planted reaches outside it, and only a
// regular file (a FIFO would block, a device has no end). The caller closes it.
func (s *Server) OpenArtifact(session, rel string) (*os.File, os.FileInfo, error) {
	if err := checkArtifactPath(rel); err != nil {
		return nil, nil, err
	}
	if sum := s.reportedSum(session, rel); sum != "" && s.cfg.Artifacts != nil {
		f, info, err := s.cfg.Artifacts.Open(sum)
		if err == nil {
			return f, info, nil
		}
		if ev := (*artifact.EvictedError)(nil); errors.As(err, &ev) {
			return nil, nil, fmt.Errorf("%w: %s of session %s: %w", ErrNoArtifact, rel, session, err)
		}
	}
	ws := ""
	if ss := s.lookup(session); ss != nil {
		ss.mu.Lock()
		ws = ss.ws
		ss.mu.Unlock()
	}
	if ws == "" {
		return nil, nil, fmt.Errorf("%w: session %s has no workspace on this server and the artifact store has no copy of %s: "+
			"it was never reported by a cell, or it was larger than the store keeps", ErrNoArtifact, session, rel)
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

// reportedSum is the digest of the newest report of artifact rel in session's log — by
// one of its cells, or by a cell of the agent run the session is — or "".
func (s *Server) reportedSum(session, rel string) string {
	sum := ""
	quoted, _ := json.Marshal(rel)
	for m, err := range s.store.After(context.Background(), session, 0) {
		if err != nil {
			break
		}
		if !bytes.Contains(m.Payload, quoted) { // most messages are not this artifact's
			continue
		}
		if m.Type == protocol.TypeRunEvent {
			var ev struct{ Message *protocol.EnhancedMessage }
			if json.Unmarshal(m.Payload, &ev) != nil || ev.Message == nil {
				continue
			}
			m = ev.Message
		}
		var p protocol.Progress
		if m.Type != protocol.TypeProgress || m.Decode(&p) != nil || p.Observation == nil {
			continue
		}
		if a := p.Observation.Artifact; a != nil && a.Path == rel && a.SHA256 != "" {
			sum = a.SHA256
		}
	}
	return sum
}

// storedArtifact serves GET /v1/artifacts/SHA256/NAME: the bytes the artifact store keeps
// under the digest (410 Gone, saying when, for one evicted for space). NAME, the artifact's
// path, gives its type and file name.
func (s *Server) storedArtifact(w http.ResponseWriter, r *http.Request) {
	rel := r.PathValue("path")
	if err := checkArtifactPath(rel); err != nil {
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

// execOptions are the options of every cell the server runs: its judge, and its artifact
// store when it has one.
func (s *Server) execOptions() *operation.Options {
	o := &operation.Options{Judge: s.cfg.Judge}
	if s.cfg.Artifacts != nil {
		o.Artifacts = s.cfg.Artifacts
	}
	return o
}
