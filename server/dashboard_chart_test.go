package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/protocol"
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
		c.Kernels = func(context.Context) []server.KernelInfo { return []server.KernelInfo{{Name: "python", Version: "3"}} }
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
