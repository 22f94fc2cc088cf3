package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
)

// Must hold (issue 19): kill -9 of labmate serve during an agent run. After a restart on the
// same data directory the run's events up to the kill are all there, the run ends with a
// run_end that says the server stopped and names the command that resumes it, and that
// command finishes the run from its checkpoint.
func TestServeRunKilledAndResumed(t *testing.T) {
	data := t.TempDir()
	stepA := "a = 1\nprint('a =', a)"
	stepB := "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('b =', 2)"
	srv := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "a and b", Steps: []agent.Step{
			{Title: "a", Action: "compute a", Tool: agent.ToolRunCode, Checkpoint: "a = 1"},
			{Title: "b", Action: "compute b", Tool: agent.ToolRunCode, Checkpoint: "b = 2"},
		}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: stepA})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "a = 1", "summary": "a = 1"}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: stepB})),
		// After the resume: step b's operation again, its review and the answer.
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "b = 2", "summary": "b = 2"}),
		call(agent.ToolFinalAnswer, `{"answer": "a = 1, b = 2"}`),
	)
	env := fakeModelEnv(t, srv)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cmd, url := serve(t, data, "--no-token")
	resp, body := request(t, http.MethodPost, url, "/v1/runs", `{"goal": "compute a and b", "kernel": "python"}`)
	var started struct{ ID string }
	if err := json.Unmarshal([]byte(body), &started); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d %s", resp.StatusCode, body)
	}
	id := started.ID

	// Follow the run until step b's cell runs, then kill the server: no chance to write anything more.
	events, err := http.Get(url + "/v1/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.AfterFunc(60*time.Second, func() { events.Body.Close() })
	defer deadline.Stop()
	var before []string
	sc := bufio.NewScanner(events.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		before = append(before, sc.Text())
		ev := &agent.Event{}
		if err := json.Unmarshal(sc.Bytes(), ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if ev.Type == agent.EventOperation && ev.Message.Type == protocol.TypeStart && ev.Step == 1 {
			cmd.Process.Kill() // SIGKILL
			break
		}
	}
	cmd.Wait()
	events.Body.Close()
	if len(before) == 0 || !strings.Contains(before[len(before)-1], `"operation_start"`) {
		t.Fatalf("the run never reached step b's cell; it streamed %d events", len(before))
	}

	_, url = serve(t, data, "--no-token")
	resp, body = request(t, http.MethodGet, url, "/v1/runs/"+id+"/events", "")
	// The events read before the kill, then any the server logged before it died (the kill
	// lands while the cell runs), then the run's end.
	after := strings.Split(strings.TrimSpace(body), "\n")
	if resp.StatusCode != http.StatusOK || len(after) < len(before)+1 {
		t.Fatalf("after the restart: %d, %d lines, want the %d events before the kill and the run's end:\n%s", resp.StatusCode, len(after), len(before), body)
	}
	if diff := cmp.Diff(before, after[:len(before)]); diff != "" {
		t.Errorf("the events up to the kill changed (-before +after):\n%s", diff)
	}
	for i, line := range after[len(before) : len(after)-1] {
		ev := &agent.Event{}
		if err := json.Unmarshal([]byte(line), ev); err != nil || ev.Seq != int64(len(before)+i+1) || ev.Step != 1 {
			t.Errorf("after the events read before the kill: %s, want event %d of step b", line, len(before)+i+1)
		}
	}
	var end protocol.RunEnd
	if err := json.Unmarshal([]byte(after[len(after)-1]), &end); err != nil {
		t.Fatal(err)
	}
	want := protocol.RunEnd{Reason: protocol.ReasonServerRestart, Resumable: true, Resume: "labmate run --resume " + id + " --data " + data,
		Error: "the server stopped while the run ran; its checkpoint continues it: labmate run --resume " + id + " --data " + data}
	if diff := cmp.Diff(want, end); diff != "" {
		t.Errorf("the run's end (-want +got):\n%s", diff)
	}
	resp, body = request(t, http.MethodGet, url, "/v1/runs", "")
	var runs []struct {
		ID    string
		Task  *agent.Task
		State protocol.State
	}
	if err := json.Unmarshal([]byte(body), &runs); err != nil || len(runs) != 1 || runs[0].ID != id || runs[0].State != protocol.Ended ||
		runs[0].Task == nil || runs[0].Task.Goal != "compute a and b" {
		t.Errorf("GET /v1/runs after the restart: %d %s", resp.StatusCode, body)
	}

	// The command the run_end names continues the run where it stood.
	if err := os.WriteFile(filepath.Join(data, "workspaces", "run-"+id, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := labmateEnv(t, env, t.TempDir(), "", "run", "--json", "--resume", id, "--data", data)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", end.Resume, code, errOut)
	}
	evs := ndjson(t, out)
	if codes := requests(t, evs); len(codes) != 1 || codes[0] != stepB {
		t.Errorf("the resumed run ran %q, want only step b's cell (cut short by the kill)", codes)
	}
	if last := evs[len(evs)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered || last.Stop.Result.Text != "a = 1, b = 2" {
		t.Errorf("the resumed run ended with %+v", last.Stop)
	}
}
