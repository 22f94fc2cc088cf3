package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// figureShown is true when the newest operation card shows the figure path, loaded.
func figureShown(path string, width int) string {
	return fmt.Sprintf(`(() => { const i = document.querySelector('#stream article.op:last-of-type .artifact img[alt="figure %s"]'); `+
		`return !!i && i.complete && i.naturalWidth === %d && i.getBoundingClientRect().width > 100; })()`, path, width)
}

// TestDashboardArtifacts drives the dashboard in a real headless Chromium: a Python cell
// that saves a matplotlib PNG and an Octave cell that prints a figure with print -dpng show
// their figures inline in their cards; a CSV and an SVG with script are download links,
// which download without the SVG ever running on the dashboard's origin.
func TestDashboardArtifacts(t *testing.T) {
	const token = "artifacts-test-token-0123456789"
	opts := testutil.KernelOptions(t)
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		c.Token = token
		setStart(c, func(ctx context.Context, name, ws string) (kernel.Kernel, error) {
			o := opts
			o.Workspace = ws
			switch name {
			case "python":
				return python.Start(ctx, &o)
			case "octave":
				return octave.Start(ctx, &o)
			}
			return nil, fmt.Errorf("unknown kernel %q", name)
		})
		setList(c, func(context.Context) []runner.KernelInfo {
			return []runner.KernelInfo{{Name: "python", Version: "3"}, {Name: "octave", Version: "9"}}
		})
	})
	ctx := browser(t, 3*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+token)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "python"`)

	runCell(t, ctx, `import numpy as np
import matplotlib.pyplot as plt
t = np.linspace(0, 4 * np.pi, 400)
plt.figure(figsize=(6.4, 3.2))
plt.plot(t, np.exp(-t / 6) * np.sin(3 * t), label="damped")
plt.legend(); plt.title("matplotlib, Agg")
plt.savefig("damped.png")
np.savetxt("damped.csv", np.c_[t, np.sin(t)], delimiter=",")
open("evil.svg", "w").write('<svg xmlns="http://www.w3.org/2000/svg" onload="top.pwned = 1"><script>top.pwned = 2; document.title = "pwned"</script></svg>')
print("saved")`)
	waitJS(t, ctx, "the matplotlib figure shows in the card", figureShown("damped.png", 640))
	if got := evalString(t, ctx, `[...document.querySelectorAll("#stream article.op:last-of-type .artifact")].map((f) => (f.querySelector("img") ? "img " : "link ") + f.querySelector("figcaption a").textContent).join(", ")`); got != "link damped.csv, img damped.png, link evil.svg" {
		t.Errorf("the card's artifacts: %s; want the PNG inline, the CSV and the SVG as links", got)
	}
	jsClick(t, ctx, `#stream article.op:last-of-type .artifact:nth-child(3) figcaption a`)
	time.Sleep(time.Second)
	if got := evalString(t, ctx, `String(window.pwned) + " " + document.title + " " + (document.querySelector("#alert").hidden ? "" : document.querySelector("#alert").innerText)`); got != "undefined labmate " {
		t.Errorf("after downloading evil.svg: window.pwned, the title and the alert say %q", got)
	}

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector("#kernel").value = "octave", true)`)); err != nil {
		t.Fatal(err)
	}
	runCell(t, ctx, `x = linspace(0, 2*pi, 200);
plot(x, cos(x), "linewidth", 2); title("Octave, gnuplot"); grid on;
print -dpng -r80 cosine.png
disp("printed")`)
	waitJS(t, ctx, "the Octave cell completes", `document.querySelector("#stream article.op:last-of-type").innerText.includes("completed in")`)
	waitJS(t, ctx, "the Octave figure shows in the card", `(() => { const i = document.querySelector('#stream article.op:last-of-type .artifact img[alt="figure cosine.png"]'); return !!i && i.complete && i.naturalWidth > 300; })()`)
	screenshot(t, ctx, "artifacts.png")

	// A reload replays both figures from the log.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the reloaded page shows both figures", `document.querySelectorAll("#stream .artifact img").length === 2 && `+
		`[...document.querySelectorAll("#stream .artifact img")].every((i) => i.complete && i.naturalWidth > 300)`)
}

// TestDashboardArtifactsDurable drives the dashboard in a real headless Chromium: a figure a
// cell saved is kept in the artifact store, so it is still shown after the session was reaped
// and its workspace deleted, and after the server restarted over the same log and store; a
// figure evicted from the store for space says so, and when.
func TestDashboardArtifactsDurable(t *testing.T) {
	const token = "durable-test-token-0123456789"
	dir := t.TempDir()
	store, err := sqlite.Open(filepath.Join(dir, "labmate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	arts, err := artifact.Open(filepath.Join(dir, "artifacts"), nil)
	if err != nil {
		t.Fatal(err)
	}
	workspaces := filepath.Join(dir, "workspaces")
	config := func(c *server.Config) {
		c.Token, c.Artifacts, c.Workspaces, c.Limits.Idle = token, arts, workspaces, 2*time.Second
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	}
	f := newFixture(t, store, config)
	ctx := browser(t, 3*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+token)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "python"`)
	runCell(t, ctx, `import struct, zlib
def png(name, w, h):  # a real PNG, without matplotlib (whose font cache takes long to build)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    raw = b"".join(b"\x00" + bytes([200, 60, 40]) * w for _ in range(h))
    open(name, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
png("kept.png", 400, 200)
png("evicted.png", 300, 200)
print("saved")`)
	waitJS(t, ctx, "the figure shows in the card", figureShown("kept.png", 400))
	session := evalString(t, ctx, `sessionStorage.getItem("labmate.session")`)
	evicted := evalString(t, ctx, `(() => { for (const a of document.querySelectorAll("#stream .artifact a")) if (a.textContent === "evicted.png") return a.title.replace(/^.*sha256 (\w+).*$/, "$1"); return ""; })()`)
	if !artifact.ValidSum(evicted) {
		t.Fatalf("evicted.png has no digest in its card: %q", evicted)
	}

	// Reaped: the page leaves, the session idles past its timeout and is dropped; its
	// workspace is deleted too, so only the store can show the figure.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if err := os.RemoveAll(workspaces); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/#lab/"+session)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the reaped session's figure shows", figureShown("kept.png", 400))

	// Restarted: a new server over the same log and store.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	f.http.Close()
	f.srv.Close()
	f = newFixture(t, store, config)
	if err := os.Remove(filepath.Join(dir, "artifacts", evicted[:2], evicted[2:])); err != nil { // as the store's eviction does…
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "artifacts", evicted[:2], evicted[2:]+".evicted"), []byte("1234\n"), 0o600); err != nil { // …leaving its note
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+token+"#lab/"+session)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the figure shows after a restart", figureShown("kept.png", 400))
	waitJS(t, ctx, "the evicted figure says it was evicted", `[...document.querySelectorAll("#stream .artifact p.gone")].some((p) => p.textContent.includes("evicted for space at"))`)
	screenshot(t, ctx, "artifacts-durable.png")
}
