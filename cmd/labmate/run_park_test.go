package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/llm/llmtest"
)

// labmate run parks a run that waits for its job (exit 4, saying how it goes on); labmate run
// --resume ID waits for the job, then the run goes on with the job's outcome and answers.
func TestRunParkResume(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	ws, data := t.TempDir(), t.TempDir()
	srv := llmtest.NewServer(t,
		agenttest.Plan("simulate", "submit the simulation as a job and wait for its result", "the job prints result"),
		agenttest.SubmitJob("sim", "while [ ! -e go ]; do sleep 0.05; done\necho result=42"),
		agenttest.JobCall(agent.ToolWaitJob),
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			m := c.Request.Messages
			if got := m[len(m)-1].Content; !strings.Contains(got, " ended: COMPLETED in ") || !strings.Contains(got, "[stdout] result=42") {
				t.Errorf("wait_job gave the resumed run:\n%s", got)
			}
			return agenttest.FinalAnswer("result = 42")
		}},
	)
	env := append(fakeModelEnv(t, srv), "XDG_DATA_HOME="+data)
	_, errOut, code := labmateEnv(t, env, ws, "", "run", "--workspace", ws, "Run the simulation and report its result")
	m := regexp.MustCompile(`run (\S+) is parked until job (local-\S+) ends; continue it with: labmate run --resume `).FindStringSubmatch(errOut)
	if code != 4 || m == nil {
		t.Fatalf("exit %d, want 4 saying the run is parked and how it goes on:\n%s", code, errOut)
	}
	id := m[1]

	cmd := exec.Command(bin, "run", "--resume", id)
	cmd.Env, cmd.Dir = append(os.Environ(), env...), ws
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer kill.Stop()
	var rest strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "waiting for job "+m[2]) {
			if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("labmate run --resume: %v\n%s", err, rest.String())
	}
	if !strings.Contains(rest.String(), "job "+m[2]+" COMPLETED") || strings.TrimSpace(stdout.String()) != "result = 42" {
		t.Errorf("the resumed run: stdout %q, stderr:\n%s", stdout.String(), rest.String())
	}
}
