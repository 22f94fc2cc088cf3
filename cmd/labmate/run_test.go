package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
)

// fakeModelEnv points labmate at the fake model server, with a memory of its own.
func fakeModelEnv(t *testing.T, srv *llmtest.Server) []string {
	return []string{"LABMATE_MODEL=openai:fake-model", "OPENAI_BASE_URL=" + srv.OpenAIBaseURL(), "OPENAI_API_KEY=test-key",
		"LABMATE_MEMORY=" + filepath.Join(t.TempDir(), "memory.db")}
}

func ndjson(t *testing.T, out string) []*agent.Event {
	t.Helper()
	var evs []*agent.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		ev := &agent.Event{}
		if err := json.Unmarshal([]byte(line), ev); err != nil {
			t.Fatalf("not an event: %v: %s", err, line)
		}
		evs = append(evs, ev)
	}
	// The run's operations obey the protocol's state machine.
	testutil.Replay(t, func(yield func(*protocol.EnhancedMessage) bool) {
		for _, e := range evs {
			if e.Type == agent.EventOperation && !yield(e.Message) {
				return
			}
		}
	})
	return evs
}

// requests are the codes of the run_code operations among evs.
func requests(t *testing.T, evs []*agent.Event) []string {
	var codes []string
	for _, e := range evs {
		if e.Type == agent.EventOperation && e.Message.Type == "operation_request" {
			var req struct{ Code string }
			if err := json.Unmarshal(e.Message.Payload, &req); err != nil {
				t.Fatal(err)
			}
			codes = append(codes, req.Code)
		}
	}
	return codes
}

func call(name, args string) llmtest.Turn { return llmtest.CallTool(name, args) }

func jsonArgs(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Must hold 7: labmate run is killed (SIGKILL) in the middle of an operation; --resume completes
// the run without repeating the operations it had finished.
func TestRunKilledAndResumed(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	stepA := "with open('count.txt', 'a') as f:\n    f.write('a\\n')\na = 1\nprint('a =', a)"
	stepB := "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('b =', 2)"
	srv := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "a and b", Steps: []agent.Step{
			{Title: "a", Action: "compute a", Tool: agent.ToolRunCode, Checkpoint: "a = 1"},
			{Title: "b", Action: "compute b", Tool: agent.ToolRunCode, Checkpoint: "b = 2"},
		}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: stepA})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "a = 1", "summary": "a = 1"}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: stepB})),
		// After the resume: the interrupted operation runs again, then the review and the answer.
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if m := c.Request.Messages[0].Content; !strings.Contains(m, "b = 2") {
				t.Errorf("the review after the resume lacks the output b = 2:\n%s", m)
			}
			return llmtest.JSON(map[string]string{"decision": "accept", "reasons": "b = 2", "summary": "b = 2"})
		}},
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if m := c.Request.Messages[0].Content; !strings.Contains(m, "a: a = 1") || !strings.Contains(m, "b: b = 2") {
				t.Errorf("the final call lacks the established results:\n%s", m)
			}
			return call(agent.ToolFinalAnswer, `{"answer": "a = 1, b = 2"}`)
		}},
	)
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+data)
	cmd := exec.Command(bin, "run", "--json", "compute a and b")
	cmd.Env, cmd.Dir = append(os.Environ(), env...), dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var first []*agent.Event
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	killed := false
	deadline := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		ev := &agent.Event{}
		if err := json.Unmarshal(sc.Bytes(), ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		first = append(first, ev)
		if ev.Type == agent.EventOperation && ev.Message.Type == "operation_start" && ev.Step == 1 {
			cmd.Process.Kill() // SIGKILL: no chance to clean up or checkpoint anything more
			killed = true
			break
		}
	}
	cmd.Wait()
	if !killed {
		t.Fatalf("the run never reached step 2's operation; stderr:\n%s", stderr.String())
	}
	id := first[0].RunID
	if codes := requests(t, first); len(codes) != 2 {
		t.Fatalf("before the kill: %d operations, want 2", len(codes))
	}
	// The model's code worked in a workspace of its own under the data directory, not in the
	// current directory.
	ws := filepath.Join(data, "labmate", "workspaces", "run-"+id)
	if !strings.Contains(stderr.String(), "labmate run: workspace "+ws+"\n") {
		t.Errorf("the workspace %s was not printed; stderr:\n%s", ws, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "count.txt")); err == nil {
		t.Error("the run wrote count.txt in the current directory")
	}
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := labmateEnv(t, env, t.TempDir(), "", "run", "--json", "--resume", id) // from elsewhere: the run's workspace is kept
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, errOut)
	}
	evs := ndjson(t, out)
	if evs[0].Type != agent.EventStart || !evs[0].Start.Resumed || evs[0].Seq <= first[len(first)-1].Seq {
		t.Errorf("the resumed run starts with %+v (seq after %d)", evs[0], first[len(first)-1].Seq)
	}
	codes := requests(t, evs)
	if len(codes) != 1 || codes[0] != stepB {
		t.Errorf("after the resume the operations were %q, want only step b's (cut short by the kill)", codes)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "count.txt")); string(b) != "a\n" {
		t.Errorf("count.txt = %q: step a's operation ran again", b)
	}
	last := evs[len(evs)-1]
	if last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered || last.Stop.Result.Text != "a = 1, b = 2" {
		t.Errorf("the resumed run ended with %+v", last.Stop)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d turns unused", srv.Remaining())
	}
	_, errOut, code = labmateEnv(t, env, dir, "", "run", "--resume", id)
	if code == 0 || !strings.Contains(errOut, "already ended") {
		t.Errorf("resuming a finished run: exit %d, %q", code, errOut)
	}
}

// labmate run in a terminal: progress on stderr, the answer on stdout, --stats at the end.
func TestRunTextProgressAndStats(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "x", Steps: []agent.Step{{Title: "compute x", Action: "41 + 1", Tool: agent.ToolRunCode, Checkpoint: "x = 42"}}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: "x = 41 + 1\nprint('x =', x)"})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "x = 42 as required", "summary": "x = 42"}),
		call(agent.ToolFinalAnswer, `{"answer": "x = 42"}`),
	)
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+t.TempDir())
	out, errOut, code := labmateEnv(t, env, dir, "", "run", "--stats", "What is 41 + 1?")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"labmate: run ", "plan: x", "1. compute x [run_code] — check: x = 42", "run_code (python, 2 lines)", "  │ x = 42", "  ok in ", "reflect: step 1: accept — x = 42 as required", "labmate: answered in "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "x = 42" || !strings.Contains(out, "MODULE") || !strings.Contains(out, "reflect") || !strings.Contains(out, "operations 1, hot-fixes 0, repairs 0, re-plans 0") {
		t.Errorf("stdout is not the answer and the stats table:\n%s", out)
	}
	for _, m := range []string{"plan", "code", "reflect", "all"} {
		if !strings.Contains(out, m+" ") {
			t.Errorf("the stats table lacks %s:\n%s", m, out)
		}
	}
}

// The baseline modes and the failures that stop labmate run before it starts.
func TestRunModesAndErrors(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewServer(t, llmtest.Text("42"))
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+t.TempDir())
	out, errOut, code := labmateEnv(t, env, dir, "", "run", "--mode", "direct", "--json", "What is 6 * 7?")
	evs := ndjson(t, out)
	if code != 0 || evs[len(evs)-1].Stop.Result.Text != "42" || len(srv.Calls()[0].Request.Tools) != 0 {
		t.Fatalf("direct: exit %d, %s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, `give the task as one argument`},
		{[]string{"run", "--mode", "magic", "x"}, `--mode "magic": choose agent, direct or codeact`},
		{[]string{"run", "--kernel", "fortran", "x"}, `unknown kernel "fortran"`},
		{[]string{"run", "--resume", "no-such-run"}, `unknown run: "no-such-run"`},
		{[]string{"run", "--model", "nope", "x"}, `model spec "nope"`},
	} {
		_, errOut, code := labmateEnv(t, env, dir, "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, code, errOut, c.want)
		}
	}
	down := llmtest.NewServer(t)
	down.Close()
	_, errOut, code = labmateEnv(t, append(fakeModelEnv(t, down), "XDG_DATA_HOME="+t.TempDir()), dir, "", "run", "x")
	if code != 2 || !strings.Contains(errOut, down.OpenAIBaseURL()) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("provider down: exit %d, stderr %q; want one line naming the URL", code, errOut)
	}
}
