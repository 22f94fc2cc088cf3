package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/labmate/labmate/runner"

	"github.com/coder/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/memory"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

// call sends one request to the fixture's server and returns the status and the body.
func call(t *testing.T, f *fixture, method, path, host string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// noRequests fails the test when the session's log holds an operation_request.
func noRequests(t *testing.T, store protocol.Store, session string) {
	t.Helper()
	for m, err := range store.After(context.Background(), session, 0) {
		if errors.Is(err, protocol.ErrUnknownSession) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeRequest {
			t.Fatalf("session %s logged an operation_request: the attack ran code", session)
		}
	}
}

const execBody = `{"kind":"exec","kernel":"python","code":"open('pwned', 'w').write('x')"}`

// TestRebindingHost: a DNS-rebinding page reaches the server under its own name. Every route
// refuses that Host — REST, the memory export, session logs, the WebSocket upgrade, /mcp and
// the dashboard — even with the right token, and says why; loopback names, the listening
// address's host and --allow-host names pass, whatever the port.
func TestRebindingHost(t *testing.T) {
	const token = "rebinding-test-token-0123"
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		c.Token, c.Prewarm, c.Memory = token, nil, openMemory(t)
		c.AllowHosts = []string{"lab.example.org", "*.lab.example.net"}
	})
	f.srv.Handle("/mcp", mcp.New(f.srv.Runner, nil).Handler())
	auth := map[string]string{"Authorization": "Bearer " + token}
	// A session with a log to steal.
	if code, body := call(t, f, "POST", "/v1/sessions/victim/operations", "", map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"},
		`{"kind":"exec","kernel":"python","code":"print('secret')"}`); code != http.StatusAccepted {
		t.Fatalf("the victim's operation: %d %s", code, body)
	}
	for _, host := range []string{"evil.example:7878", "evil.example", "EVIL.example.:1", "localhost.evil.example:7878", "127.0.0.1.nip.io:7878", "lab.example.org.evil.example"} {
		for _, r := range []struct{ method, path string }{
			{"GET", "/v1/memory/export"},
			{"GET", "/v1/sessions"},
			{"GET", "/v1/sessions/victim/messages"},
			{"GET", "/v1/sessions/victim/operations"},
			{"POST", "/v1/sessions/victim/operations"},
			{"GET", "/"},
			{"GET", "/healthz"},
			{"POST", "/mcp"},
		} {
			code, body := call(t, f, r.method, r.path, host, map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}, execBody)
			if code != http.StatusForbidden || !strings.Contains(body, "DNS-rebinding") || !strings.Contains(body, "--allow-host") || strings.Contains(body, "secret") {
				t.Errorf("%s %s with Host %s: %d %s; want 403 naming the rebinding", r.method, r.path, host, code, body)
			}
		}
		ws := strings.Replace(f.http.URL, "http", "ws", 1) + "/v1/sessions/victim/ws"
		_, resp, err := websocket.Dial(context.Background(), ws, &websocket.DialOptions{Host: host, HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("WebSocket with Host %s: %v, want 403", host, err)
		}
	}
	// MCP over the rebinding name, with a real MCP client: refused at the first request.
	cl := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	_, err := cl.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: f.http.URL + "/mcp",
		HTTPClient: &http.Client{Transport: hostRewriter{"evil.example:7878", token}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("MCP through Host evil.example: %v, want 403", err)
	}
	noRequests(t, f.store, "stolen")

	port := strings.TrimPrefix(f.http.URL, "http://127.0.0.1")
	for _, host := range []string{"127.0.0.1" + port, "localhost" + port, "LOCALHOST:1", "[::1]" + port, "[::1]", "127.0.0.2:99", "dash.localhost" + port, "lab.example.org:443", "a.lab.example.net"} {
		if code, body := call(t, f, "GET", "/v1/sessions/victim/operations", host, auth, ""); code != http.StatusOK {
			t.Errorf("GET with Host %s: %d %s, want 200", host, code, body)
		}
	}
}

// hostRewriter sends every request with another Host header and the bearer token.
type hostRewriter struct{ host, token string }

func (h hostRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	r.Header.Set("Authorization", "Bearer "+h.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestListenAddressHosts: the host of the listening address is allowed; an unspecified one
// (every interface) allows IP literals, never names.
func TestListenAddressHosts(t *testing.T) {
	for _, c := range []struct {
		addr  string
		allow []string
		deny  []string
	}{
		{"192.0.2.7:7878", []string{"192.0.2.7:7878", "192.0.2.7", "localhost:1"}, []string{"192.0.2.8:7878", "evil.example:7878"}},
		{"0.0.0.0:7878", []string{"192.0.2.8:7878", "[2001:db8::1]:7878", "10.1.2.3"}, []string{"evil.example:7878", "host.lan:7878"}},
		{"[::]:7878", []string{"192.0.2.8:7878", "[2001:db8::1]:7878"}, []string{"evil.example:7878"}},
		{"lab.lan:7878", []string{"lab.lan:7878", "LAB.LAN"}, []string{"evil.example:7878", "192.0.2.8:7878"}},
	} {
		f := newFixture(t, protocol.NewMemStore(), func(cfg *server.Config) { cfg.Addr, cfg.Prewarm = c.addr, nil })
		for _, h := range c.allow {
			if code, body := call(t, f, "GET", "/v1/sessions", h, nil, ""); code != http.StatusOK {
				t.Errorf("--addr %s, Host %s: %d %s, want 200", c.addr, h, code, body)
			}
		}
		for _, h := range c.deny {
			if code, _ := call(t, f, "GET", "/v1/sessions", h, nil, ""); code != http.StatusForbidden {
				t.Errorf("--addr %s, Host %s: %d, want 403", c.addr, h, code)
			}
		}
	}
	for _, bad := range []string{"http://lab.example.org", "lab.example.org:8080", "lab/x", "*"} {
		_, err := server.New(context.Background(), server.Config{Config: runner.Config{Store: protocol.NewMemStore()}, AllowHosts: []string{bad}})
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("AllowHosts %q: %v, want an error naming it", bad, err)
		}
	}
}

// TestCrossSitePost: a page elsewhere posts an operation the way a browser lets any page do
// without asking (a "simple" request: text/plain, or a form), with and without a token on
// the server. Nothing reaches the log; the server's own origin still works.
func TestCrossSitePost(t *testing.T) {
	for _, token := range []string{"", "cross-site-token-0123456"} {
		f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Token, c.Prewarm = token, nil })
		port := strings.TrimPrefix(f.http.URL, "http://127.0.0.1")
		for _, c := range []struct {
			what string
			hdr  map[string]string
			want int
		}{
			{"text/plain from evil.example", map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403},
			{"text/plain from another loopback port", map[string]string{"Content-Type": "text/plain;charset=UTF-8", "Origin": "http://127.0.0.1:1"}, 403},
			{"text/plain without an Origin", map[string]string{"Content-Type": "text/plain"}, 415},
			{"a form", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
			{"a multipart form", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, 415},
			{"no content type", nil, 415},
			{"JSON from evil.example", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, 403},
			{"JSON from a sandboxed frame", map[string]string{"Content-Type": "application/json", "Origin": "null"}, 403},
			{"JSON marked cross-site", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403},
			{"JSON marked same-site (another port)", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403},
		} {
			code, body := call(t, f, "POST", "/v1/sessions/x/operations", "", c.hdr, execBody)
			if code != c.want {
				t.Errorf("token %q, %s: %d %s, want %d", token, c.what, code, body, c.want)
			}
		}
		// Nor an interrupt, a run or a freeze (every state-changing route is behind the same guard).
		for _, path := range []string{"/v1/sessions/x/operations/op/interrupt", "/v1/runs", "/v1/memory/freeze", "/v1/campaigns"} {
			if code, body := call(t, f, "POST", path, "", map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, "{}"); code != 403 {
				t.Errorf("token %q, cross-site POST %s: %d %s, want 403", token, path, code, body)
			}
		}
		noRequests(t, f.store, "x")
		// The server's own page may post, with the token when there is one.
		hdr := map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1" + port, "Sec-Fetch-Site": "same-origin"}
		if token != "" {
			hdr["Authorization"] = "Bearer " + token
		}
		if code, body := call(t, f, "POST", "/v1/sessions/own/operations", "", hdr, `{"kind":"exec","kernel":"python","code":"print(1)"}`); code != http.StatusAccepted {
			t.Errorf("token %q, same-origin POST: %d %s, want 202", token, code, body)
		}
	}
}

// TestCrossSiteWebSocket: the WebSocket upgrade from another origin is refused before a
// message can be sent, with or without a token.
func TestCrossSiteWebSocket(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Prewarm = nil })
	ws := strings.Replace(f.http.URL, "http", "ws", 1) + "/v1/sessions/w/ws"
	for _, origin := range []string{"http://evil.example", "http://127.0.0.1:1", "null", "http://localhost" + strings.TrimPrefix(f.http.URL, "http://127.0.0.1")} {
		_, resp, err := websocket.Dial(context.Background(), ws, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("WebSocket from %s: %v, want 403", origin, err)
		}
	}
	c, _, err := websocket.Dial(context.Background(), ws, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {f.http.URL}}})
	if err != nil {
		t.Fatalf("WebSocket from the server's own origin: %v", err)
	}
	c.CloseNow()
	noRequests(t, f.store, "w")
}

// TestMissingToken: without the token, or with a wrong one, every data route answers 401.
func TestMissingToken(t *testing.T) {
	const token = "missing-token-test-0123456"
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Token, c.Prewarm, c.Memory = token, nil, openMemory(t) })
	f.srv.Handle("/mcp", mcp.New(f.srv.Runner, nil).Handler())
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", "Basic " + token, token} {
		for _, r := range []struct{ method, path string }{
			{"GET", "/v1/memory/export"}, {"GET", "/v1/sessions"}, {"GET", "/v1/sessions/a/messages"},
			{"POST", "/v1/sessions/a/operations"}, {"POST", "/mcp"}, {"GET", "/v1/kernels"},
		} {
			hdr := map[string]string{"Content-Type": "application/json"}
			if auth != "" {
				hdr["Authorization"] = auth
			}
			if code, body := call(t, f, r.method, r.path, "", hdr, execBody); code != http.StatusUnauthorized || !strings.Contains(body, "bearer token") {
				t.Errorf("%s %s with Authorization %q: %d %s, want 401", r.method, r.path, auth, code, body)
			}
		}
	}
	noRequests(t, f.store, "a")
}

// TestLoadToken: a new token is 256 random bits in a file of mode 0600, the same at the next
// start, one for racing starts; a file other users may read, a symbolic link or another
// user's file is refused, saying what to do.
func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, server.TokenFile)
	tok, created, err := server.LoadToken(path)
	if err != nil || !created || len(tok) != 64 || strings.Trim(tok, "0123456789abcdef") != "" {
		t.Fatalf("first start: %q %v %v", tok, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", fi.Mode(), err)
	}
	again, created, err := server.LoadToken(path)
	if err != nil || created || again != tok {
		t.Fatalf("second start: %q %v %v, want the same token", again, created, err)
	}
	other, _, _ := server.LoadToken(filepath.Join(t.TempDir(), server.TokenFile))
	if other == tok {
		t.Fatal("two data directories got the same token")
	}
	// Racing starts agree on one token.
	race := filepath.Join(t.TempDir(), server.TokenFile)
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			tok, _, err := server.LoadToken(race)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			got[tok]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(got) != 1 {
		t.Errorf("racing starts made %d tokens", len(got))
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := server.LoadToken(path); err == nil || !strings.Contains(err.Error(), "0644") || !strings.Contains(err.Error(), "leaked") {
		t.Errorf("a world-readable token file: %v, want a refusal naming the mode", err)
	}
	os.Chmod(path, 0o640)
	if _, _, err := server.LoadToken(path); err == nil {
		t.Error("a group-readable token file was taken")
	}
	link := filepath.Join(t.TempDir(), server.TokenFile)
	os.Chmod(path, 0o600)
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := server.LoadToken(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlinked token file: %v", err)
	}
	if os.Geteuid() == 0 {
		os.Chown(path, 12345, 12345)
		if _, _, err := server.LoadToken(path); err == nil || !strings.Contains(err.Error(), "uid 12345") {
			t.Errorf("another user's token file: %v", err)
		}
	}
	short := filepath.Join(t.TempDir(), server.TokenFile)
	os.WriteFile(short, []byte("abc\n"), 0o600)
	if _, _, err := server.LoadToken(short); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("a short token: %v", err)
	}
}

// TestLoadTokenServes: the token LoadToken made is the one the server asks for.
func TestLoadTokenServes(t *testing.T) {
	tok, _, err := server.LoadToken(filepath.Join(t.TempDir(), server.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Token, c.Prewarm = tok, nil })
	if code, _ := call(t, f, "GET", "/v1/sessions", "", map[string]string{"Authorization": "Bearer " + tok}, ""); code != 200 {
		t.Errorf("with the stored token: %d", code)
	}
	q := url.Values{"token": {tok}}
	if code, _ := call(t, f, "GET", "/?"+q.Encode(), "", nil, ""); code != 200 {
		t.Errorf("the dashboard URL: %d", code)
	}
	if code, _ := call(t, f, "GET", "/v1/sessions?"+q.Encode(), "", nil, ""); code != 401 {
		t.Errorf("the token in an API URL is not taken: %d, want 401", code)
	}
}

func openMemory(t *testing.T) memory.Store {
	t.Helper()
	mem, err := memsqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem
}

// TestFramingRefused: no answer of the server may be framed by another page (clickjacking the
// cell runner): every one says X-Frame-Options DENY and carries a Content-Security-Policy
// whose directives, as a browser parses them, include frame-ancestors 'none' (browsers that
// ignore X-Frame-Options read it); none may be sniffed or send a Referer.
func TestFramingRefused(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	for _, p := range []string{"/", "/healthz", "/v1/sessions", "/v1/kernels", "/v1/no-such-route", "/v1/sessions/none/artifacts/fig.png"} {
		resp, err := http.Get(f.http.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := resp.Header; h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s (%d): X-Content-Type-Options %q, Referrer-Policy %q; want nosniff, no-referrer", p, resp.StatusCode, h.Get("X-Content-Type-Options"), h.Get("Referrer-Policy"))
		}
		if xfo := resp.Header.Get("X-Frame-Options"); xfo != "DENY" {
			t.Errorf("GET %s (%d): X-Frame-Options %q, want DENY", p, resp.StatusCode, xfo)
		}
		if d := cspDirectives(resp.Header.Values("Content-Security-Policy")); d["frame-ancestors"] != "'none'" {
			t.Errorf("GET %s (%d): Content-Security-Policy %q has no frame-ancestors 'none' (directives %q)", p, resp.StatusCode, resp.Header.Values("Content-Security-Policy"), d)
		}
	}
}

// cspDirectives parses Content-Security-Policy values into directive name → value, as a
// browser does: directives are separated by ';', a name is case-insensitive and must be one of
// CSP's (an unknown one, such as a mangled name, is ignored by the browser and so left out).
func cspDirectives(values []string) map[string]string {
	known := map[string]bool{"default-src": true, "script-src": true, "style-src": true, "img-src": true, "connect-src": true,
		"frame-ancestors": true, "sandbox": true, "object-src": true, "base-uri": true, "form-action": true, "frame-src": true}
	out := map[string]string{}
	for _, v := range values {
		for _, d := range strings.Split(v, ";") {
			name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
			if name = strings.ToLower(name); known[name] {
				out[name] = strings.TrimSpace(value)
			}
		}
	}
	return out
}
