package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
)

// labmate run killed (SIGKILL) during step 2: --resume restores the Python kernel's variables
// from step 1, so that step 2, run again, computes with x.
func TestResumeRestoresVariables(t *testing.T) {
	data := t.TempDir()
	step2 := "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('y =', x + 1)"
	srv := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "x and y", Steps: []agent.Step{
			{Title: "x", Action: "set x", Tool: agent.ToolRunCode, Checkpoint: "x = 41"},
			{Title: "y", Action: "y = x + 1", Tool: agent.ToolRunCode, Checkpoint: "y = 42"},
		}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: "x = 41\nprint('x =', x)"})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "x = 41", "summary": "x = 41"}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: step2})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "y = 42", "summary": "y = 42"}),
		call(agent.ToolFinalAnswer, `{"answer": "y = 42"}`),
	)
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+data)
	cmd := exec.Command(bin, "run", "--json", "compute x, then y")
	cmd.Env, cmd.Dir = append(os.Environ(), env...), t.TempDir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	var id string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev := &agent.Event{}
		if err := json.Unmarshal(sc.Bytes(), ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		id = ev.RunID
		if ev.Type == agent.EventOperation && ev.Message.Type == "operation_start" && ev.Step == 1 {
			cmd.Process.Kill()
			break
		}
	}
	cmd.Wait()
	ws := filepath.Join(data, "labmate", "workspaces", "run-"+id)
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := labmateEnv(t, env, t.TempDir(), "", "run", "--json", "--resume", id)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, errOut)
	}
	evs := ndjson(t, out)
	var restored *agent.KernelState
	var output []string
	for _, e := range evs {
		switch {
		case e.Type == agent.EventKernelState:
			restored = e.KernelState
		case e.Type == agent.EventToolResult && e.Tool.Operation != nil:
			output = append(output, e.Tool.Operation.Output)
		}
	}
	if restored == nil || restored.Error != "" || !slices.Contains(restored.Names, "x") {
		t.Errorf("the resume restored %+v; want x", restored)
	}
	if len(output) != 1 || !strings.Contains(output[0], "y = 42") {
		t.Errorf("step 2 after the resume printed %q, want y = 42", output)
	}
	if last := evs[len(evs)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered {
		t.Errorf("the resumed run ended with %+v", last.Stop)
	}
}
