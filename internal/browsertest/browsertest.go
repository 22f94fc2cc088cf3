// Package browsertest drives a real headless Chromium from tests (Debian's chromium,
// installed by scripts/deps) with chromedp: start it, wait for a page condition, evaluate,
// click, and save screenshots as test artifacts.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start starts a headless Chromium (Debian's chromium, installed by scripts/deps) for
// the test and returns a chromedp context bounded by timeout. extra adds to its options
// (e.g. chromedp.Flag("host-resolver-rules", …)).
func Start(t testing.TB, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := os.Getenv("LABMATE_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		t.Fatal("no Chromium to drive the dashboard: install it (scripts/deps does: apt-get install chromium) or set LABMATE_CHROMIUM")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1366, 900), // a laptop screen
	}
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	// The first action starts the browser, in a context without a deadline (one would stop it).
	if err := chromedp.Do(bctx); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("starting %s: %v", path, err)
	}
	ctx, cancelTimeout := context.WithTimeout(bctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// shownJS defines shown(sel) for Wait's expressions: the element is rendered (neither it nor
// an ancestor is display:none).
const shownJS = `window.shown = (sel) => document.querySelector(sel).getClientRects().length > 0; `

// Wait polls a JavaScript expression until it is true.
func Wait(t testing.TB, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](shownJS+expr))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("timed out waiting until %s; the page says:\n%s", what, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Eval evaluates a JavaScript expression that yields a string.
func Eval(t testing.TB, ctx context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return s
}

// Click clicks an element from JavaScript. (chromedp's Click resolves a DOM node first,
// which a page that re-renders periodically can invalidate.)
func Click(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	expr := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return "no element"; e.click(); return ""; })()`, sel)
	if msg := Eval(t, ctx, expr); msg != "" {
		t.Fatalf("click %s: %s", sel, msg)
	}
}

// Screenshot saves the page as a test artifact: under $LABMATE_ARTIFACTS when set (make
// test sets it), else in the test's artifact directory (go test -artifacts keeps it).
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("LABMATE_ARTIFACTS")
	if dir == "" {
		dir = t.ArtifactDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, name)
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}
