package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
	"github.com/labmate/labmate/memory"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// laidOut is a script that reports, one per line, what breaks the layout of the page shown
// (sel): the document scrolls sideways, or a control (button, input, select, textarea) of the
// page or of the top bar lies outside the viewport's width, outside its section, or outside
// an ancestor that clips it (overflow other than visible; vertically only when it hides).
// Controls not rendered, or visually hidden (1 px, .sr), are not controls one can miss.
func laidOut(sel string) string {
	return fmt.Sprintf(`(() => {
	const bad = [], W = window.innerWidth, eps = 0.5;
	if (document.scrollingElement.scrollWidth > W) bad.push("the page scrolls sideways: " + document.scrollingElement.scrollWidth + " > " + W);
	const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + " " + JSON.stringify((e.getAttribute("aria-label") || e.textContent || e.placeholder || e.name || e.type || "").trim().slice(0, 40));
	for (const root of document.querySelectorAll(".top, %s")) {
		for (const e of root.querySelectorAll("button, input, select, textarea")) {
			if (!e.getClientRects().length || getComputedStyle(e).visibility === "hidden") continue;
			const r = e.getBoundingClientRect();
			if (r.width < 2 || r.height < 2) continue;
			if (r.left < -eps || r.right > W + eps) bad.push(name(e) + " is outside the viewport: x " + r.left.toFixed(0) + " to " + r.right.toFixed(0) + " of " + W);
			const sec = e.parentElement.closest("section, aside, header, form");
			if (sec) {
				const s = sec.getBoundingClientRect();
				if (r.left < s.left - eps || r.right > s.right + eps) bad.push(name(e) + " sticks out of its " + sec.tagName.toLowerCase() + (sec.id ? "#" + sec.id : "") + ": x " + r.left.toFixed(0) + " to " + r.right.toFixed(0) + ", it " + s.left.toFixed(0) + " to " + s.right.toFixed(0));
			}
			for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
				const st = getComputedStyle(a);
				if (st.overflowX === "visible" && st.overflowY === "visible") continue;
				const ar = a.getBoundingClientRect();
				if (r.left < ar.left - eps || r.right > ar.right + eps) bad.push(name(e) + " is cut by " + a.tagName.toLowerCase() + "." + a.className + " (overflow " + st.overflowX + ")");
				if ((st.overflowY === "hidden" || st.overflowY === "clip") && (r.top < ar.top - eps || r.bottom > ar.bottom + eps)) bad.push(name(e) + " is cut below or above by " + a.tagName.toLowerCase() + "." + a.className);
			}
		}
	}
	return bad.join("\n");
})()`, sel)
}

// inView is true when the element sel is within the viewport, both ways.
func inView(sel string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e || !e.getClientRects().length) return false; const r = e.getBoundingClientRect(); `+
		`return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth; })()`, sel)
}

// TestDashboardLayout drives every page of the dashboard in a real headless Chromium, with
// content on each (a long stream, a running cell, memory entries, a campaign, a job), at 800
// and 1920 px: nothing scrolls sideways, every control of the page shown is in the viewport's
// width and clipped by nothing, and a screenshot of each page at each width is saved
// (layout-PAGE-WIDTH.png in $LABMATE_ARTIFACTS). On the way: the running cell's Interrupt
// button is in view, and the user's interrupt is no failure; the sidebar's column runs the
// page's height; the campaign chart labels every turn and both axes; the Memory page shows
// scores and adds, edits and invalidates a fact.
func TestDashboardLayout(t *testing.T) {
	mem, err := memsqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	for _, text := range []string{"ode45 stalls on stiff problems: use ode15s", "ode15s needs the Jacobian's sparsity pattern for large systems"} {
		if _, err := mem.AddFact(context.Background(), &memory.AddFactParams{Actor: "test", Fact: &memory.Fact{Namespace: "user", Kind: memory.KindWarning, Text: text, Confidence: 0.7}}); err != nil {
			t.Fatal(err)
		}
	}
	roots, err := dataset.NewRoots(nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := testutil.KernelOptions(t)
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, func(c *server.Config) {
		setStart(c, func(ctx context.Context, name, ws string) (kernel.Kernel, error) {
			o := opts
			o.Workspace = ws
			return python.Start(ctx, &o)
		})
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
		c.Prewarm = []string{"python"}
		c.Memory = mem
		c.Campaigns = runner.Datasets{Roots: roots}
	})
	l.submit(t, `{"name": "relax", "command": ["bash", "-c", "for i in 1 2 3; do echo \"energy = -$i.5\"; done"], "resources": {"cores": 1}}`)
	var csv strings.Builder
	csv.WriteString("ligand,base,yield\n")
	for i := range 5 {
		for j := range 4 {
			fmt.Fprintf(&csv, "L%d,B%d,%d\n", i, j, (i*7+j*3)%17)
		}
	}
	body, _ := json.Marshal(map[string]any{"csv_data": csv.String(), "name": "grid.csv", "vars": []string{"ligand", "base"}, "planner": "random", "seed": 3})
	code, out := l.do(t, "POST", "/v1/campaigns", string(body)) // objective and budget: the defaults, yield and 20 turns
	var st runner.CampaignStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 201 || st.Campaign.Budget != 20 {
		t.Fatalf("POST /v1/campaigns: %d %s", code, out)
	}
	if code, out := l.do(t, "POST", "/v1/campaigns/"+st.Campaign.ID+"/step?n=20", ""); code != 200 {
		t.Fatalf("playing the campaign: %d %s", code, out)
	}

	ctx := browser(t, 4*time.Minute)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900), chromedp.Navigate(l.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "python"`)
	// The token URL opened the latest activity, the job; cells run in a new session.
	waitJS(t, ctx, "the job's session opens", `location.hash.startsWith("#lab/local-") && !shown("#cell")`)
	jsClick(t, ctx, "#new-session")
	waitJS(t, ctx, "a new session opens", `shown("#cell") && document.querySelector("#conn").textContent === "live"`)

	// A stream longer than the window, then a long cell: its Interrupt button comes into view.
	runCell(t, ctx, "for i in range(60):\n    print('x =', i * 1.5)\n")
	waitJS(t, ctx, "the first cell completes", lastOp+`.includes("completed in") && !!document.querySelector('#stream article.op:last-of-type figure.chart[data-series="x"]')`)
	// At each width, a long cell run from the runner brings its card's Interrupt button into
	// view, and a user's interrupt is no red failure.
	const stop = `#stream article.op:last-of-type header button.danger`
	for _, width := range []int64{800, 1920} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, fmt.Sprintf("the viewport is %d px", width), fmt.Sprintf(`window.innerWidth === %d && (scrollTo(0, 0), true)`, width))
		runCell(t, ctx, strings.Repeat("# a comment line that makes the cell tall\n", 12)+"import time\nfor i in range(100000):\n    print('spin', i, flush=True)\n    time.sleep(0.05)\n")
		waitJS(t, ctx, "the long cell runs", lastOp+`.includes("spin 3")`)
		waitJS(t, ctx, fmt.Sprintf("the running cell's Interrupt button is in view at %d px", width), inView(stop))
		if width == 1920 {
			waitJS(t, ctx, "the sessions show their time", `/\d\d:\d\d/.test(document.querySelector("#sessions li .count").textContent)`)
			waitJS(t, ctx, "the sidebar's column runs the page's whole height", `document.scrollingElement.scrollHeight > window.innerHeight && `+
				`Math.abs(document.querySelector(".side").getBoundingClientRect().bottom - document.querySelector("main").getBoundingClientRect().bottom) < 1`)
			screenshot(t, ctx, "layout-lab-running-1920.png")
		}
		jsClick(t, ctx, stop)
		waitJS(t, ctx, "the user's interrupt is no red failure", lastOp+`.includes("interrupted after") && `+
			`!document.querySelector("#stream article.op:last-of-type .end").classList.contains("failed") && `+
			`!document.querySelector("#stream article.op:last-of-type").classList.contains("v-Error") && `+
			`document.querySelector("#stream article.op:last-of-type .badge").textContent === "interrupted"`)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatal(err)
	}
	// The telemetry chart has both axes labelled — x against its sample index, as the cell
	// printed no t nor step — with evenly spaced ticks.
	ticks := evalString(t, ctx, `JSON.stringify([...document.querySelectorAll('#stream figure.chart[data-series="x"] svg text.tick')].map((t) => t.textContent))`)
	labels := evalString(t, ctx, `[...document.querySelectorAll('#stream figure.chart[data-series="x"] svg text.axis-label')].map((t) => t.textContent).join(", ")`)
	if labels != "sample, x" {
		t.Errorf("the telemetry chart's axis labels: %q, want sample and x", labels)
	}
	var tl []string
	json.Unmarshal([]byte(ticks), &tl)
	if !evenlySpaced(tl) {
		t.Errorf("the telemetry chart's ticks are not evenly spaced round values: %v", tl)
	}

	// Campaigns: the chart labels every one of its 20 turns, and both axes.
	if err := chromedp.Do(ctx, chromedp.Navigate(l.http.URL+"/#campaigns")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the campaign is listed", `document.querySelectorAll("#camp-list button").length === 1`)
	jsClick(t, ctx, `#camp-list button`)
	waitJS(t, ctx, "the campaign's chart shows", `document.querySelectorAll("#camp-chart circle.adv").length === 20`)
	var want []string
	for i := 1; i <= 20; i++ {
		want = append(want, fmt.Sprint(i))
	}
	if got := evalString(t, ctx, `[...document.querySelectorAll("#camp-chart text.tick")].map((t) => t.textContent).filter((s) => /^\d+$/.test(s) && +s >= 1).join(" ")`); !strings.HasSuffix(got, strings.Join(want, " ")) {
		t.Errorf("the campaign chart's turn ticks: %q, want every turn 1 to 20", got)
	}
	if got := evalString(t, ctx, `[...document.querySelectorAll("#camp-chart text.axis-label")].map((t) => t.textContent).join(", ")`); got != "turn, NMA · advantage" {
		t.Errorf("the campaign chart's axis labels: %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector("#camp-objective").value + " " + document.querySelector("#camp-budget").value`); got != game.DefaultObjective+" "+fmt.Sprint(game.DefaultBudget) {
		t.Errorf("the campaign form's defaults: %q, want those of game", got)
	}

	// Memory: scores, and a fact added, edited and invalidated.
	if err := chromedp.Do(ctx, chromedp.Navigate(l.http.URL+"/#memory")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the Memory page lists the facts", `document.querySelectorAll("#mem-results li").length === 2`)
	evalString(t, ctx, `(document.querySelector("#mem-q").value = "stiff ode45", document.querySelector("#mem-form").requestSubmit(), "")`)
	waitJS(t, ctx, "the search shows scores and confidence", `[...document.querySelectorAll("#mem-results .score")].some((s) => /score \d/.test(s.textContent) && s.textContent.includes("confidence 0.7"))`)
	evalString(t, ctx, `(() => { document.querySelector("#mem-add-text").value = "the maglev plant saturates at 2 A"; document.querySelector("#mem-add-kind").value = "boundary"; `+
		`document.querySelector("#mem-add-tags").value = "maglev, pid"; document.querySelector("#mem-add-form").requestSubmit(); return ""; })()`)
	waitJS(t, ctx, "the added fact is shown", `shown("#mem-entry") && document.querySelector("#entry-fields").innerText.includes("the maglev plant saturates at 2 A") && `+
		`document.querySelector("#entry-h").textContent === "Fact (boundary)" && document.querySelector("#mem-added").textContent.startsWith("added")`)
	jsClick(t, ctx, "#entry-edit")
	waitJS(t, ctx, "the edit form opens with the fact", `shown("#entry-edit-form") && document.querySelector("#edit-text").value === "the maglev plant saturates at 2 A" && document.querySelector("#edit-tags").value === "maglev, pid"`)
	evalString(t, ctx, `(() => { document.querySelector("#edit-text").value = "the maglev plant saturates at 2.5 A"; document.querySelector("#edit-reason").value = "measured again"; `+
		`document.querySelector("#entry-edit-form").requestSubmit(); return ""; })()`)
	waitJS(t, ctx, "the edit shows, and its history", `!shown("#entry-edit-form") && document.querySelector("#entry-fields").innerText.includes("2.5 A") && `+
		`document.querySelector("#entry-history").innerText.includes("2 A → the maglev plant saturates at 2.5 A (measured again)")`)
	screenshot(t, ctx, "layout-memory-edited.png")
	jsClick(t, ctx, "#entry-invalidate")
	waitJS(t, ctx, "the invalidate form asks why", `shown("#entry-invalidate-form") && document.activeElement === document.querySelector("#inv-reason")`)
	evalString(t, ctx, `(document.querySelector("#inv-reason").value = "it was the power supply", document.querySelector("#entry-invalidate-form").requestSubmit(), "")`)
	waitJS(t, ctx, "the fact is invalidated and kept", `document.querySelector("#entry-fields").innerText.includes("invalidated (it was the power supply)") && !shown("#entry-actions")`)

	// Every page at both widths.
	for _, page := range []string{"lab", "runs", "jobs", "campaigns", "memory"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(l.http.URL+"/#"+page)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "the page "+page+" shows", fmt.Sprintf(`shown("#page-%s") && document.querySelector("#conn").textContent === "live"`, page))
		switch page {
		case "jobs":
			waitJS(t, ctx, "the job is listed", `document.querySelectorAll("#job-rows tr").length === 1`)
		case "campaigns":
			jsClick(t, ctx, `#camp-list button`)
			waitJS(t, ctx, "the campaign shows", `document.querySelectorAll("#camp-chart circle.adv").length === 20`)
		case "memory":
			waitJS(t, ctx, "the entries are listed", `document.querySelectorAll("#mem-results li").length >= 1`)
			jsClick(t, ctx, `#mem-results li:first-child button`)
			waitJS(t, ctx, "an entry shows", `shown("#mem-entry")`)
		case "lab":
			waitJS(t, ctx, "the stream is replayed", `document.querySelectorAll("#stream article.op").length === 3`)
		}
		for _, width := range []int64{800, 1920} {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
				t.Fatal(err)
			}
			waitJS(t, ctx, fmt.Sprintf("the viewport is %d px", width), fmt.Sprintf(`window.innerWidth === %d`, width))
			evalString(t, ctx, `(scrollTo(0, 0), "")`) // the screenshot from the top, the sidebar where it starts
			time.Sleep(200 * time.Millisecond)         // a frame or two for the charts
			if bad := evalString(t, ctx, laidOut("#page-"+page)); bad != "" {
				t.Errorf("the %s page at %d px:\n%s", page, width, bad)
			}
			screenshot(t, ctx, fmt.Sprintf("layout-%s-%d.png", page, width))
		}
	}
}

// evenlySpaced reports whether ticks, y's then x's (each axis ascending from its first), are
// at least two per axis, numbers, and evenly spaced along each axis.
func evenlySpaced(ticks []string) bool {
	var axes [][]float64
	for _, s := range ticks {
		var v float64
		if _, err := fmt.Sscan(s, &v); err != nil {
			return false
		}
		if n := len(axes); n == 0 || v <= axes[n-1][len(axes[n-1])-1] {
			axes = append(axes, nil)
		}
		axes[len(axes)-1] = append(axes[len(axes)-1], v)
	}
	if len(axes) != 2 {
		return false
	}
	for _, a := range axes {
		if len(a) < 2 {
			return false
		}
		for i := 2; i < len(a); i++ {
			if d, d0 := a[i]-a[i-1], a[1]-a[0]; d < d0*0.999 || d > d0*1.001 {
				return false
			}
		}
	}
	return true
}
