package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// TestDashboardCharts drives the dashboard in a real headless Chromium: a cell that prints a
// residual falling over six decades and a growing x charts both series live, the residual on a
// log scale, and the moment perception's Error stopped the run (a --watch bound on x) is marked
// on the charts. It measures each point's lag, from the server's timestamp of the line to the
// frame that draws it (the figure for the p99 < 100 ms target is in the log).
func TestDashboardCharts(t *testing.T) {
	const token = "charts-test-token-0123456789"
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		c.Token = token
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	})
	ctx := browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+token)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "python"`)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#watch"), "x < 150")); err != nil {
		t.Fatal(err)
	}
	runCell(t, ctx, "import time\nfor i in range(400):\n    print('residual =', 10.0 ** (-i / 25), flush=True)\n    print('x =', i, flush=True)\n    time.sleep(0.02)\n")
	const charts = `document.querySelectorAll("#stream article.op:last-of-type figure.chart")`
	waitJS(t, ctx, "both series are charted while the cell runs", charts+`.length === 2 && `+lastOp+`.includes("running")`)
	waitJS(t, ctx, "the Error stops the run and is marked on the charts",
		lastOp+`.includes("stopped by perception") && document.querySelectorAll("#stream article.op:last-of-type figure.chart line.mark.Error").length === 2`)
	caption := evalString(t, ctx, `document.querySelector('#stream article.op:last-of-type figure.chart[data-series="residual"] figcaption').textContent`)
	if !strings.Contains(caption, "log scale") {
		t.Errorf("the residual's chart is not on a log scale: %q", caption)
	}
	screenshot(t, ctx, "charts.png")

	// The layout holds on a small laptop and on a wide screen: nothing scrolls sideways, and the
	// charts keep a readable width.
	for _, width := range []int64{800, 1920} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, fmt.Sprintf("the page fits %d px", width), `document.documentElement.scrollWidth <= window.innerWidth && `+
			`[...`+charts+`].every((f) => f.getBoundingClientRect().width >= 200 && f.getBoundingClientRect().right <= window.innerWidth)`)
		screenshot(t, ctx, fmt.Sprintf("charts-%d.png", width))
	}

	var lags []float64
	if err := json.Unmarshal([]byte(evalString(t, ctx, `JSON.stringify(performance.getEntriesByName("chart-point").map((e) => e.duration))`)), &lags); err != nil {
		t.Fatal(err)
	}
	if len(lags) < 200 {
		t.Fatalf("%d points measured, want at least 200 (150 lines of each series)", len(lags))
	}
	slices.Sort(lags)
	p50, p99 := lags[len(lags)/2], lags[len(lags)*99/100]
	t.Logf("line → chart point: %d points, p50 %.1f ms, p99 %.1f ms, max %.1f ms", len(lags), p50, p99, lags[len(lags)-1])
	// The target is a p99 under 100 ms (about 20 ms here on a quiet machine); the test fails
	// only at ten times that, since CI runs other packages' kernels on the same cores.
	if p99 >= 1000 {
		t.Errorf("line → chart point p99 %s ms, want < 100 ms", strconv.FormatFloat(p99, 'f', 1, 64))
	}
}

// TestDashboardChartAbscissa drives the dashboard in a real headless Chromium: the damped
// oscillator of examples/damped.m logs its energy against its simulated time t
// (labmate_log("energy", E, t)), and its chart's x-axis is that t, named, spanning 0–5 (read
// from the SVG), not the wall time of the run; printed numbers keep four significant digits.
func TestDashboardChartAbscissa(t *testing.T) {
	code, err := os.ReadFile("../examples/damped.m")
	if err != nil {
		t.Fatal(err)
	}
	opts := testutil.KernelOptions(t)
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		c.Prewarm = []string{"octave"}
		setStart(c, func(ctx context.Context, name, ws string) (kernel.Kernel, error) {
			if name != "octave" {
				return nil, fmt.Errorf("unknown kernel %q", name)
			}
			o := opts
			o.Workspace = ws
			return octave.Start(ctx, &o)
		})
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "octave", Version: "9"}} })
	})
	ctx := browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "octave"`)
	runCell(t, ctx, string(code))
	waitJS(t, ctx, "the oscillator completes", lastOp+`.includes("final amplitude") && `+lastOp+`.includes("completed in")`)
	const energy = `document.querySelector('#stream article.op:last-of-type figure.chart[data-series="energy"]')`
	waitJS(t, ctx, "the energy is charted", `!!`+energy+` && !`+energy+`.hidden && `+energy+`.querySelector("svg").dataset.xmax === "5"`)
	got := evalString(t, ctx, `(() => { const s = `+energy+`.querySelector("svg"); `+
		`const x = [...s.querySelectorAll("text.tick.x")].map((e) => e.textContent); `+
		`return s.querySelector("text.axis-label.x").textContent + " | " + x[0] + " … " + x[x.length - 1] + " | " + s.dataset.xmin + "–" + s.dataset.xmax; })()`)
	if got != "t | 0 … 5 | 0.1–5" {
		t.Errorf("the energy chart's x-axis: %q, want \"t | 0 … 5 | 0.1–5\" (label | first … last tick | data span)", got)
	}
	// The x line the chart draws spans the axis: its first point near x = 0.1, its last at 5.
	span := evalString(t, ctx, `(() => { const s = `+energy+`.querySelector("svg"); const p = s.querySelector("polyline.series").getAttribute("points").split(" "); `+
		`const ticks = [...s.querySelectorAll("text.tick.x")]; return p[p.length - 1].split(",")[0] + " " + ticks[ticks.length - 1].getAttribute("x"); })()`)
	if parts := strings.Fields(span); len(parts) != 2 || parts[0] != "470.0" {
		t.Errorf("the energy's last point and the last tick are at x %q, want the right edge (470)", span)
	}
	caption := evalString(t, ctx, energy+`.querySelector("figcaption").textContent`)
	if !strings.Contains(caption, "against t") || regexp.MustCompile(`\d\.\d{6,}`).MatchString(caption) {
		t.Errorf("the energy chart's caption: %q, want it against t and numbers to four significant digits", caption)
	}
	// Overlay: the energy's menu offers x (the position, also against t); choosing it draws both
	// on the energy's axes, each named in the legend, and none takes it away again.
	offered := evalString(t, ctx, `[...`+energy+`.querySelectorAll("select.overlay option")].map((o) => o.textContent).join(",")`)
	if offered != "none,x" {
		t.Errorf("the energy chart offers %q to overlay, want \"none,x\" (the other series against t)", offered)
	}
	choose := func(v string) {
		t.Helper()
		evalString(t, ctx, `(() => { const s = `+energy+`.querySelector("select.overlay"); s.value = "`+v+`"; s.dispatchEvent(new Event("change")); return ""; })()`)
	}
	choose("x")
	waitJS(t, ctx, "x is drawn over the energy", energy+`.querySelectorAll("svg polyline.series").length === 2`)
	got = evalString(t, ctx, `(() => { const s = `+energy+`.querySelector("svg"); return [...s.querySelectorAll("polyline.series")].map((l) => l.dataset.series).join(",") + " | " + `+
		`[...s.querySelectorAll("text.legend")].map((e) => e.textContent).join(",") + " | " + s.querySelector("text.axis-label.y").textContent + " | " + s.dataset.xmax; })()`)
	if got != "x,energy | energy,x | energy, x | 5" {
		t.Errorf("the overlaid chart: %q, want \"x,energy | energy,x | energy, x | 5\" (lines | legend | y label | x span)", got)
	}
	screenshot(t, ctx, "chart-overlay.png")
	choose("")
	waitJS(t, ctx, "the overlay is taken away", energy+`.querySelectorAll("svg polyline.series").length === 1 && !`+energy+`.querySelector("text.legend")`)
	screenshot(t, ctx, "chart-damped.png")
}
