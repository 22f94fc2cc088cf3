package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// getJob reads GET /v1/jobs/ID.
func (l *jobLab) getJob(t *testing.T, id string) *server.JobView {
	t.Helper()
	code, out := l.do(t, "GET", "/v1/jobs/"+id, "")
	v := &server.JobView{}
	if err := json.Unmarshal([]byte(out), v); err != nil || code != http.StatusOK || v.Status == nil {
		t.Fatalf("GET /v1/jobs/%s: %d %s", id, code, out)
	}
	return v
}

// waitJob waits until job id is in a state ok accepts, and returns its view.
func (l *jobLab) waitJob(t *testing.T, id, what string, ok func(job.State) bool) *server.JobView {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		v := l.getJob(t, id)
		if ok(v.State) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s (%s): want it %s", id, v.State, v.Reason, what)
		}
	}
}

func terminalState(s job.State) bool { return s.Terminal() }

// diverging prints a residual that doubles every 0.1 s: perception warns once it has grown
// steadily ×10³ over its window of 16 samples, and cancels it at ×10¹⁰ (the 35th).
const diverging = `for i in $(seq 1 80); do echo "residual = $((2**i))"; sleep 0.1; done`

// TestDashboardJobs drives the Jobs page in a real headless Chromium against a real server
// with a real, sandboxed job/local scheduler: the page is offered, lists the jobs newest first
// with states that tell a cancel by perception or by a user from a failure, submits jobs from
// the form (memory and wall time in bytes and ns, a command split into words), cancels a
// queued and a running one from their rows, and opens a job's live story, whose card reads as
// a job — its command, resources, scheduler and pid, its state changes as they happen, the
// verdicts on its chart, "cancelled by perception" and why, and how it ended — while perception
// really cancels it. A healthy job's story ends with exit code 0. The layout holds at 800 and
// 1920 px.
func TestDashboardJobs(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, func(c *server.Config) {
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	})

	// The jobs the list shows, oldest first: one healthy, one a user cancelled, one that
	// failed, one perception cancelled, one running.
	healthy := l.submit(t, `{"name": "si-scf", "script": "#!/bin/bash\nfor i in $(seq 1 6); do echo \"residual = 1e-$i\"; sleep 0.1; done\n", "resources": {"cores": 1}}`)
	if v := l.waitJob(t, healthy, "ended", terminalState); v.State != job.Completed || v.ExitCode == nil || *v.ExitCode != 0 {
		t.Fatalf("the healthy job ended %s (%s)", v.State, v.Reason)
	}
	user := l.submit(t, `{"name": "md-run", "command": ["sleep", "600"], "resources": {"cores": 1}}`)
	l.waitJob(t, user, "running", func(s job.State) bool { return s == job.Running })
	if code, out := l.do(t, "POST", "/v1/jobs/"+user+"/cancel", `{"why": "wrong input deck"}`); code != http.StatusAccepted {
		t.Fatalf("cancelling %s: %d %s", user, code, out)
	}
	l.waitJob(t, user, "ended", terminalState)
	failed := l.submit(t, `{"name": "broken", "command": ["bash", "-c", "exit 2"], "resources": {"cores": 1}}`)
	l.waitJob(t, failed, "ended", terminalState)
	body, _ := json.Marshal(map[string]any{"name": "diverged", "command": []string{"bash", "-c", diverging}, "resources": map[string]any{"cores": 1}})
	diverged := l.submit(t, string(body))
	if v := l.waitJob(t, diverged, "ended", terminalState); v.State != job.Cancelled || !strings.HasPrefix(v.Reason, "perception: ") {
		t.Fatalf("the diverging job ended %s (%s): want cancelled by perception", v.State, v.Reason)
	}
	running := l.submit(t, `{"name": "long-md", "command": ["sleep", "60"], "resources": {"cores": 1}}`)
	l.waitJob(t, running, "running", func(s job.State) bool { return s == job.Running })

	ctx := browser(t, 3*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(l.http.URL+"/#jobs")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the Jobs page is offered and shown", `shown("#nav-jobs") && shown("#page-jobs")`)
	waitJS(t, ctx, "the jobs are listed", `document.querySelectorAll("#job-rows tr").length === 5`)
	rowsJS := `[...document.querySelectorAll("#job-rows tr")].map((r) => r.innerText.replaceAll("\n", " ").replaceAll("\t", " | ")).join("\n")`
	rows := evalString(t, ctx, rowsJS)
	t.Logf("the list:\n%s", rows)
	lines := strings.Split(rows, "\n")
	for i, want := range [][]string{
		{"long-md", "sleep 60", "running", "local", "pid ", "Cancel"},
		{"diverged", "cancelled by perception", "divergence: residual"},
		{"broken", "bash -c 'exit 2'", "failed", "| 2 |", "pid "},
		{"md-run", "sleep 600", "cancelled", "wrong input deck", "local", "pid "},
		{"si-scf", `for i in $(seq 1 6)`, "completed", "| 0 |", "pid "},
	} {
		for _, w := range want {
			if i >= len(lines) || !strings.Contains(lines[i], w) {
				t.Errorf("row %d lacks %q:\n%s", i, w, rows)
			}
		}
	}
	if i := 1; i < len(lines) && strings.Contains(lines[i], "perception: ") {
		t.Errorf("row %d repeats who cancelled it: %s", i, lines[i])
	}
	badges := evalString(t, ctx, `[...document.querySelectorAll("#job-rows tr")].map((r) => r.querySelector(".badge").className).join(",")`)
	if want := "badge s-running,badge s-perception,badge s-failed,badge s-interrupted,badge s-completed"; badges != want {
		t.Errorf("the badges are %s, want %s: only a failure is red", badges, want)
	}
	if got := evalString(t, ctx, `[...document.querySelectorAll("#job-rows tr")].filter((r) => r.querySelector("button.cancel")).map((r) => r.dataset.job).join(",")`); got != running {
		t.Errorf("rows with a Cancel button: %q; only the running job has one", got)
	}
	fits(t, ctx, 1920, "the Jobs page")
	screenshot(t, ctx, "jobs.png")
	fits(t, ctx, 800, "the Jobs page")
	screenshot(t, ctx, "jobs-800.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatal(err)
	}

	// Submit from the form: a script, 2 cores (queued: the running job holds one of the
	// two), 1.5 GiB, 90 minutes, followed files, on the local scheduler.
	evalString(t, ctx, `(() => {
		const set = (sel, v) => { document.querySelector(sel).value = v; };
		set("#job-as", "script"); set("#job-text", "pw.x -in scf.in > scf.out\n"); set("#job-name", "al-scf"); set("#job-cores", "2");
		set("#job-mem", "1.5"); set("#job-mem-unit", String(1 << 30)); set("#job-wall", "90"); set("#job-wall-unit", "60");
		set("#job-follow", "scf.out, pw.log"); set("#job-profile", "qe"); set("#job-hotfix", "on_warning"); set("#job-scheduler", "local");
		return "";
	})()`)
	jsClick(t, ctx, `#job-form button[type="submit"]`)
	waitJS(t, ctx, "the submitted job is listed, queued", `document.querySelector("#job-submitted").innerText.includes("submitted job local-") && [...document.querySelectorAll("#job-rows tr")][0].innerText.includes("al-scf") && [...document.querySelectorAll("#job-rows tr")][0].innerText.includes("queued")`)
	scf := evalString(t, ctx, `document.querySelector("#job-rows tr").dataset.job`)
	v := l.getJob(t, scf)
	if v.Scheduler != "local" || v.State != job.Queued {
		t.Errorf("the submitted job is %s on %q", v.State, v.Scheduler)
	}
	v.Spec.Workspace = "" // the server's to assign
	got, _ := json.Marshal(v.Spec)
	if want := `{"name":"al-scf","script":"pw.x -in scf.in \u003e scf.out\n","profile":"qe","workspace":"","resources":{"cores":2,"memory_bytes":1610612736,"wall_time_s":5400},"follow":["scf.out","pw.log"],"hotfix":"on_warning"}`; string(got) != want {
		t.Errorf("the submitted spec is\n%s\nwant\n%s", got, want)
	}
	// A queued job has a Cancel button too: it is cancelled, by the dashboard.
	jsClick(t, ctx, `#job-rows tr[data-job="`+scf+`"] button.cancel`)
	waitJS(t, ctx, "the queued job is shown cancelled, by the dashboard", `(() => { const r = document.querySelector('#job-rows tr[data-job="`+scf+`"]'); return r.innerText.includes("cancelled from the dashboard") && !r.querySelector("button.cancel") && !!r.querySelector(".badge.s-interrupted"); })()`)

	// A command is split into words, quotes kept together: a diverging residual, on 2 cores,
	// so that it waits for the running job.
	evalString(t, ctx, `(() => {
		const set = (sel, v) => { document.querySelector(sel).value = v; };
		set("#job-as", "command"); set("#job-text", `+strconv.Quote("bash -c '"+diverging+"'")+`); set("#job-name", "diverging");
		set("#job-mem", "1"); set("#job-wall", "10"); set("#job-follow", ""); set("#job-profile", ""); set("#job-hotfix", "on_error");
		return "";
	})()`)
	jsClick(t, ctx, `#job-form button[type="submit"]`)
	waitJS(t, ctx, "the command job is listed, queued", `document.querySelectorAll("#job-rows tr").length === 7 && [...document.querySelectorAll("#job-rows tr")][0].innerText.includes("diverging") && [...document.querySelectorAll("#job-rows tr")][0].innerText.includes("queued")`)
	live := evalString(t, ctx, `document.querySelector("#job-rows tr").dataset.job`)
	if v := l.getJob(t, live); strings.Join(v.Spec.Command, "|") != "bash|-c|"+diverging {
		t.Errorf("the command was sent as %q", v.Spec.Command)
	}

	// Its live story, in a second tab, while it waits.
	tab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(l.http.URL+"/#lab/"+live+"/"+live)); err != nil {
		t.Fatal(err)
	}
	card := `(document.querySelector("#op-` + live + `") || {innerText: ""}).innerText`
	badge := `(document.querySelector("#op-` + live + ` .badge") || {}).textContent`
	waitJS(t, tab, "the job's story opens, queued", `shown("#page-lab") && `+card+`.includes("[job submitted: QUEUED") && `+badge+` === "queued" && !`+card+`.includes("[job started")`)
	if got := evalString(t, tab, `String(shown("#cell"))`); got != "false" {
		t.Errorf("a job's session offers to run a cell (shown: %s)", got)
	}

	// Cancel the running job from its row: the diverging one starts, and the tab sees it live.
	jsClick(t, ctx, `#job-rows tr[data-job="`+running+`"] button.cancel`)
	waitJS(t, ctx, "the cancelled job is shown cancelled, by the dashboard", `document.querySelector('#job-rows tr[data-job="`+running+`"]').innerText.includes("cancelled from the dashboard")`)
	if v := l.waitJob(t, running, "ended", terminalState); v.State != job.Cancelled || v.Reason != "cancelled from the dashboard" {
		t.Errorf("the running job is %s (%s): want cancelled from the dashboard", v.State, v.Reason)
	}
	waitJS(t, tab, "the job starts, live", card+`.includes("[job started: RUNNING]") && `+badge+` === "running"`)
	waitJS(t, tab, "its lines arrive while it runs", card+`.includes("residual = 1024") && `+badge+` === "running"`)
	waitJS(t, tab, "the job's card ends", card+`.includes("cancelled by perception after")`)
	text := evalString(t, tab, card)
	t.Logf("the card:\n%s", text)
	for _, w := range []string{
		"diverging\njob\n", "bash -c '" + diverging + "'", "2 cores · 1.0 GiB memory · 10 min wall time · perception cancels it on an Error",
		"job " + live + " · local (pid ", "· CANCELLED", "residual = 32768",
		"Warning · divergence: residual (printed) grows exponentially", "Error · divergence: residual (printed) diverges", "cancelled by perception after ", ": divergence: residual",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("the job's card lacks %q", w)
		}
	}
	if got := evalString(t, tab, `document.querySelector("#op-`+live+` .badge").textContent + " " + document.querySelector("#op-`+live+` .badge").className`); got != "cancelled by perception badge s-perception" {
		t.Errorf("the card's badge: %q", got)
	}
	chart := `#op-` + live + ` figure.chart[data-series="residual"]`
	waitJS(t, tab, "its chart marks the Warning and the Error, and the end", `document.querySelectorAll('`+chart+` line.mark.Warning').length === 1 && document.querySelectorAll('`+chart+` line.mark.Error').length === 1`)
	if v := l.getJob(t, live); v.State != job.Cancelled || !strings.HasPrefix(v.Reason, "perception: divergence") {
		t.Errorf("the diverging job is %s (%s): want cancelled by perception", v.State, v.Reason)
	}
	fits(t, tab, 1366, "the job's story")
	screenshot(t, tab, "job.png")

	// The healthy job's story ends with its exit code.
	if err := chromedp.Do(tab, chromedp.Navigate(l.http.URL+"/#lab/"+healthy+"/"+healthy)); err != nil {
		t.Fatal(err)
	}
	hcard := `(document.querySelector("#op-` + healthy + `") || {innerText: ""}).innerText`
	waitJS(t, tab, "the healthy job's story ends with exit code 0", hcard+`.includes("completed in") && `+hcard+`.includes("exit code 0")`)
	if got := evalString(t, tab, `document.querySelector("#op-`+healthy+` .badge").className`); got != "badge s-completed" {
		t.Errorf("the healthy job's badge: %q", got)
	}

	l.close()
	testutil.ReplayStore(t, reopen(t, dir))
}

// TestDashboardJobFollowed: a job that writes its progress to a file it follows shows that
// file's lines in its card's stream (in a real headless Chromium), each named by its file.
func TestDashboardJobFollowed(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, func(c *server.Config) {
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	})
	id := l.submit(t, `{"name": "md", "command": ["bash", "-c", "for i in 1 2 3 4; do echo \"step $i energy = -$i.5\" >> md.log; sleep 0.3; done; echo done"], "follow": ["md.log"], "resources": {"cores": 1}}`)
	l.waitJob(t, id, "ended", terminalState)
	ctx := browser(t, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(l.http.URL+"/#lab/"+id)); err != nil {
		t.Fatal(err)
	}
	const out = `(document.querySelector("#stream article.op .out") || {textContent: ""}).textContent`
	waitJS(t, ctx, "the followed file's lines show", out+`.includes("md.log: step 4 energy = -4.5") && `+out+`.includes("done")`)
}
