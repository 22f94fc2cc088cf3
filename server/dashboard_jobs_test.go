package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// fakeJobs is a TEST DOUBLE of the /v1/jobs REST endpoints, written while server/jobs.go (the
// real ones) was being written beside the dashboard's Jobs page. It keeps a list of statuses
// in memory and serves the contract the page relies on: GET /v1/jobs (newest first, each a
// job.Status with scheduler, session and operation), POST /v1/jobs (a job.Spec plus
// "scheduler" → 202 {id, session, operation}) and POST /v1/jobs/{id}/cancel ({why} → 202).
// Once the real endpoints are in the server, mount them instead (see mountFakeJobs).
type fakeJobs struct {
	mu        sync.Mutex
	jobs      []fakeJob // oldest first
	submitted []map[string]any
	cancelled map[string]string
}

type fakeJob struct {
	job.Status
	Scheduler string `json:"scheduler"`
	Session   string `json:"session"`
	Operation string `json:"operation"`
}

// mountFakeJobs mounts the test double on srv; it fails the test when the server already
// answers /v1/jobs (the real endpoints have arrived: this double is then to be deleted).
func mountFakeJobs(t *testing.T, f *fixture, jobs []fakeJob) *fakeJobs {
	t.Helper()
	if resp, err := http.Get(f.http.URL + "/v1/jobs"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET /v1/jobs answers %d without the fake: the server serves jobs now; test against its real endpoints", resp.StatusCode)
		}
	}
	fj := &fakeJobs{jobs: jobs, cancelled: map[string]string{}}
	f.srv.Handle("GET /v1/jobs", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fj.mu.Lock()
		defer fj.mu.Unlock()
		out := make([]fakeJob, 0, len(fj.jobs))
		for i := len(fj.jobs) - 1; i >= 0; i-- {
			out = append(out, fj.jobs[i])
		}
		writeJSON(w, http.StatusOK, out)
	}))
	f.srv.Handle("POST /v1/jobs", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		spec := &job.Spec{}
		raw, _ := json.Marshal(body)
		json.Unmarshal(raw, spec)
		fj.mu.Lock()
		defer fj.mu.Unlock()
		fj.submitted = append(fj.submitted, body)
		sched, _ := body["scheduler"].(string)
		id := fmt.Sprintf("%s-fake-%d", sched, len(fj.jobs)+1)
		fj.jobs = append(fj.jobs, fakeJob{Status: job.Status{ID: job.ID(id), Name: spec.Name, State: job.Queued, Reason: "waiting for 2 cores",
			Submitted: time.Now(), Spec: spec}, Scheduler: sched, Session: id, Operation: id})
		writeJSON(w, http.StatusAccepted, map[string]string{"id": id, "session": id, "operation": id})
	}))
	f.srv.Handle("POST /v1/jobs/{id}/cancel", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Why string }
		json.NewDecoder(r.Body).Decode(&body)
		fj.mu.Lock()
		defer fj.mu.Unlock()
		for i := range fj.jobs {
			if string(fj.jobs[i].ID) == r.PathValue("id") {
				fj.cancelled[r.PathValue("id")] = body.Why
				fj.jobs[i].State, fj.jobs[i].Reason, fj.jobs[i].Ended = job.Cancelled, body.Why, time.Now()
				writeJSON(w, http.StatusAccepted, map[string]string{})
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown job"})
	}))
	return fj
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// appendJobStory appends to the store, as the server's job follower (operation.RunJob) logs
// them, the messages of a job operation that perception cancelled: the request with the
// spec, the ack and start with the job, its log lines with their telemetry, a Warning, the
// Error that cancelled it, and the failure with the job's end.
func appendJobStory(t *testing.T, store protocol.Store, id string, spec *job.Spec) {
	t.Helper()
	t0 := float64(time.Now().Add(-time.Minute).UnixMilli()) / 1000
	n := 0
	add := func(typ protocol.Type, payload any) {
		t.Helper()
		m, err := protocol.NewMessage(typ, id, id, payload)
		if err != nil {
			t.Fatal(err)
		}
		m.Timestamp = t0 + 0.2*float64(n)
		n++
		if _, err := store.Append(context.Background(), m); err != nil {
			t.Fatalf("appending %s: %v", typ, err)
		}
	}
	raw, _ := json.Marshal(spec)
	add(protocol.TypeRequest, &protocol.Request{Kind: protocol.KindJob, Job: raw})
	add(protocol.TypeAck, &protocol.StatePayload{State: protocol.Acknowledged, Job: &protocol.JobInfo{ID: id, Native: "4242", State: "QUEUED"}})
	add(protocol.TypeStart, &protocol.StatePayload{State: protocol.Started, Job: &protocol.JobInfo{ID: id, Native: "4242", State: "RUNNING"}})
	warn := &protocol.Verdict{State: protocol.Warning, Detector: "divergence", Message: "residual (printed) grows: ×1e+04 over 5 samples", Severity: 0.5, Action: protocol.ActionAnnotate}
	stop := &protocol.Verdict{State: protocol.Error, Detector: "divergence", Message: "residual (printed) diverges: |residual| grew ×1e+08 over 9 samples to 1e+09", Severity: 1, Action: protocol.ActionInterrupt}
	for i := 1; i <= 9; i++ {
		now := time.Now()
		line := fmt.Sprintf("residual = %d", pow10(i))
		add(protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Time: now, Line: line, JobSeq: int64(i)}})
		var v *protocol.Verdict
		switch i {
		case 5:
			v = warn
		case 9:
			v = stop
		}
		add(protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsTelemetry, Time: now,
			Sample: &protocol.Sample{Name: "residual", Value: float64(pow10(i)), Source: protocol.FromStdout}}, Verdict: v})
	}
	add(protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonInterrupted, Error: "hot-fix: divergence: " + stop.Message, Verdict: stop,
		Result: &protocol.Result{Status: protocol.StatusInterrupted, DurationS: 1.84, WorkspaceOK: true, Job: &protocol.JobInfo{
			ID: id, Native: "4242", State: "CANCELLED", Reason: "perception: divergence: " + stop.Message, Signal: "SIGTERM"}}})
}

func pow10(i int) int64 {
	n := int64(1)
	for range i {
		n *= 10
	}
	return n
}

// TestDashboardJobs drives the Jobs page in a real headless Chromium against a test double of
// the /v1/jobs endpoints (fakeJobs) and a real job operation in the server's log: the page is
// offered, lists the jobs newest first with states that tell a cancel by perception or by a
// user from a failure, submits a job from the form (memory and wall time in bytes and ns),
// cancels a running one, and opens a job's live story, whose card reads as a job: its command,
// scheduler and pid, its state changes, the verdicts on its chart, "cancelled by perception"
// and why, and how it ended. The layout holds at 800 and 1920 px.
func TestDashboardJobs(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		c.Kernels = func(context.Context) []server.KernelInfo { return []server.KernelInfo{{Name: "python", Version: "3"}} }
		c.Prewarm = nil
	})
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	code := func(n int) *int { return &n }
	const diverged = "local-20260101-120000-000001-diverged"
	divSpec := &job.Spec{Name: "diverging", Command: []string{"bash", "-c", `for i in $(seq 1 20); do echo "residual = $((10**i))"; sleep 0.2; done`},
		Workspace: "/srv/jobs/" + diverged, Resources: job.Resources{Cores: 2, MemoryBytes: 1 << 30, WallTime: 10 * time.Minute}, Hotfix: protocol.HotfixOnError}
	appendJobStory(t, f.store, diverged, divSpec)
	fj := mountFakeJobs(t, f, []fakeJob{
		{Status: job.Status{ID: "local-20260101-110000-000001-healthy", Name: "si-scf", State: job.Completed, ExitCode: code(0), Native: "3101",
			Submitted: ago(50 * time.Minute), Started: ago(50 * time.Minute), Ended: ago(46 * time.Minute),
			Spec: &job.Spec{Script: "#!/bin/bash\npw.x -in si.in > si.out\n", Follow: []string{"si.out"}}}, Scheduler: "local"},
		{Status: job.Status{ID: "slurm-20260101-113000-000002-user", Name: "md-run", State: job.Cancelled, Reason: "wrong input deck", Native: "77",
			Submitted: ago(30 * time.Minute), Started: ago(29 * time.Minute), Ended: ago(25 * time.Minute), Signal: "SIGTERM",
			Spec: &job.Spec{Command: []string{"lmp", "-in", "in.melt"}}}, Scheduler: "slurm"},
		{Status: job.Status{ID: "local-20260101-114000-000003-failed", Name: "broken", State: job.Failed, ExitCode: code(2), Reason: "exit code 2",
			Submitted: ago(20 * time.Minute), Started: ago(20 * time.Minute), Ended: ago(19 * time.Minute), Spec: &job.Spec{Command: []string{"false"}}}, Scheduler: "local"},
		{Status: job.Status{ID: diverged, Name: "diverging", State: job.Cancelled, Reason: "perception: divergence: residual (printed) diverges", Signal: "SIGTERM", Native: "4242",
			Submitted: ago(time.Minute), Started: ago(time.Minute), Ended: ago(58 * time.Second), Spec: divSpec}, Scheduler: "local", Session: diverged, Operation: diverged},
		{Status: job.Status{ID: "local-20260101-120500-000005-running", Name: "long-md", State: job.Running, Native: "5150",
			Submitted: ago(10 * time.Second), Started: ago(9 * time.Second), Spec: &job.Spec{Command: []string{"sleep", "3600"}}}, Scheduler: "local"},
	})
	ctx := browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/#jobs")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the Jobs page is offered and shown", `shown("#nav-jobs") && shown("#page-jobs")`)
	waitJS(t, ctx, "the jobs are listed", `document.querySelectorAll("#job-rows tr").length === 5`)
	rows := evalString(t, ctx, `[...document.querySelectorAll("#job-rows tr")].map((r) => r.innerText.replaceAll("\n", " ").replaceAll("\t", " | ")).join("\n")`)
	t.Logf("the list:\n%s", rows)
	lines := strings.Split(rows, "\n")
	for i, want := range [][]string{
		{"long-md", "sleep 3600", "running", "local", "pid 5150", "Cancel"},
		{"diverging", "cancelled by perception", "divergence: residual", "SIGTERM"},
		{"broken", "false", "failed", "2"},
		{"md-run", "lmp -in in.melt", "cancelled", "wrong input deck", "slurm", "job 77"},
		{"si-scf", "pw.x -in si.in > si.out", "completed", "| 0 |", "4 min"},
	} {
		for _, w := range want {
			if i >= len(lines) || !strings.Contains(lines[i], w) {
				t.Errorf("row %d lacks %q:\n%s", i, w, rows)
			}
		}
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#job-rows .badge.s-failed").length)`); n != "1" {
		t.Errorf("%s rows show a failure; only the job that exited 2 failed", n)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#job-rows button.cancel").length)`); n != "1" {
		t.Errorf("%s Cancel buttons; only the running job has one", n)
	}
	fits(t, ctx, 1920, "the Jobs page")
	screenshot(t, ctx, "jobs.png")
	fits(t, ctx, 800, "the Jobs page")
	screenshot(t, ctx, "jobs-800.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatal(err)
	}

	// Submit from the form: a script, 1.5 GiB, 90 minutes, a followed file, on Slurm.
	evalString(t, ctx, `(() => {
		const set = (sel, v) => { document.querySelector(sel).value = v; };
		set("#job-as", "script"); set("#job-text", "pw.x -in scf.in > scf.out\n"); set("#job-name", "al-scf"); set("#job-cores", "4");
		set("#job-mem", "1.5"); set("#job-mem-unit", String(1 << 30)); set("#job-wall", "90"); set("#job-wall-unit", "60");
		set("#job-follow", "scf.out, pw.log"); set("#job-profile", "qe"); set("#job-hotfix", "on_warning"); set("#job-scheduler", "slurm");
		return "";
	})()`)
	jsClick(t, ctx, `#job-form button[type="submit"]`)
	waitJS(t, ctx, "the submitted job is listed, queued", `document.querySelector("#job-submitted").innerText.includes("slurm-fake-6") && [...document.querySelectorAll("#job-rows tr")][0].innerText.includes("al-scf") && [...document.querySelectorAll("#job-rows tr")][0].innerText.includes("queued")`)
	fj.mu.Lock()
	got, _ := json.Marshal(fj.submitted)
	fj.mu.Unlock()
	want := `[{"follow":["scf.out","pw.log"],"hotfix":"on_warning","name":"al-scf","profile":"qe","resources":{"cores":4,"memory_bytes":1610612736,"wall_time_ns":5400000000000},"scheduler":"slurm","script":"pw.x -in scf.in \u003e scf.out\n"}]`
	if string(got) != want {
		t.Errorf("POST /v1/jobs got\n%s\nwant\n%s", got, want)
	}
	// A command is split into words, quotes kept together.
	evalString(t, ctx, `(() => { document.querySelector("#job-as").value = "command"; document.querySelector("#job-text").value = "python3 -c 'print(1 + 1)'"; document.querySelector("#job-name").value = ""; return ""; })()`)
	jsClick(t, ctx, `#job-form button[type="submit"]`)
	waitJS(t, ctx, "the command job is listed", `document.querySelectorAll("#job-rows tr").length === 7`)
	fj.mu.Lock()
	if cmd := fmt.Sprint(fj.submitted[1]["command"]); cmd != "[python3 -c print(1 + 1)]" {
		t.Errorf("the command was sent as %s", cmd)
	}
	fj.mu.Unlock()

	// Cancel the running job from its row.
	jsClick(t, ctx, `#job-rows tr[data-job="local-20260101-120500-000005-running"] button.cancel`)
	waitJS(t, ctx, "the cancelled job is shown cancelled, by the dashboard", `document.querySelector('#job-rows tr[data-job="local-20260101-120500-000005-running"]').innerText.includes("cancelled from the dashboard")`)
	fj.mu.Lock()
	if why := fj.cancelled["local-20260101-120500-000005-running"]; why != "cancelled from the dashboard" {
		t.Errorf("cancel sent why %q", why)
	}
	fj.mu.Unlock()

	// The row opens the job's live story: its card reads as a job.
	jsClick(t, ctx, `#job-rows tr[data-job="`+diverged+`"] td.task a`)
	waitJS(t, ctx, "the job's story opens", `shown("#page-lab") && location.hash.startsWith("#lab/`+diverged+`")`)
	card := `(document.querySelector("#op-` + diverged + `") || {innerText: ""}).innerText`
	waitJS(t, ctx, "the job's card ends", card+`.includes("cancelled by perception after")`)
	text := evalString(t, ctx, card)
	t.Logf("the card:\n%s", text)
	for _, w := range []string{
		"diverging\njob\n", `bash -c 'for i in $(seq 1 20)`, "2 cores · 1.0 GiB memory · 10 min wall time · perception cancels it on an Error",
		"job " + diverged + " · local (pid 4242) · CANCELLED", "[job submitted: QUEUED]", "[job started: RUNNING]", "residual = 1000000000",
		"Warning · divergence: residual (printed) grows", "Error · divergence: residual (printed) diverges",
		"cancelled by perception after 1.8 s: divergence: residual (printed) diverges: |residual| grew ×1e+08 over 9 samples to 1e+09 · killed by SIGTERM",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("the job's card lacks %q", w)
		}
	}
	if got := evalString(t, ctx, `document.querySelector("#op-`+diverged+` .badge").textContent + " " + document.querySelector("#op-`+diverged+` .badge").className`); got != "cancelled by perception badge s-perception" {
		t.Errorf("the card's badge: %q", got)
	}
	waitJS(t, ctx, "its chart marks the Warning and the Error", `document.querySelectorAll('#op-`+diverged+` figure.chart[data-series="residual"] line.mark.Warning').length === 1 && document.querySelectorAll('#op-`+diverged+` figure.chart[data-series="residual"] line.mark.Error').length === 1`)
	screenshot(t, ctx, "job.png")
}
