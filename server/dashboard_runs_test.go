package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// TestDashboardRun: an agent run started over the API is watched in a real headless Chromium
// from its session, as its timeline: the task, the plan, every model answer (folded, each
// with what the model said), the operation as a card of its own with its time, its output and
// its telemetry chart, the reflection, the answer and the stop with its tokens per module —
// and no cell form.
func TestDashboardRun(t *testing.T) {
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "sum", Steps: []agent.Step{{Title: "sum", Action: "compute 2 + 3", Tool: agent.ToolRunCode, Checkpoint: "s = 5"}}}),
		llmtest.CallTool(agent.ToolRunCode, `{"code": "for i in range(6):\n    print('s =', i)"}`),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "s reached 5", "summary": "s = 5"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "5"}`),
	)
	f := runFixture(t, fake)
	resp, err := http.Post(f.http.URL+"/v1/runs", "application/json", strings.NewReader(`{"goal": "What is 2 + 3?", "kernel": "python"}`))
	if err != nil {
		t.Fatal(err)
	}
	var started struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || started.ID == "" {
		t.Fatalf("POST /v1/runs: %d %+v", resp.StatusCode, started)
	}
	ctx := browser(t, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/#lab/"+started.ID)); err != nil {
		t.Fatal(err)
	}
	const stream = `document.querySelector("#stream").innerText`
	waitJS(t, ctx, "the run's story arrives", stream+`.includes("answer: 5") && `+stream+`.includes("stopped: answered")`)
	for _, want := range []string{"What is 2 + 3?", "plan: sum", "sum [run_code] — check: s = 5", "s = 5", "reflect, step 1: accept — s reached 5", "tokens: plan "} {
		if got := evalString(t, ctx, stream); !strings.Contains(got, want) {
			t.Errorf("the run's stream lacks %q:\n%s", want, got)
		}
	}
	waitJS(t, ctx, "the operation is a card of its own, completed, with its chart",
		`[...document.querySelectorAll("#stream article.op")].some((a) => a.innerText.includes("completed in") && a.querySelector('figure.chart[data-series="s"]'))`)
	if shown := evalString(t, ctx, `String(shown("#cell"))`); shown != "false" {
		t.Error("an agent run's page shows the cell form")
	}
	// Every model answer, in order: the plan, the run_code call, the reflection, the final answer.
	answers := evalString(t, ctx, `[...document.querySelectorAll("#stream details.run-line.model")].map((d) => d.querySelector("summary").textContent.replace(/,.*$/, "") + " | " + d.querySelector("pre.reply").textContent.replace(/\s+/g, " ").slice(0, 60)).join("\n")`)
	for i, want := range []string{`model · plan | {"goal":"sum"`, `model · code | → run_code({"code": "for i in range(6):`, `model · reflect | {"decision":"accept"`, `model · code | → final_answer({"answer": "5"})`} {
		lines := strings.Split(answers, "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[i], want) {
			t.Errorf("model answer %d: want %q; the page shows:\n%s", i+1, want, answers)
			break
		}
	}
	if got := evalString(t, ctx, `[...document.querySelectorAll("#stream article.op")].filter((a) => a.querySelector("header time.at") && a.querySelector("pre.code").textContent.includes("range(6)")).length + ""`); got != "1" {
		t.Errorf("%s cards of the run's cell with its time, want 1", got)
	}
	screenshot(t, ctx, "run.png")
}

// fits checks, at a window width, that the page shown has no horizontal overflow.
func fits(t *testing.T, ctx context.Context, width int64, what string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, fmt.Sprintf("%s fits %d px", what, width), fmt.Sprintf(
		`window.innerWidth === %d && document.documentElement.scrollWidth <= window.innerWidth && document.body.scrollWidth <= window.innerWidth`, width))
}

// TestDashboardRunsPage drives the Runs page in a real headless Chromium against the scripted
// model over HTTP: it starts a run from the form and watches its story arrive live up to the
// answer, starts one the script keeps busy in a long cell and cancels it from the run's bar (it
// shows as cancelled, not failed, and resumable), finds both in the list — Resume offered for
// the cancelled run only — and checks the layout at 800 and 1920 px.
func TestDashboardRunsPage(t *testing.T) {
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "sum", Steps: []agent.Step{{Title: "sum", Action: "compute 2 + 3", Tool: agent.ToolRunCode, Checkpoint: "s = 5"}}}),
		llmtest.CallTool(agent.ToolRunCode, `{"code": "import time\nfor i in range(6):\n    print('s =', i, flush=True)\n    time.sleep(0.1)"}`),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "s reached 5", "summary": "s = 5"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "5"}`),
		// The second run: a loop the cancel stops.
		llmtest.JSON(agent.Plan{Goal: "wait", Steps: []agent.Step{{Title: "wait", Action: "a long loop", Tool: agent.ToolRunCode, Checkpoint: "done"}}}),
		llmtest.CallTool(agent.ToolRunCode, `{"code": "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"}`),
	)
	f := runFixture(t, fake, func(c *server.Config) {
		setModel(c, "fake-model-1")
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	})
	ctx := browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/#runs")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the Runs page names the model", `shown("#page-runs") && document.querySelector("#run-model").textContent.includes("fake-model-1") && !document.querySelector("#run-start").disabled`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#run-kernel").value === "python"`)

	start := func(goal string) {
		t.Helper()
		evalString(t, ctx, fmt.Sprintf(`(document.querySelector("#run-goal").value = %q, "")`, goal))
		jsClick(t, ctx, `#run-form button[type="submit"]`)
		waitJS(t, ctx, "the run's story opens", `shown("#page-lab") && location.hash.startsWith("#lab/") && document.querySelector("#stream").innerText.includes(`+fmt.Sprintf("%q", goal)+`)`)
	}
	const stream = `document.querySelector("#stream").innerText`
	start("What is 2 + 3?")
	waitJS(t, ctx, "the run is live: the cell's lines arrive while it runs", stream+`.includes("s = 1") && document.querySelector("#run-status").textContent.includes("running")`)
	waitJS(t, ctx, "the story arrives up to the answer", stream+`.includes("answer: 5") && `+stream+`.includes("stopped: answered")`)
	waitJS(t, ctx, "the answered run offers no resume", `document.querySelector("#run-status").textContent.includes("ended (answered)") && !shown("#run-resume") && !shown("#run-cancel")`)
	first := strings.TrimPrefix(evalString(t, ctx, `location.hash`), "#lab/")

	start("Wait for the loop")
	waitJS(t, ctx, "the long cell runs", stream+`.includes("tick 3") && shown("#run-cancel")`)
	running := strings.TrimPrefix(evalString(t, ctx, `location.hash`), "#lab/")
	if code, body := jsonCall(t, "POST", f.http.URL+"/v1/sessions/"+running+"/close", ""); code != http.StatusConflict || !strings.Contains(body, "cancel it first") {
		t.Errorf("closing a running run's session: %d %s, want 409", code, body)
	}
	jsClick(t, ctx, "#run-cancel")
	waitJS(t, ctx, "the run is cancelled, and resumable", `document.querySelector("#run-status").textContent.includes("ended (cancelled) and can be resumed") && shown("#run-resume")`)
	if n := evalString(t, ctx, `String(document.querySelectorAll("#stream .end.failed, #stream .badge.s-failed").length)`); n != "0" {
		t.Errorf("the cancelled run shows %s failures:\n%s", n, evalString(t, ctx, stream))
	}
	waitJS(t, ctx, "its cell is shown interrupted", `[...document.querySelectorAll("#stream article.op")].some((a) => a.innerText.includes("tick 3") && a.querySelector(".badge.s-interrupted"))`)
	second := strings.TrimPrefix(evalString(t, ctx, `location.hash`), "#lab/")
	waitJS(t, ctx, "the sessions list marks the runs", fmt.Sprintf(`document.querySelector('#sessions li[data-session=%q] .kind') !== null`, first))

	jsClick(t, ctx, `#nav-runs a`)
	row := func(id string) string { return fmt.Sprintf(`document.querySelector('#run-rows tr[data-run=%q]')`, id) }
	waitJS(t, ctx, "the list has both runs", `!!`+row(first)+` && !!`+row(second)+` && `+row(first)+`.innerText.includes("What is 2 + 3?") && `+
		row(first)+`.innerText.includes("answered") && `+row(second)+`.innerText.includes("cancelled") && `+row(second)+`.innerText.includes("resumable")`)
	waitJS(t, ctx, "Resume is offered for the cancelled run only", row(second)+`.querySelector("button.resume") !== null && `+row(first)+`.querySelector("button") === null`)
	if got := evalString(t, ctx, `document.querySelector("#run-count").textContent`); got != "2 runs" {
		t.Errorf("the run count says %q", got)
	}
	fits(t, ctx, 1920, "the Runs page")
	screenshot(t, ctx, "runs.png")
	fits(t, ctx, 800, "the Runs page")
	screenshot(t, ctx, "runs-800.png")
	jsClick(t, ctx, fmt.Sprintf(`#run-rows tr[data-run=%q] a`, first))
	waitJS(t, ctx, "a row opens the run's story", `shown("#page-lab") && `+stream+`.includes("answer: 5")`)
	fits(t, ctx, 800, "the Lab page")
	fits(t, ctx, 1920, "the Lab page")

	// The run list's rows over the API: the run_end's reason, resumable; the model's header.
	resp, err := http.Get(f.http.URL + "/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rows []struct {
		ID     string
		End    protocol.RunEnd
		Events int64
	}
	json.NewDecoder(resp.Body).Decode(&rows)
	if resp.Header.Get(server.ModelHeader) != "fake-model-1" || len(rows) != 2 || rows[0].End.Reason != "answered" || rows[0].End.Resumable ||
		rows[1].End.Reason != "cancelled" || !rows[1].End.Resumable {
		t.Errorf("GET /v1/runs: %s %+v", resp.Header.Get(server.ModelHeader), rows)
	}
}

// TestDashboardSessions: the Lab's sessions list renames a session inline and closes it; the
// name and the closed state survive a reload, and a cell reopens the session.
func TestDashboardSessions(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	})
	ctx := browser(t, 90*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "python"`)
	runCell(t, ctx, "k = 1\nprint('k', k)")
	waitJS(t, ctx, "the cell completes", lastOp+`.includes("completed in")`)
	id := evalString(t, ctx, `sessionStorage.getItem("labmate.session")`)
	li := fmt.Sprintf(`document.querySelector('#sessions li[data-session=%q]')`, id)
	waitJS(t, ctx, "the session is listed with a Close button", `!!(`+li+` && `+li+`.querySelector("button.close"))`)

	jsClick(t, ctx, fmt.Sprintf(`#sessions li[data-session=%q] button.rename`, id))
	waitJS(t, ctx, "the name field opens", li+`.querySelector(".rename-form input") === document.activeElement`)
	// A name of spaces is refused with the server's reason; a good one is trimmed and kept.
	rename := func(name string) {
		evalString(t, ctx, fmt.Sprintf(`(() => { const f = %s.querySelector(".rename-form"); f.querySelector("input").value = %q; f.requestSubmit(); return ""; })()`, li, name))
	}
	rename("   ")
	waitJS(t, ctx, "the bad name is refused", `shown("#alert") && document.querySelector("#alert").textContent.includes("empty")`)
	rename("  titration A  ")
	waitJS(t, ctx, "the list shows the name", `!!`+li+` && `+li+`.querySelector(".name")?.textContent === "titration A" && document.querySelector("#session-name").textContent.includes("titration A")`)

	jsClick(t, ctx, fmt.Sprintf(`#sessions li[data-session=%q] button.close`, id))
	waitJS(t, ctx, "the session is dimmed as closed", li+`.classList.contains("closed") && `+li+`.querySelector("button.close") === null`)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "after a reload, the name and the closed state stay", `!!`+li+` && `+li+`.classList.contains("closed") && `+li+`.innerText.includes("titration A") && `+
		`document.querySelector("#session-name").textContent.includes("closed")`)
	waitJS(t, ctx, "the reloaded page is live", `document.querySelector("#conn").textContent === "live"`)
	screenshot(t, ctx, "sessions.png")
	// The stream shows no card for the session's own updates.
	if n := evalString(t, ctx, `String(document.querySelectorAll("#stream article.op").length)`); n != "1" {
		t.Errorf("%s cards after the reload, want the cell's only", n)
	}
	runCell(t, ctx, "print('k' in dir())")
	waitJS(t, ctx, "a cell reopens the session, in a fresh kernel", lastOp+`.includes("False") && !`+li+`.classList.contains("closed")`)
	fits(t, ctx, 800, "the Lab page")
}

// TestDashboardResume: a run cancelled from the dashboard is resumed from its Resume button in
// a real headless Chromium: the run's bar says it runs again, the cut cell runs again and the
// story goes on, in the same view, to the answer; a reload shows the whole story once.
func TestDashboardResume(t *testing.T) {
	wait := "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('b =', 2)"
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "b", Steps: []agent.Step{{Title: "b", Action: "compute b", Tool: agent.ToolRunCode, Checkpoint: "b = 2"}}}),
		llmtest.CallTool(agent.ToolRunCode, fmt.Sprintf(`{"code": %q}`, wait)),
		// After the resume: the cell again, its review and the answer.
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "b = 2", "summary": "b = 2"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "b = 2"}`),
	)
	f, ws := resumeFixture(t, fake, "", func(c *server.Config) { setModel(c, "fake-model-1") })
	code, id := post(t, f, "/v1/runs", `{"goal": "compute b", "kernel": "python"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d %s", code, id)
	}
	ctx := browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/#lab/"+id)); err != nil {
		t.Fatal(err)
	}
	const stream = `document.querySelector("#stream").innerText`
	const cells = `[...document.querySelectorAll("#stream article.op")].filter((a) => a.innerText.includes("os.path.exists"))`
	waitJS(t, ctx, "the cell runs", cells+`.length === 1 && `+stream+`.includes("[started]") && shown("#run-cancel")`)
	jsClick(t, ctx, "#run-cancel")
	waitJS(t, ctx, "the run is cancelled, and resumable", `document.querySelector("#run-status").textContent.includes("can be resumed") && shown("#run-resume")`)
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	jsClick(t, ctx, "#run-resume")
	waitJS(t, ctx, "the resumed run goes on to its answer in the same view", stream+`.includes("answer: b = 2") && `+stream+`.includes("stopped: answered") && `+
		`document.querySelector("#run-status").textContent.includes("ended (answered)") && !shown("#run-resume")`)
	if got := evalString(t, ctx, `String(`+cells+`.length)`); got != "2" {
		t.Errorf("the story has %s operations, want the cancelled cell and its rerun:\n%s", got, evalString(t, ctx, stream))
	}
	before := evalString(t, ctx, stream)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "a reload shows the whole story", stream+`.includes("stopped: answered")`)
	if after := evalString(t, ctx, stream); strings.Count(after, "answer: b = 2") != 1 || strings.Count(after, "compute b") != strings.Count(before, "compute b") {
		t.Errorf("after a reload the story differs:\n%s\n--- before ---\n%s", after, before)
	}
	screenshot(t, ctx, "run-resumed.png")
}
