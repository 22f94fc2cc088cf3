package protocol

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// TestArtifactJSON pins the wire format of an artifact observation.
func TestArtifactJSON(t *testing.T) {
	const golden = `{"observation":{"kind":"artifact","time":"2026-01-02T03:04:05Z",` +
		`"artifact":{"path":"figs/sin.png","mime_type":"image/png","size":4,"sha256":"` + digest + `"}}}`
	var p Progress
	if err := json.Unmarshal([]byte(golden), &p); err != nil {
		t.Fatal(err)
	}
	want := &Artifact{Path: "figs/sin.png", MIMEType: "image/png", Size: 4, SHA256: digest}
	if diff := cmp.Diff(want, p.Observation.Artifact); diff != "" {
		t.Errorf("artifact mismatch (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(&p)
	if err != nil || string(b) != golden {
		t.Errorf("marshalled = %s, %v; want %s", b, err, golden)
	}
}

func TestArtifactValidate(t *testing.T) {
	ok := Artifact{Path: "out/fig.png", MIMEType: "image/png", Size: 10, SHA256: digest}
	for _, c := range []struct {
		what string
		edit func(*Artifact)
		want string // in the error; "" for valid
	}{
		{"valid", func(*Artifact) {}, ""},
		{"no digest (too large to hash)", func(a *Artifact) { a.SHA256 = "" }, ""},
		{"empty path", func(a *Artifact) { a.Path = "" }, "path"},
		{"absolute path", func(a *Artifact) { a.Path = "/etc/passwd" }, "path"},
		{"parent", func(a *Artifact) { a.Path = "../x.png" }, "path"},
		{"inner parent", func(a *Artifact) { a.Path = "a/../../x.png" }, "path"},
		{"unclean", func(a *Artifact) { a.Path = "a//x.png" }, "path"},
		{"dot", func(a *Artifact) { a.Path = "./x.png" }, "path"},
		{"backslash", func(a *Artifact) { a.Path = `a\..\x.png` }, "path"},
		{"newline", func(a *Artifact) { a.Path = "a\nlabmate: ok.png" }, "printable"},
		{"terminal escape", func(a *Artifact) { a.Path = "\x1b[2Jx.png" }, "printable"},
		{"not UTF-8", func(a *Artifact) { a.Path = "\xff.png" }, "printable"},
		{"unicode", func(a *Artifact) { a.Path = "résultats/σ.png" }, ""},
		{"negative size", func(a *Artifact) { a.Size = -1 }, "size"},
		{"short digest", func(a *Artifact) { a.SHA256 = "abc" }, "sha256"},
		{"upper-case digest", func(a *Artifact) { a.SHA256 = strings.ToUpper(digest) }, "sha256"},
		{"no type", func(a *Artifact) { a.MIMEType = "" }, "MIME"},
		{"type with parameters", func(a *Artifact) { a.MIMEType = "text/html; charset=utf-8" }, "MIME"},
		{"not a type", func(a *Artifact) { a.MIMEType = "<script>" }, "MIME"},
	} {
		a := ok
		c.edit(&a)
		err := a.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", c.what, err)
		case c.want != "" && (!errors.Is(err, ErrInvalidMessage) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want ErrInvalidMessage naming %s", c.what, err, c.want)
		}
	}
}

// TestDecodeArtifact: a peer's artifact observation is checked before anyone builds a path
// or a URL from it.
func TestDecodeArtifact(t *testing.T) {
	for payload, bad := range map[string]bool{
		`{"observation":{"kind":"artifact","artifact":{"path":"a.csv","mime_type":"text/csv","size":3}}}`:    false,
		`{"observation":{"kind":"artifact","artifact":{"path":"../a.csv","mime_type":"text/csv","size":3}}}`: true,
		`{"observation":{"kind":"artifact"}}`:          true,
		`{"observation":{"kind":"stdout","line":"x"}}`: false,
	} {
		_, err := DecodePayload(&EnhancedMessage{Type: TypeProgress, OperationID: "op1", Payload: json.RawMessage(payload)})
		if bad != (err != nil) || bad && !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("DecodePayload(%s) = %v; want an error wrapping ErrInvalidMessage: %v", payload, err, bad)
		}
	}
}

func TestArtifactType(t *testing.T) {
	for name, want := range map[string]string{
		"sin.png": "image/png", "FIG.PNG": "image/png", "a/b/t.csv": "text/csv", "x.svg": "image/svg+xml",
		"r.pdf": "application/pdf", "page.html": "text/html", "data.bin": "application/octet-stream", "Makefile": "application/octet-stream",
	} {
		if got := ArtifactType(name); got != want {
			t.Errorf("ArtifactType(%q) = %q, want %q", name, got, want)
		}
	}
	for typ, inline := range map[string]bool{
		"image/png": true, "image/jpeg": true, "application/pdf": true, "text/csv": true,
		"image/svg+xml": false, "text/html": false, "application/xml": false, "application/octet-stream": false,
	} {
		if InlineArtifact(typ) != inline {
			t.Errorf("InlineArtifact(%q) = %v, want %v", typ, !inline, inline)
		}
	}
}
