package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path"
	"strings"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// ErrNoArtifact is wrapped by OpenArtifact for a file it cannot serve: a bad path, or none
// such in a live session's workspace; ErrBadArtifactPath for the former.
var (
	ErrNoArtifact      = errors.New("no such artifact")
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
func (s *Runner) OpenArtifact(session, rel string) (*os.File, os.FileInfo, error) {
	if err := CheckArtifactPath(rel); err != nil {
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
	if ss := s.Lookup(session); ss != nil {
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
func (s *Runner) reportedSum(session, rel string) string {
	sum := ""
	for a := range Reported(context.Background(), s.store, session, rel) {
		if a.SHA256 != "" {
			sum = a.SHA256
		}
	}
	return sum
}

// Reported yields, in log order, each report in session's log of the artifact rel — or of
// every artifact, when rel is "" — by one of its cells or jobs, or by a cell of the agent run
// the session is.
func Reported(ctx context.Context, store protocol.Store, session, rel string) iter.Seq[*protocol.Artifact] {
	return func(yield func(*protocol.Artifact) bool) {
		quoted, _ := json.Marshal(rel)
		if rel == "" {
			quoted = []byte(`"artifact"`)
		}
		for m, err := range store.After(ctx, session, 0) {
			if err != nil {
				return
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
			if a := p.Observation.Artifact; a != nil && (rel == "" || a.Path == rel) && !yield(a) {
				return
			}
		}
	}
}

// CopyReported writes to w the bytes of artifact rel as the newest of reports that names
// it with a digest gave them, from store: the file as a cell or job of who (a session, an
// agent run, a job, as the errors name it) last reported it, after its workspace has changed
// or gone. Its errors name rel and say what who reported instead, or why the file is not kept
// (reported without a digest, evicted for space, never stored here).
func CopyReported(w io.Writer, store *artifact.Store, reports iter.Seq[*protocol.Artifact], who, rel string) error {
	if err := CheckArtifactPath(rel); err != nil {
		return err
	}
	var found *protocol.Artifact
	var names []string
	seen := map[string]bool{}
	for a := range reports {
		if !seen[a.Path] {
			seen[a.Path] = true
			names = append(names, a.Path)
		}
		if a.Path == rel && (a.SHA256 != "" || found == nil || found.SHA256 == "") {
			found = a
		}
	}
	switch {
	case found == nil && len(names) == 0:
		return fmt.Errorf("%s: %s reported no artifacts", rel, who)
	case found == nil:
		return fmt.Errorf("%s: %s reported no such artifact; it reported %s", rel, who, strings.Join(names, ", "))
	case found.SHA256 == "":
		return fmt.Errorf("%s of %s was reported without a digest (larger than a cell's files are kept, or still being written): "+
			"it is only in the workspace that made it", rel, who)
	}
	f, _, err := store.Open(found.SHA256)
	if ev := (*artifact.EvictedError)(nil); errors.As(err, &ev) {
		return fmt.Errorf("%s of %s: %w", rel, who, err)
	} else if err != nil {
		return fmt.Errorf("%s of %s (%d bytes, sha256 %s): not in the artifact store %s: the process that ran it kept none",
			rel, who, found.Size, found.SHA256, store.Dir())
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("writing %s of %s: %w", rel, who, err)
	}
	return nil
}

// execOptions are the options of every cell the server runs: its judge, and its artifact
// store when it has one.
func (s *Runner) execOptions() *operation.Options {
	o := &operation.Options{Judge: s.cfg.Judge}
	if s.cfg.Artifacts != nil {
		o.Artifacts = s.cfg.Artifacts
	}
	return o
}

// CheckArtifactPath accepts what an artifact's path can be: clean, relative, inside the
// workspace, slash-separated, without dot-entries.
func CheckArtifactPath(rel string) error {
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
