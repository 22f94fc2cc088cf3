package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// exfiltrate is what the hostile files try when a browser renders them: a request to /pwned
// (a script's fetch, an image), which the test's listener records.
const exfiltrate = `fetch("/pwned/script?t=" + sessionStorage.getItem("labmate.token"))`

// hostileCell is a Python cell that leaves hostile files in its workspace: HTML and SVG with
// script, HTML named .png, a symlink to /etc/passwd, a symlinked /etc, a FIFO and a dot-file
// — next to a real matplotlib figure and a CSV.
var hostileCell = `import os
import matplotlib.pyplot as plt
plt.plot([0, 1, 2], [0, 1, 4])
plt.savefig("fig.png")
open("data.csv", "w").write("x,y\n1,2\n")
html = '<!doctype html><title>evil</title><img src="/pwned/img"><script>` + exfiltrate + `</script>'
open("evil.html", "w").write(html)
open("evil-html.png", "w").write(html)
open("evil.svg", "w").write('<svg xmlns="http://www.w3.org/2000/svg" onload="` + strings.ReplaceAll(exfiltrate, `"`, `&quot;`) + `"><script>` + exfiltrate + `</script><image href="/pwned/svgimg"/></svg>')
os.symlink("/etc/passwd", "passwd.txt")
os.symlink("/etc", "etc")
os.mkfifo("pipe.csv")
open(".secret.csv", "w").write("hidden")
print("planted")`

// execArtifacts runs code in session through the server and returns its artifacts.
func execArtifacts(t *testing.T, srv *server.Server, session, kernelName, code string) []*protocol.Artifact {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var arts []*protocol.Artifact
	var last *protocol.EnhancedMessage
	for m, err := range srv.Run(ctx, session, &protocol.Request{Kind: "exec", Kernel: kernelName, Code: code}) {
		if err != nil {
			t.Fatal(err)
		}
		last = m
		p, err := protocol.DecodePayload(m)
		if err != nil {
			t.Fatal(err)
		}
		if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Kind == protocol.ObsArtifact {
			arts = append(arts, pr.Observation.Artifact)
		}
	}
	if last == nil || last.Type != protocol.TypeComplete {
		t.Fatalf("the cell did not complete: %+v", last)
	}
	return arts
}

// TestArtifactREST: a cell's files come back over REST with their types; hostile paths and
// files get nothing out of the workspace and nothing active on the server's origin.
func TestArtifactREST(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	arts := execArtifacts(t, f.srv, "art", "python", hostileCell)
	var paths []string
	sums := map[string]string{}
	for _, a := range arts {
		paths = append(paths, a.Path+" "+a.MIMEType)
		sums[a.Path] = a.SHA256
	}
	if got, want := strings.Join(paths, ", "), "data.csv text/csv, evil-html.png image/png, evil.html text/html, evil.svg image/svg+xml, fig.png image/png"; got != want {
		t.Errorf("artifacts: %s\nwant %s (no symlink, FIFO or dot-file)", got, want)
	}
	for _, c := range []struct {
		path        string
		code        int
		typ, disp   string
		notInBody   string
		wantSHA     bool
		description string
	}{
		{"fig.png", 200, "image/png", "inline", "", true, "a raster image"},
		{"data.csv", 200, "text/csv; charset=utf-8", "inline", "", true, "a table"},
		{"evil.html", 200, "text/html; charset=utf-8", "attachment", "", true, "HTML"},
		{"evil.svg", 200, "image/svg+xml", "attachment", "", true, "SVG with script"},
		{"evil-html.png", 200, "image/png", "inline", "", true, "HTML named .png"},
		{"passwd.txt", 404, "", "", "root:", false, "a symlink to /etc/passwd"},
		{"etc/passwd", 404, "", "", "root:", false, "a symlinked /etc"},
		{"pipe.csv", 404, "", "", "", false, "a FIFO"},
		{".secret.csv", 400, "", "", "hidden", false, "a dot-file"},
		{"%2e%2e/%2e%2e/%2e%2e/etc/passwd", 400, "", "", "root:", false, "an escaped .."},
		{"..%2f..%2f..%2fetc%2fpasswd", 400, "", "", "root:", false, "escaped slashes"},
		{"%2fetc%2fpasswd", 400, "", "", "root:", false, "an absolute path"},
		{"sub%5c..%5c..%5cx", 400, "", "", "", false, "backslashes"},
		{"missing.png", 404, "", "", "", false, "no such file"},
	} {
		resp, err := http.Get(f.http.URL + "/v1/sessions/art/artifacts/" + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != c.code || c.notInBody != "" && strings.Contains(string(body), c.notInBody) {
			t.Errorf("%s (%s): %d %.200s; want %d", c.path, c.description, resp.StatusCode, body, c.code)
			continue
		}
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", c.path, h.Get("X-Content-Type-Options"))
		}
		if c.code != 200 {
			continue
		}
		if h.Get("Content-Type") != c.typ || !strings.HasPrefix(h.Get("Content-Disposition"), c.disp+"; filename=") {
			t.Errorf("%s (%s): Content-Type %q, Content-Disposition %q; want %s, %s", c.path, c.description, h.Get("Content-Type"), h.Get("Content-Disposition"), c.typ, c.disp)
		}
		if csp := h.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox;") || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: Content-Security-Policy %q, want a sandbox that loads nothing and that no page frames", c.path, csp)
		}
		if sum := sha256.Sum256(body); c.wantSHA && hex.EncodeToString(sum[:]) != sums[c.path] {
			t.Errorf("%s: the bytes served are not the artifact's (sha256 %x, reported %s)", c.path, sum, sums[c.path])
		}
	}
	// A raw request with .. in the path is redirected to the cleaned path, outside the session.
	req, _ := http.NewRequest("GET", f.http.URL+"/v1/sessions/art/artifacts/x", nil)
	req.URL.Path = "/v1/sessions/art/artifacts/../../../../etc/passwd"
	req.URL.RawPath = ""
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 200 || strings.Contains(string(body), "root:") {
		t.Errorf("GET with a literal ..: %d %.200s", resp.StatusCode, body)
	}
	if resp, err := http.Get(f.http.URL + "/v1/sessions/nobody/artifacts/fig.png"); err != nil || resp.StatusCode != 404 {
		t.Errorf("a session that ran nothing: %v %v, want 404", resp.Status, err)
	}
	// A range, for a viewer that reads large files in parts.
	req, _ = http.NewRequest("GET", f.http.URL+"/v1/sessions/art/artifacts/data.csv", nil)
	req.Header.Set("Range", "bytes=0-2")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(body) != "x,y" {
		t.Errorf("a range of data.csv: %d %q", resp.StatusCode, body)
	}

	// A real browser opening each file on the server's origin: nothing runs, nothing loads.
	var mu sync.Mutex
	var pwned []string
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/pwned") {
			mu.Lock()
			pwned = append(pwned, r.URL.String())
			mu.Unlock()
			return
		}
		if r.URL.Path == "/control.html" { // the same HTML without the artifact's headers: it must be caught
			io.WriteString(w, `<!doctype html><img src="/pwned/img"><script>`+exfiltrate+`</script>`)
			return
		}
		f.srv.ServeHTTP(w, r)
	}))
	defer front.Close()
	ctx := browser(t, 90*time.Second)
	caught := func() []string {
		t.Helper()
		time.Sleep(700 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		got := pwned
		pwned = nil
		return got
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(front.URL+"/control.html")); err != nil {
		t.Fatal(err)
	}
	if got := caught(); len(got) < 2 {
		t.Fatalf("the control page's script and image were not seen (%v): the test cannot tell", got)
	}
	for _, p := range []string{"evil.html", "evil.svg", "evil-html.png", "fig.png", "data.csv"} {
		// A download aborts the navigation; either way the page must not have run or loaded anything.
		chromedp.Do(ctx, chromedp.Navigate(front.URL+"/v1/sessions/art/artifacts/"+p))
		if got := caught(); len(got) > 0 {
			t.Errorf("opening %s in the browser ran or loaded: %v", p, got)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(front.URL+"/v1/sessions/art/artifacts/fig.png")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the browser shows the figure as an image", `document.images.length === 1 && document.images[0].naturalWidth === 640`)
}

// TestArtifactToken: artifacts are behind the bearer token like every other route.
func TestArtifactToken(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Token = "artifact-token"; c.Prewarm = nil })
	resp, err := http.Get(f.http.URL + "/v1/sessions/s/artifacts/fig.png")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an artifact without the token: %d, want 401", resp.StatusCode)
	}
}
