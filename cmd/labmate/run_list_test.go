package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/report"
	"github.com/labmate/labmate/llm/llmtest"
)

// Issue 19, part 7: the provider fails for good (HTTP 529, overloaded, through every retry) in
// the middle of a run; labmate run list and show say so; --resume without --model continues the
// run with the model it worked with, without planning again.
func TestRunProviderErrorListShowResume(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	overloaded := llmtest.Fail(529, "Overloaded")
	overloaded.RetryAfter = 10 * time.Millisecond
	srv := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "x", Steps: []agent.Step{{Title: "compute x", Action: "41 + 1", Tool: agent.ToolRunCode, Checkpoint: "x = 42"}}}),
		overloaded, overloaded, overloaded, overloaded, // the first call and its three retries
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: "x = 41 + 1\nprint('x =', x)"})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "x = 42", "summary": "x = 42"}),
		call(agent.ToolFinalAnswer, `{"answer": "x = 42"}`),
	)
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+data, "XDG_CONFIG_HOME="+t.TempDir())
	out, errOut, code := labmateEnv(t, env, dir, "", "run", "--json", "What is 41 + 1?")
	evs := ndjson(t, out)
	last := evs[len(evs)-1]
	if code != 1 || last.Type != agent.EventStop || last.Stop.Reason != agent.StopError || !last.Stop.Resumable ||
		!strings.Contains(last.Stop.Error, "HTTP 529") {
		t.Fatalf("exit %d, last event %+v; want exit 1 after a resumable error stop naming HTTP 529\n%s", code, last.Stop, errOut)
	}
	id := last.RunID

	out, errOut, code = labmateEnv(t, env, dir, "", "run", "list", "--json")
	var runs []agent.RunSummary
	if err := json.Unmarshal([]byte(out), &runs); err != nil || code != 0 {
		t.Fatalf("run list --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if len(runs) != 1 || runs[0].ID != id || runs[0].Goal != "What is 41 + 1?" || runs[0].Model != "openai:fake-model" ||
		runs[0].Stop != agent.StopError || !runs[0].Resumable || runs[0].Tokens == 0 {
		t.Errorf("run list --json = %+v", runs)
	}
	out, _, _ = labmateEnv(t, env, dir, "", "run", "list")
	if !strings.Contains(out, id) || !strings.Contains(out, "error, resumable") || !strings.Contains(out, "openai:fake-model") {
		t.Errorf("run list:\n%s", out)
	}
	out, _, code = labmateEnv(t, env, dir, "", "run", "show", id)
	for _, want := range []string{"run " + id + ": What is 41 + 1?", "model openai:fake-model, agent mode, python kernel",
		"[ ] 1. compute x [run_code] — check: x = 42", "operations: 0", "outcome: stopped (error)", "continue with: labmate run --resume " + id} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("run show (exit %d) lacks %q:\n%s", code, want, out)
		}
	}

	// No LABMATE_MODEL and no config file: the run remembers its model.
	noModel := append(env, "LABMATE_MODEL=")
	out, errOut, code = labmateEnv(t, noModel, t.TempDir(), "", "run", "--resume", id)
	if code != 0 || out != "x = 42\n" || !strings.Contains(errOut, "resuming run "+id+" with openai:fake-model") {
		t.Fatalf("resume: exit %d, stdout %q\n%s", code, out, errOut)
	}
	if srv.Remaining() != 0 || len(srv.Calls()) != 8 {
		t.Errorf("%d turns unused, %d calls; want the 8 scripted (planning again would have run out)", srv.Remaining(), len(srv.Calls()))
	}

	out, _, code = labmateEnv(t, noModel, dir, "", "run", "show", "--json", id)
	var rec report.Record
	if err := json.Unmarshal([]byte(out), &rec); err != nil || code != 0 {
		t.Fatalf("run show --json: exit %d, %v: %s", code, err, out)
	}
	if rec.State.Stop.Reason != agent.StopAnswered || rec.State.Answer.Text != "x = 42" || len(rec.Operations) != 1 ||
		!rec.Operations[0].OK || rec.Operations[0].Step != 0 || rec.Started.After(rec.Updated) {
		t.Errorf("run show --json = %+v, operations %+v", rec.State.Stop, rec.Operations)
	}
	out, _, _ = labmateEnv(t, noModel, dir, "", "run", "show", id)
	for _, want := range []string{"[x] 1. compute x", "operations: 1", "step 1, attempt 1: " + rec.Operations[0].OperationID + " ok in ", "outcome: answered\nx = 42"} {
		if !strings.Contains(out, want) {
			t.Errorf("run show lacks %q:\n%s", want, out)
		}
	}
	_, errOut, code = labmateEnv(t, noModel, dir, "", "run", "show", "no-such-run")
	if code != 2 || !strings.Contains(errOut, `unknown run: "no-such-run"`) {
		t.Errorf("run show no-such-run: exit %d, %q", code, errOut)
	}
}
