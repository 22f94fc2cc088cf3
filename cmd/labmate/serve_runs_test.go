package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
)

// labmate serve --model runs agent tasks posted to /v1/runs and streams their events.
func TestServeRunsAgent(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("42"),
		// An agent-mode run gets the memory and knowledge tools, as labmate run does.
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			for _, name := range []string{"search_memory", "search_docs", "fetch_url"} {
				if !strings.Contains(c.Request.System, name) {
					t.Errorf("a server run's planner is not told of %s:\n%s", name, c.Request.System)
				}
			}
			return llmtest.JSON(agent.Plan{Goal: "dt", Steps: []agent.Step{{Title: "look up", Action: "search memory", Tool: "search_memory", Checkpoint: "a bound on dt"}}})
		}},
		call("search_memory", `{"query": "explicit Euler dt"}`),
		call(agent.ToolFinalAnswer, `{"answer": "nothing recorded yet"}`),
	)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--prewarm", "", "--no-token")
	cmd.Env = append(os.Environ(), fakeModelEnv(t, srv)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatal("serve printed nothing")
	}
	_, rest, _ := strings.Cut(sc.Text(), "listening on ")
	url, _, _ := strings.Cut(rest, " ")
	resp, err := http.Post(url+"/v1/runs", "application/json", strings.NewReader(`{"goal": "What is 6 * 7?", "mode": "direct"}`))
	if err != nil {
		t.Fatal(err)
	}
	var started struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d", resp.StatusCode)
	}
	resp, err = http.Get(url + "/v1/runs/" + started.ID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var last *agent.Event
	dec := json.NewDecoder(resp.Body)
	for dec.More() {
		last = &agent.Event{}
		if err := dec.Decode(last); err != nil {
			t.Fatal(err)
		}
	}
	if last == nil || last.Type != agent.EventStop || last.Stop.Result.Text != "42" || last.RunID != started.ID {
		t.Errorf("the run's stream ended with %+v", last)
	}

	resp, err = http.Post(url+"/v1/runs", "application/json", strings.NewReader(`{"goal": "How small must dt be?", "mode": "agent"}`))
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	resp, err = http.Get(url + "/v1/runs/" + started.ID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec = json.NewDecoder(resp.Body)
	for dec.More() {
		last = &agent.Event{}
		if err := dec.Decode(last); err != nil {
			t.Fatal(err)
		}
	}
	if last.Type != agent.EventStop || last.Stop.Result.Text != "nothing recorded yet" || srv.Remaining() != 0 {
		t.Errorf("the agent run's stream ended with %+v; %d turns unused", last, srv.Remaining())
	}
}
