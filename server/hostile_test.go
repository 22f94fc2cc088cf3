package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/internal/browsertest"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// attackJS is what a hostile page runs against the server at TARGET (empty: its own origin):
// the requests any page may make without asking — a no-cors fetch with text/plain, a CORS
// "simple" POST, a JSON POST (preflighted), a text/plain form posting JSON, reads of the
// memory export and the session logs — and a WebSocket that sends an operation_request. It
// records what it could see in window.report.
const attackJS = `
window.attack = async (target) => {
  const r = {};
  const wsTarget = (target || location.origin).replace(/^http/, "ws");
  const req = {kind: "exec", kernel: "python", code: "open('pwned', 'w').write('x')"};
  const url = target + "/v1/sessions/victim/operations";
  const tryFetch = async (name, f) => { try { r[name] = await f(); } catch (e) { r[name] = "blocked: " + e.name; } };
  await tryFetch("nocors", async () => { const x = await fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: JSON.stringify(req)}); return x.type + " " + x.status; });
  await tryFetch("simple", async () => { const x = await fetch(url, {method: "POST", headers: {"Content-Type": "text/plain"}, body: JSON.stringify(req)}); return x.status + " " + await x.text(); });
  await tryFetch("json", async () => { const x = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(req)}); return x.status + " " + await x.text(); });
  await tryFetch("export", async () => { const x = await fetch(target + "/v1/memory/export"); return x.status + " " + (await x.text()).slice(0, 300); });
  await tryFetch("log", async () => { const x = await fetch(target + "/v1/sessions/victim/messages"); return x.status + " " + (await x.text()).slice(0, 300); });
  // A form with enctype text/plain whose one field spells a JSON request, into a frame.
  await new Promise((done) => {
    const sink = document.createElement("iframe");
    sink.name = "sink";
    sink.onload = done;
    document.body.append(sink);
    const f = document.createElement("form");
    f.method = "POST"; f.action = url; f.enctype = "text/plain"; f.target = "sink";
    const i = document.createElement("input");
    i.name = '{"kind":"exec","kernel":"python","code":"open(\'form\', \'w\')","x":"';
    i.value = '"}';
    f.append(i);
    document.body.append(f);
    f.submit();
    setTimeout(done, 3000);
  });
  r.form = "sent";
  r.ws = await new Promise((done) => {
    let ws;
    try { ws = new WebSocket(wsTarget + "/v1/sessions/victim/ws"); } catch (e) { done("blocked: " + e.name); return; }
    ws.onopen = () => {
      ws.send(JSON.stringify({id: "m1", type: "operation_request", session_id: "victim", operation_id: "evil", payload: req}));
      setTimeout(() => done("open, sent"), 1000);
    };
    ws.onerror = () => done("blocked: error");
    setTimeout(() => done("timeout"), 5000);
  });
  window.report = JSON.stringify(r);
};
`

const hostilePage = `<!doctype html><title>cute cats</title><p>cats</p><script>` + attackJS + `</script>`

// hostile serves the hostile page on ln.
func hostile(ln net.Listener) *http.Server {
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, hostilePage)
	})}
	go hs.Serve(ln)
	return hs
}

func runAttack(t *testing.T, ctx context.Context, target string) map[string]string {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](fmt.Sprintf(`(window.report = "", attack(%q), 0)`, target))); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait(t, ctx, "the attack ends", `window.report !== ""`)
	var report map[string]string
	if err := json.Unmarshal([]byte(browsertest.Eval(t, ctx, `window.report`)), &report); err != nil {
		t.Fatal(err)
	}
	t.Logf("what the hostile page saw: %v", report)
	return report
}

// TestHostilePageCrossOrigin loads a hostile page from another origin on loopback in a real
// Chromium, against a server without a token (labmate serve --no-token, the weakest setting):
// whatever the browser lets the page send, nothing runs and nothing is read.
func TestHostilePageCrossOrigin(t *testing.T) {
	mem := openMemory(t)
	if _, err := mem.AddFact(context.Background(), &memory.AddFactParams{Actor: "test", Fact: &memory.Fact{Namespace: "lab", Kind: memory.KindReference, Text: "the secret recipe"}}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Memory, c.Prewarm = mem, nil })
	// The victim's session has a log to steal.
	if code, body := call(t, f, "POST", "/v1/sessions/victim/operations", "", map[string]string{"Content-Type": "application/json"}, `{"kind":"exec","kernel":"python","code":"print('secret log line')"}`); code != http.StatusAccepted {
		t.Fatalf("the victim's operation: %d %s", code, body)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := hostile(ln)
	defer hs.Close()
	ctx := browsertest.Start(t, 90*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+ln.Addr().String()+"/")); err != nil {
		t.Fatal(err)
	}
	report := runAttack(t, ctx, f.http.URL)
	for _, k := range []string{"simple", "json", "export", "log", "ws"} {
		if !strings.HasPrefix(report[k], "blocked") {
			t.Errorf("%s: the page got %q, want it blocked", k, report[k])
		}
	}
	time.Sleep(time.Second) // the no-cors and form requests were sent: give them time to land
	ops, err := f.store.Operations(context.Background(), "victim")
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 {
		t.Errorf("the victim's session has %d operations, want only its own: the hostile page ran code", len(ops))
	}
	for m, err := range f.store.After(context.Background(), "victim", 0) {
		if err == nil && m.Type == protocol.TypeRequest && strings.Contains(string(m.Payload), "open(") {
			t.Errorf("the hostile page's request is in the log: %s", m.Payload)
		}
	}
}

// TestHostilePageRebinding is a DNS rebinding in a real Chromium: the page is loaded from
// http://evil.example:PORT (the browser resolves evil.example to 127.0.0.1), then "its DNS
// changes" — the hostile server on PORT goes away and labmate serve takes the port — and the
// page calls what is now the server, same-origin, so the browser allows it all and even lets
// it read the answers. The Host allow-list refuses every request; with evil.example allowed
// (the control), the same page reads the memory export.
func TestHostilePageRebinding(t *testing.T) {
	for _, allowEvil := range []bool{false, true} {
		t.Run(fmt.Sprint("allow evil.example ", allowEvil), func(t *testing.T) {
			mem := openMemory(t)
			if _, err := mem.AddFact(context.Background(), &memory.AddFactParams{Actor: "test", Fact: &memory.Fact{Namespace: "lab", Kind: memory.KindReference, Text: "the secret recipe"}}); err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			_, port, _ := net.SplitHostPort(addr)
			hs := hostile(ln)
			ctx := browsertest.Start(t, 90*time.Second, chromedp.Flag("host-resolver-rules", "MAP evil.example 127.0.0.1"))
			if err := chromedp.Do(ctx, chromedp.Navigate("http://evil.example:"+port+"/")); err != nil {
				t.Fatal(err)
			}
			browsertest.Wait(t, ctx, "the hostile page loads", `typeof window.attack === "function"`)

			// "Rebinding": the name now leads to labmate serve (no token, loopback).
			hs.Close()
			store := protocol.NewMemStore()
			cfg := server.Config{Config: runner.Config{Store: store, Memory: mem, Log: log.New(t.Output(), "", 0), Workspaces: t.TempDir()}, Addr: addr}
			if allowEvil {
				cfg.AllowHosts = []string{"evil.example"}
			}
			srv, err := server.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ln2, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("taking the port over: %v", err)
			}
			sctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- srv.Serve(sctx, ln2) }()
			t.Cleanup(func() { stop(); <-served })

			report := runAttack(t, ctx, "")
			if allowEvil {
				if !strings.HasPrefix(report["export"], "200 ") {
					t.Errorf("control: with evil.example allowed the page should read the export, got %q (the test would not see an attack)", report["export"])
				}
				return
			}
			for _, k := range []string{"simple", "json", "export", "log"} {
				if !strings.HasPrefix(report[k], "403 ") || !strings.Contains(report[k], "DNS-rebinding") {
					t.Errorf("%s: the page got %q, want 403 naming the rebinding", k, report[k])
				}
			}
			if strings.Contains(report["export"], "secret") || !strings.HasPrefix(report["ws"], "blocked") {
				t.Errorf("the page read the export or opened the WebSocket: %v", report)
			}
			time.Sleep(time.Second)
			noRequests(t, store, "victim")
		})
	}
}
