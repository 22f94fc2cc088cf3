package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// Artifacts are resources: each file a cell created or changed is listed as
// labmate://artifacts/SESSION/PATH (SESSION and each segment of PATH URL-escaped) once exec
// has seen it, the most recent maxListedArtifacts of them; any file of a live session's
// workspace can be read through the template of the same form. A read returns the file's
// bytes as they are now (text for text types, else a blob), up to maxArtifactRead bytes.
const (
	artifactPrefix     = "labmate://artifacts/"
	maxListedArtifacts = 256
	maxArtifactRead    = 16 << 20
)

// artifactURI is the resource URI of an artifact of session.
func artifactURI(session, rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return artifactPrefix + url.PathEscape(session) + "/" + strings.Join(parts, "/")
}

// parseArtifactURI is artifactURI's inverse.
func parseArtifactURI(uri string) (session, rel string, ok bool) {
	rest, ok := strings.CutPrefix(uri, artifactPrefix)
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 {
		return "", "", false
	}
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil || u == "" || strings.Contains(u, "/") {
			return "", "", false
		}
		parts[i] = u
	}
	return parts[0], strings.Join(parts[1:], "/"), true
}

// artifactResources are the listed artifacts, oldest first.
type artifactResources struct {
	mu   sync.Mutex
	uris []string
}

func (l *Lab) addArtifactResources() {
	l.mcp.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: artifactPrefix + "{session}/{+path}", Name: "artifact", Title: "Artifact",
		Description: "A file a cell created or changed in a session's workspace (a figure, a table): labmate://artifacts/SESSION/PATH"}, l.readArtifact)
}

// listArtifact lists a newly seen artifact of session, dropping the oldest beyond the cap.
func (l *Lab) listArtifact(session, opID string, a *protocol.Artifact) string {
	uri := artifactURI(session, a.Path)
	l.artifacts.mu.Lock()
	defer l.artifacts.mu.Unlock()
	for i, u := range l.artifacts.uris {
		if u == uri {
			l.artifacts.uris = append(l.artifacts.uris[:i], l.artifacts.uris[i+1:]...)
			break
		}
	}
	l.artifacts.uris = append(l.artifacts.uris, uri)
	if n := len(l.artifacts.uris) - maxListedArtifacts; n > 0 {
		l.mcp.RemoveResources(l.artifacts.uris[:n]...)
		l.artifacts.uris = append([]string(nil), l.artifacts.uris[n:]...)
	}
	l.mcp.AddResource(&sdk.Resource{URI: uri, Name: a.Path, Title: a.Path + " (session " + session + ")", MIMEType: a.MIMEType, Size: a.Size,
		Description: fmt.Sprintf("written by operation %s; sha256 %s", opID, a.SHA256)}, l.readArtifact)
	return uri
}

// readArtifact serves labmate://artifacts/SESSION/PATH.
func (l *Lab) readArtifact(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	session, rel, ok := parseArtifactURI(uri)
	if !ok {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	f, info, err := l.srv.OpenArtifact(session, rel)
	if errors.Is(err, runner.ErrNoArtifact) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	defer f.Close()
	if info.Size() > maxArtifactRead {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d an MCP read returns: fetch it over REST (GET /v1/sessions/SESSION/artifacts/PATH of labmate serve)",
			uri, info.Size(), maxArtifactRead)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxArtifactRead))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	c := &sdk.ResourceContents{URI: uri, MIMEType: protocol.ArtifactType(rel)}
	if textType(c.MIMEType) && utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// textType reports whether files of MIME type t are read as text.
func textType(t string) bool {
	return strings.HasPrefix(t, "text/") || t == "application/json" || t == "application/xml" || t == "image/svg+xml"
}
