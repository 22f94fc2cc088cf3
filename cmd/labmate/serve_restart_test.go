package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/browsertest"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
)

// Must hold (issue 19): kill -9 of labmate serve during an agent run. After a restart on the
// same data directory with the model, the run's events up to the kill are all there, the run
// ends with a run_end that says the server stopped, and the server resumes it by itself from its
// checkpoint, to its answer: GET /v1/runs/ID/events tells it as one gap-free story. After a
// restart without a model, a run killed so stays resumable, its run_end says how, and
// labmate run --resume finishes it.
func TestServeRunKilledAndResumed(t *testing.T) {
	data := t.TempDir()
	stepA := "a = 1\nprint('a =', a)"
	stepB := "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('b =', 2)"
	stepC := "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('c =', 3)"
	srv := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "a and b", Steps: []agent.Step{
			{Title: "a", Action: "compute a", Tool: agent.ToolRunCode, Checkpoint: "a = 1"},
			{Title: "b", Action: "compute b", Tool: agent.ToolRunCode, Checkpoint: "b = 2"},
		}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: stepA})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "a = 1", "summary": "a = 1"}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: stepB})),
		// After the restart, which resumes the run: step b's operation again, its review and the answer.
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "b = 2", "summary": "b = 2"}),
		call(agent.ToolFinalAnswer, `{"answer": "a = 1, b = 2"}`),
		// The second run, killed in its cell, then resumed by labmate run --resume.
		llmtest.JSON(agent.Plan{Goal: "c", Steps: []agent.Step{{Title: "c", Action: "compute c", Tool: agent.ToolRunCode, Checkpoint: "c = 3"}}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: stepC})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "c = 3", "summary": "c = 3"}),
		call(agent.ToolFinalAnswer, `{"answer": "c = 3"}`),
	)
	env := fakeModelEnv(t, srv)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cmd, url := serve(t, data, "--no-token")
	id, before := startAndKill(t, cmd, url, `{"goal": "compute a and b", "kernel": "python"}`, 1)
	if err := os.WriteFile(filepath.Join(data, "workspaces", "run-"+id, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	// Restarted with the model, the server resumes the run: a follower reads it to its answer.
	cmd, url = serve(t, data, "--no-token")
	resp, body := request(t, http.MethodGet, url, "/v1/runs/"+id+"/events", "")
	after := strings.Split(strings.TrimSpace(body), "\n")
	if resp.StatusCode != http.StatusOK || len(after) < len(before)+2 {
		t.Fatalf("after the restart: %d, %d lines, want the %d events before the kill, the run's end and the resumed run:\n%s", resp.StatusCode, len(after), len(before), body)
	}
	if diff := cmp.Diff(before, after[:len(before)]); diff != "" {
		t.Errorf("the events up to the kill changed (-before +after):\n%s", diff)
	}
	type line struct {
		agent.Event
		protocol.RunEnd
	}
	lines := make([]*line, len(after))
	end := -1 // the line of the server_restart run_end
	for i, s := range after {
		lines[i] = &line{}
		if err := json.Unmarshal([]byte(s), lines[i]); err != nil {
			t.Fatalf("%v: %s", err, s)
		}
		if string(lines[i].Type) == string(protocol.TypeRunEnd) && end < 0 {
			end = i
		}
		// One story: each line's seq is its message's in the run's stream, after the one
		// before (the run's checkpoints, and the run_resume between the run's end and the
		// resumed events, take the seqs between them).
		if i > 0 && lines[i].Seq <= lines[i-1].Seq {
			t.Errorf("line %d has seq %d, after %d: %s", i, lines[i].Seq, lines[i-1].Seq, s)
		}
	}
	if end < len(before) {
		t.Fatalf("no run_end after the events read before the kill:\n%s", body)
	}
	for _, l := range lines[len(before):end] {
		if l.Event.Step != 1 {
			t.Errorf("after the events read before the kill: %+v, want an event of step b", l.Event)
		}
	}
	hint := "POST /v1/runs/" + id + "/resume (or the dashboard's Resume), or labmate run --resume " + id + " --data " + data + " while labmate serve is not running"
	want := protocol.RunEnd{Reason: protocol.ReasonServerRestart, Resumable: true, Resume: hint,
		Error: "the server stopped while the run ran; its checkpoint continues it: " + hint}
	if diff := cmp.Diff(want, lines[end].RunEnd); diff != "" {
		t.Errorf("the run's end at the restart (-want +got):\n%s", diff)
	}
	resumed := ndjson(t, strings.Join(after[end+1:], "\n"))
	if first := resumed[0]; first.Type != agent.EventStart || !first.Start.Resumed {
		t.Errorf("the resumed events begin with %+v, want a resumed run_start", first)
	}
	if codes := requests(t, resumed); len(codes) != 1 || codes[0] != stepB {
		t.Errorf("the resumed run ran %q, want only step b's cell (cut short by the kill)", codes)
	}
	if last := resumed[len(resumed)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered || last.Stop.Result.Text != "a = 1, b = 2" {
		t.Errorf("the resumed run ended with %+v", last.Stop)
	}
	runs := listRunsOf(t, url)
	if len(runs) != 1 || runs[0].ID != id || runs[0].State != protocol.Ended || runs[0].End == nil || runs[0].End.Reason != "answered" ||
		runs[0].Task == nil || runs[0].Task.Goal != "compute a and b" {
		t.Errorf("GET /v1/runs after the resumed run answered: %+v", runs)
	}

	// A dashboard (reloaded, in a real Chromium) tells the same story: the events before the
	// kill, the restart, and the resumed run to its answer.
	ctx := browsertest.Start(t, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/#lab/"+id)); err != nil {
		t.Fatal(err)
	}
	const story = `document.querySelector("#stream").innerText`
	browsertest.Wait(t, ctx, "the run's whole story", story+`.includes("a = 1") && `+story+`.includes("ended (server_restart)") && `+
		story+`.includes("cut short: the run ended (server_restart)") && `+story+`.includes("kernel state restored: a") && `+
		story+`.includes("answer: a = 1, b = 2") && !`+story+`.includes("undefined")`)
	browsertest.Screenshot(t, ctx, "run-restarted.png")

	// A second run killed so, and a restart without a model: it stays resumable, saying how.
	id2, _ := startAndKill(t, cmd, url, `{"goal": "compute c", "kernel": "python"}`, 0)
	t.Setenv("LABMATE_MODEL", "")
	cmd, url = serve(t, data, "--no-token")
	_, body = request(t, http.MethodGet, url, "/v1/runs/"+id2+"/events", "")
	after = strings.Split(strings.TrimSpace(body), "\n")
	var end2 protocol.RunEnd
	if err := json.Unmarshal([]byte(after[len(after)-1]), &end2); err != nil {
		t.Fatal(err)
	}
	hint = "POST /v1/runs/" + id2 + "/resume (or the dashboard's Resume) once labmate serve runs with --model, or labmate run --resume " + id2 + " --data " + data + " while labmate serve is not running"
	want = protocol.RunEnd{Reason: protocol.ReasonServerRestart, Resumable: true, Resume: hint,
		Error: "the server stopped while the run ran; its checkpoint continues it: " + hint}
	if diff := cmp.Diff(want, end2); diff != "" {
		t.Errorf("the second run's end after a restart without a model (-want +got):\n%s", diff)
	}
	if resp, body := request(t, http.MethodPost, url, "/v1/runs/"+id2+"/resume", "{}"); resp.StatusCode != http.StatusNotImplemented {
		t.Errorf("POST /v1/runs/ID/resume without a model: %d %s", resp.StatusCode, body)
	}
	for _, r := range listRunsOf(t, url) {
		if r.ID == id2 && (r.State != protocol.Ended || r.End == nil || !r.End.Resumable) {
			t.Errorf("GET /v1/runs without a model: %+v, want the second run ended resumable", r)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()

	// The command the run_end names continues the run where it stood.
	if err := os.WriteFile(filepath.Join(data, "workspaces", "run-"+id2, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := labmateEnv(t, env, t.TempDir(), "", "run", "--json", "--resume", id2, "--data", data)
	if code != 0 {
		t.Fatalf("labmate run --resume %s: exit %d\n%s", id2, code, errOut)
	}
	evs := ndjson(t, out)
	if codes := requests(t, evs); len(codes) != 1 || codes[0] != stepC {
		t.Errorf("the resumed run ran %q, want only step c's cell (cut short by the kill)", codes)
	}
	if last := evs[len(evs)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered || last.Stop.Result.Text != "c = 3" {
		t.Errorf("the resumed run ended with %+v", last.Stop)
	}
}

// startAndKill posts a run to the server cmd serves at url, follows it until the cell of plan
// step step starts, and kills the server (SIGKILL: no chance to write anything more). It
// returns the run's id and the lines read.
func startAndKill(t *testing.T, cmd *exec.Cmd, url, task string, step int) (string, []string) {
	t.Helper()
	resp, body := request(t, http.MethodPost, url, "/v1/runs", task)
	var started struct{ ID string }
	if err := json.Unmarshal([]byte(body), &started); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d %s", resp.StatusCode, body)
	}
	lines := readEvents(t, url, started.ID, func(ev *agent.Event) bool {
		if ev.Type == agent.EventOperation && ev.Message.Type == protocol.TypeStart && ev.Step == step {
			cmd.Process.Kill() // SIGKILL
			return false
		}
		return true
	})
	cmd.Wait()
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], `"operation_start"`) {
		t.Fatalf("the run never reached step %d's cell; it streamed %d events", step, len(lines))
	}
	return started.ID, lines
}

// readEvents reads run id's events from the server at url, each decoded for more to say
// whether to read on, and returns the lines read (within a minute).
func readEvents(t *testing.T, url, id string, more func(*agent.Event) bool) []string {
	t.Helper()
	events, err := http.Get(url + "/v1/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	deadline := time.AfterFunc(60*time.Second, func() { events.Body.Close() })
	defer deadline.Stop()
	var lines []string
	sc := bufio.NewScanner(events.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		ev := &agent.Event{}
		if err := json.Unmarshal(sc.Bytes(), ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if !more(ev) {
			break
		}
	}
	return lines
}

type runRow struct {
	ID    string
	Task  *agent.Task
	State protocol.State
	End   *protocol.RunEnd
}

func listRunsOf(t *testing.T, url string) []runRow {
	t.Helper()
	resp, body := request(t, http.MethodGet, url, "/v1/runs", "")
	var runs []runRow
	if err := json.Unmarshal([]byte(body), &runs); err != nil {
		t.Fatalf("GET /v1/runs: %d %s", resp.StatusCode, body)
	}
	return runs
}
