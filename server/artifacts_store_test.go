package server_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// storeCell leaves a figure, a table, an SVG with script, a symlink, a FIFO and a dot-file.
const storeCell = `import os
open("fig.png", "wb").write(b"\x89PNG\r\n\x1a\n" + bytes(100))
open("data.csv", "w").write("x,y\n1,2\n")
open("evil.svg", "w").write('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
os.symlink("/etc/passwd", "passwd.txt")
os.mkfifo("pipe.csv")
open(".secret.csv", "w").write("hidden")
print("planted")`

// TestArtifactStoreREST: with an artifact store, a hostile cell's regular files are kept by
// their digests — its symlinks, FIFO and dot-file are not — and served from the store as
// hostile content by digest, and by session and path once the workspace is gone; an evicted
// file answers 410 saying when; bad digests and paths are refused.
func TestArtifactStoreREST(t *testing.T) {
	dir := t.TempDir()
	st, err := artifact.Open(filepath.Join(dir, "artifacts"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "workspaces")
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Artifacts, c.Workspaces = st, ws })
	arts := execArtifacts(t, f.srv, "kept", "python", storeCell)
	sums := map[string]string{}
	var size int64
	for _, a := range arts {
		sums[a.Path] = a.SHA256
		size += a.Size
	}
	if len(arts) != 3 || st.Used() != size {
		t.Fatalf("%d artifacts of %d bytes; the store holds %d bytes", len(arts), size, st.Used())
	}
	if err := os.RemoveAll(ws); err != nil { // the workspace is gone: only the store has the files
		t.Fatal(err)
	}
	get := func(path string) (int, http.Header, string) {
		t.Helper()
		resp, err := http.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for _, p := range []string{"/v1/artifacts/" + sums["fig.png"] + "/fig.png", "/v1/sessions/kept/artifacts/fig.png"} {
		code, h, body := get(p)
		if code != 200 || h.Get("Content-Type") != "image/png" || !strings.HasPrefix(body, "\x89PNG") || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("GET %s: %d %s %q", p, code, h.Get("Content-Type"), h.Get("Content-Security-Policy"))
		}
	}
	if code, h, _ := get("/v1/artifacts/" + sums["evil.svg"] + "/evil.svg"); code != 200 || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") {
		t.Errorf("the SVG from the store: %d %q, want an attachment", code, h.Get("Content-Disposition"))
	}
	// Pinned, a file is kept from eviction; unpinned, it may go again.
	for _, c := range []struct {
		method, sum string
		code        int
	}{{"POST", sums["fig.png"], 200}, {"DELETE", sums["fig.png"], 200}, {"POST", sums["fig.png"], 200}, {"POST", strings.Repeat("0", 64), 404}} {
		req, _ := http.NewRequest(c.method, f.http.URL+"/v1/artifacts/"+c.sum+"/pin", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s /v1/artifacts/%.8s…/pin: %d, want %d", c.method, c.sum, resp.StatusCode, c.code)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "artifacts", sums["fig.png"][:2], sums["fig.png"][2:]+".pin")); err != nil {
		t.Errorf("fig.png is not pinned: %v", err)
	}
	csv := sums["data.csv"]
	if err := os.Remove(filepath.Join(dir, "artifacts", csv[:2], csv[2:])); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "artifacts", csv[:2], csv[2:]+".evicted"), []byte("8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/v1/artifacts/" + csv + "/data.csv", http.StatusGone, "evicted for space at"},
		{"/v1/sessions/kept/artifacts/data.csv", http.StatusNotFound, "evicted for space at"},
		{"/v1/artifacts/" + strings.Repeat("0", 64) + "/x.png", http.StatusNotFound, "not stored"},
		{"/v1/artifacts/..%2f..%2fetc/passwd", http.StatusNotFound, ""},
		{"/v1/artifacts/" + csv + "/.secret.csv", http.StatusBadRequest, "dot-entries"},
		{"/v1/sessions/kept/artifacts/passwd.txt", http.StatusNotFound, "no such artifact"},
	} {
		if code, _, body := get(c.path); code != c.code || !strings.Contains(body, c.want) || strings.Contains(body, "root:") {
			t.Errorf("GET %s: %d %.200s; want %d saying %q", c.path, code, body, c.code, c.want)
		}
	}
}
