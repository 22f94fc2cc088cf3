package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/labmate/labmate/internal/browsertest"
	"github.com/labmate/labmate/runner"

	"github.com/labmate/labmate/memory"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

var (
	browser    = browsertest.Start
	waitJS     = browsertest.Wait
	evalString = browsertest.Eval
	jsClick    = browsertest.Click
	screenshot = browsertest.Screenshot
)

// lastOp is the newest operation card's text.
const lastOp = `(document.querySelector("#stream article.op:last-of-type") || {innerText: ""}).innerText`

// runCell types code into the cell runner and runs it with the keyboard (Ctrl+Enter).
func runCell(t *testing.T, ctx context.Context, code string) {
	t.Helper()
	n := evalString(t, ctx, `String(document.querySelectorAll("#stream article.op").length)`)
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#code"), code),
		chromedp.Focus(chromedp.CSS("#code")),
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the cell's card appears", fmt.Sprintf(`document.querySelectorAll("#stream article.op").length > %s`, n))
}

// TestDashboard drives the dashboard in a real headless Chromium: it runs a cell and sees
// its lines arrive while it runs, interrupts a long loop, sees an Error verdict stop a run,
// reloads (the stream comes back from the log), finds the workspace kept, searches memory,
// follows a fact's provenance to its operation, freezes a namespace, and saves screenshots
// as test artifacts.
func TestDashboard(t *testing.T) {
	mem, err := memsqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	const token = "dashboard-test-token-0123456789"
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
		c.Memory = mem
		c.Token = token
	})
	ctx := browser(t, 90*time.Second)
	// The URL labmate serve prints: every fetch and WebSocket of the page carries the token.
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+token)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "python"`)

	// Lines appear while the cell runs.
	runCell(t, ctx, "import time\nfor i in range(8):\n    print('row', i, flush=True)\n    time.sleep(0.25)\n")
	waitJS(t, ctx, "the first lines arrive", lastOp+`.includes("row 1")`)
	if mid := evalString(t, ctx, lastOp); strings.Contains(mid, "row 7") || !strings.Contains(mid, "running") {
		t.Errorf("the first lines should show while the cell still runs; the card says:\n%s", mid)
	}
	waitJS(t, ctx, "the cell completes", lastOp+`.includes("row 7") && `+lastOp+`.includes("completed in")`)

	// The interrupt button stops a long loop; the workspace is kept.
	runCell(t, ctx, "import time\nk = 21\nfor i in range(100000):\n    print('spin', i, flush=True)\n    time.sleep(0.05)\n")
	waitJS(t, ctx, "the loop runs", lastOp+`.includes("spin 3")`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#stream article.op:last-of-type header button`))); err != nil {
		t.Fatal(err)
	}
	// An interrupt the user asked for is not shown as a failure.
	waitJS(t, ctx, "the loop is interrupted", lastOp+`.includes("interrupted after") && `+lastOp+`.includes("workspace is kept") && `+
		`!document.querySelector("#stream article.op:last-of-type .end").classList.contains("failed") && !`+lastOp+`.includes("failed")`)

	// A broken watch constraint: perception's Error verdict is highlighted and the Hot-Fix stops the run.
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#watch"), "x < 5")); err != nil {
		t.Fatal(err)
	}
	runCell(t, ctx, "import time\nfor i in range(200):\n    print('x =', i, flush=True)\n    time.sleep(0.02)\n")
	waitJS(t, ctx, "the Error verdict shows and the run is stopped",
		`document.querySelector("#stream article.op:last-of-type").classList.contains("v-Error") && `+
			`document.querySelector("#stream article.op:last-of-type .verdict.Error") !== null && `+lastOp+`.includes("stopped by perception")`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector("#watch").value = "", true)`)); err != nil {
		t.Fatal(err)
	}

	// A reload replays the session from the log.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the reloaded page replays the stream",
		`document.querySelectorAll("#stream article.op").length === 3 && document.querySelector("#stream").innerText.includes("row 7")`)
	waitJS(t, ctx, "the reloaded page is live", `document.querySelector("#conn").textContent === "live"`)

	runCell(t, ctx, "print('k is', k * 2)")
	waitJS(t, ctx, "the workspace persisted", lastOp+`.includes("k is 42")`)
	waitJS(t, ctx, "the history lists the operations", `document.querySelectorAll("#history li").length === 4`)

	screenshot(t, ctx, "dashboard.png")

	// The memory browser: search, open a fact, follow its provenance to the operation, freeze.
	session := evalString(t, ctx, `sessionStorage.getItem("labmate.session")`)
	ops, err := f.store.Operations(context.Background(), session)
	if err != nil || len(ops) != 4 {
		t.Fatalf("operations of %s: %v %v", session, ops, err)
	}
	added, err := mem.AddFact(context.Background(), &memory.AddFactParams{Actor: "agent:test", Fact: &memory.Fact{
		Namespace: "lab", Kind: memory.KindWarning, Text: "Loops printing rows sleep 0.25 s per row",
		Provenance: memory.Provenance{Session: session, Operations: []string{ops[0].ID}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.PutSkill(context.Background(), &memory.PutSkillParams{Actor: "agent:test", Skill: &memory.Skill{
		Namespace: "lab/skills", Name: "print-rows", Description: "Print numbered rows slowly", Body: "for i in range(8): print('row', i)"}}); err != nil {
		t.Fatal(err)
	}
	jsClick(t, ctx, `#nav-memory a`)
	waitJS(t, ctx, "the memory page shows", `shown("#page-memory") && !shown("#page-lab")`)
	evalString(t, ctx, `document.querySelector("#mem-q").value = "rows"`)
	jsClick(t, ctx, `#mem-form button[type="submit"]`)
	waitJS(t, ctx, "the search finds the fact and the skill", `document.querySelector("#mem-count").textContent === "2 results" && `+
		`document.querySelector("#mem-results").innerText.includes("sleep 0.25 s per row") && document.querySelector("#mem-results").innerText.includes("print-rows")`)
	jsClick(t, ctx, fmt.Sprintf(`#mem-results button[data-id=%q]`, added.Fact.ID))
	waitJS(t, ctx, "the entry shows its history and provenance", fmt.Sprintf(`document.querySelector('#mem-results button[data-id=%q]').getAttribute("aria-current") === "true" && `, added.Fact.ID)+`shown("#mem-entry") && `+
		`document.querySelector("#entry-history").innerText.includes("agent:test") && document.querySelector("#entry-prov a") !== null`)
	screenshot(t, ctx, "memory.png")
	jsClick(t, ctx, `#entry-prov a`)
	waitJS(t, ctx, "the provenance link leads to the operation", fmt.Sprintf(
		`shown("#page-lab") && !shown("#page-memory") && document.activeElement && document.activeElement.id === "op-%s"`, ops[0].ID))

	jsClick(t, ctx, `#nav-memory a`)
	waitJS(t, ctx, "the namespaces are listed", `document.querySelectorAll("#ns-rows tr").length >= 2`)
	jsClick(t, ctx, `#ns-rows tr:nth-child(1) button`)
	waitJS(t, ctx, "the namespace is frozen", `document.querySelector("#ns-rows tr:nth-child(1) button").getAttribute("aria-pressed") === "true"`)
	nss, err := mem.Namespaces(context.Background())
	if err != nil || len(nss) == 0 || nss[0].Name != "lab" || !nss[0].Frozen {
		t.Errorf("after Freeze in the dashboard: %+v %v", nss, err)
	}
}

// TestDashboardAndToken: the page and its assets need no token (they hold no data), the
// API does, and a browser's WebSocket offers it as a subprotocol (never in the URL). The page
// opened with the URL labmate serve prints (/?token=…) keeps the token for its tab, takes it
// out of the address bar and works; a page without it asks for it.
func TestDashboardAndToken(t *testing.T) {
	const token = "s3cret-token-for-the-test"
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Token = token; c.Prewarm = nil })
	f.srv.Handle("/mcp", mcp.New(f.srv.Runner, nil).Handler())
	for path, want := range map[string]int{"/": 200, "/static/app.js": 200, "/static/style.css": 200, "/v1/kernels": 401, "/static/nope.js": 404, "/mcp": 401} {
		resp, err := http.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s without a token: %d, want %d", path, resp.StatusCode, want)
		}
	}
	ws := strings.Replace(f.http.URL, "http", "ws", 1) + "/v1/sessions/tok/ws"
	bearer := func(tok string) []string {
		return []string{"labmate", "labmate.bearer." + base64.RawURLEncoding.EncodeToString([]byte(tok))}
	}
	for _, c := range []struct {
		what string
		url  string
		opts *websocket.DialOptions
	}{
		{"no token", ws, nil},
		{"a wrong token", ws, &websocket.DialOptions{Subprotocols: bearer("wrong")}},
		{"the token in the URL (no longer taken)", ws + "?access_token=" + token, nil},
		{"a token that is not base64url", ws, &websocket.DialOptions{Subprotocols: []string{"labmate", "labmate.bearer.%%%"}}},
	} {
		_, resp, err := websocket.Dial(context.Background(), c.url, c.opts)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a WebSocket with %s: %v, want 401", c.what, err)
		}
	}
	c, _, err := websocket.Dial(context.Background(), ws, &websocket.DialOptions{Subprotocols: bearer(token)})
	if err != nil {
		t.Fatalf("a WebSocket offering the right token: %v", err)
	}
	if c.Subprotocol() != "labmate" {
		t.Errorf("negotiated subprotocol %q, want labmate (a browser fails the handshake otherwise)", c.Subprotocol())
	}
	c.CloseNow()

	// The page without a token asks for it, then works with it.
	ctx := browser(t, 90*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the page asks for the token", `shown("#auth") && document.activeElement.id === "token"`)
	evalString(t, ctx, fmt.Sprintf(`document.querySelector("#token").value = %q`, token))
	jsClick(t, ctx, `#auth button[type="submit"]`)
	waitJS(t, ctx, "the page connects with the token", `!shown("#auth") && !shown("#alert") && document.querySelector("#conn").textContent === "live"`)

	// The printed URL: a fresh tab (new sessionStorage) opened at /?token=… works at once,
	// and the token leaves the address bar.
	ctx2, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(ctx2, chromedp.Navigate(f.http.URL+"/?token="+token+"#lab")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx2, "the page opened with the token URL connects", `!shown("#auth") && !shown("#alert") && document.querySelector("#conn").textContent === "live"`)
	if href := evalString(t, ctx2, `location.href`); strings.Contains(href, "token") {
		t.Errorf("the token stays in the address bar: %s", href)
	}
	if got := evalString(t, ctx2, `sessionStorage.getItem("labmate.token")`); got != token {
		t.Errorf("sessionStorage holds %q, want the token", got)
	}
	if got := evalString(t, ctx2, `document.cookie`); got != "" {
		t.Errorf("the page set cookies: %q", got)
	}
	// A wrong token in the URL: the page says so and asks for the right one.
	ctx3, cancel3 := chromedp.NewContext(ctx)
	defer cancel3()
	if err := chromedp.Do(ctx3, chromedp.Navigate(f.http.URL+"/?token=wrong")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx3, "a wrong token in the URL asks for the token", `shown("#auth")`)
}

// TestMemoryREST: the memory browser's endpoints refuse bad input saying why.
func TestMemoryREST(t *testing.T) {
	mem, err := memsqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Memory = mem; c.Prewarm = nil })
	added, err := mem.AddFact(context.Background(), &memory.AddFactParams{Actor: "test",
		Fact: &memory.Fact{Namespace: "team/x", Kind: memory.KindReference, Text: "water boils at 100 C at 1 atm"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.http.URL + "/v1/memory/export?namespace=team")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("export: %v %s", err, body)
	}
	var names []string
	for _, zf := range zr.File {
		names = append(names, zf.Name)
	}
	if !slices.Contains(names, "facts/"+added.Fact.ID+".md") {
		t.Errorf("the export of namespace team holds %v", names)
	}
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/v1/memory/search?q=x&type=rumour", "", 400, "rumour"},
		{"GET", "/v1/memory/search?limit=-1", "", 400, "limit"},
		{"GET", "/v1/memory/search?limit=many", "", 400, "limit"},
		{"GET", "/v1/memory/search?kind=rumour", "", 400, "rumour"},
		{"GET", "/v1/memory/search?q=nothing", "", 200, "[]"},
		{"GET", "/v1/memory/entries/nope", "", 404, "not found"},
		{"POST", "/v1/memory/freeze", `{"namespace":"lab"}`, 400, "frozen"},
		{"POST", "/v1/memory/freeze", `{"namespace":"Bad NS","frozen":true}`, 400, "namespace"},
		{"POST", "/v1/memory/freeze", `{"namespace":"lab","frozen":true}`, 200, `"frozen":true`},
		{"GET", "/v1/memory/namespaces", "", 200, `"frozen":true`},
		{"GET", "/v1/memory/export?namespace=Bad%20NS", "", 400, "namespace"},
	} {
		req, _ := http.NewRequest(c.method, f.http.URL+c.path, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		io.Copy(&b, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(b.String(), c.want) {
			t.Errorf("%s %s %s: %d %s; want %d mentioning %q", c.method, c.path, c.body, resp.StatusCode, b.String(), c.code, c.want)
		}
	}
}
