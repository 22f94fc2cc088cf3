package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/report"
	"github.com/labmate/labmate/internal/browsertest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
)

// waitGo is a cell that waits for a file go in its workspace, then prints its checkpoint.
const waitGo = "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('x =', 1)"

// oneStep is the model's part of a run of one step, the cell waitGo: the plan and the cell
// (before rest, the review and the answer).
func oneStep() []llmtest.Turn {
	return []llmtest.Turn{
		llmtest.JSON(agent.Plan{Goal: "x", Steps: []agent.Step{{Title: "x", Action: "compute x", Tool: agent.ToolRunCode, Checkpoint: "x = 1"}}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: waitGo})),
	}
}

func reviewAndAnswer() []llmtest.Turn {
	return []llmtest.Turn{
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "x = 1", "summary": "x = 1"}),
		call(agent.ToolFinalAnswer, `{"answer": "x = 1"}`),
	}
}

// startRun starts labmate run with args and env, reads its NDJSON events until its cell has
// started, and returns the command (still running), the run's id and the events read.
func startRun(t *testing.T, env []string, args ...string) (*exec.Cmd, string, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"run", "--json"}, args...)...)
	cmd.Env, cmd.Dir = append(os.Environ(), env...), t.TempDir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev := &agent.Event{}
		if err := json.Unmarshal(sc.Bytes(), ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if ev.Type == agent.EventOperation && ev.Message.Type == protocol.TypeStart {
			return cmd, ev.RunID, sc
		}
	}
	t.Fatalf("labmate run never started its cell; stderr:\n%s", stderr.String())
	return nil, "", nil
}

// runStream reads run id's whole stream from the server at url: every event and run_end
// line, in order, until the stream ends.
func runStream(t *testing.T, url, id string) []*agent.Event {
	t.Helper()
	var evs []*agent.Event
	for _, l := range readEvents(t, url, id, func(*agent.Event) bool { return true }) {
		ev := &agent.Event{}
		json.Unmarshal([]byte(l), ev)
		evs = append(evs, ev)
	}
	return evs
}

// checkStory checks that a run's stream is one story: seqs 1, 2, … with one more between a
// run_end and the resumed run's start (its run_resume), every operation legal.
func checkStory(t *testing.T, evs []*agent.Event) {
	t.Helper()
	// Each line's seq is its message's in the run's stream: they increase, the run's
	// checkpoints (and, after a run_end, the run_resume) taking the seqs between them.
	last := int64(0)
	for i, ev := range evs {
		if ev.Seq <= last {
			t.Errorf("line %d (%s) has seq %d, after %d", i, ev.Type, ev.Seq, last)
		}
		last = ev.Seq
	}
	// The operations obey the state machine; those a kill cut short are before the last
	// run_end: every operation after it ends.
	lastEnd := 0
	logs := map[string]*protocol.SessionLog{}
	for i, e := range evs {
		switch e.Type {
		case agent.EventType(protocol.TypeRunEnd):
			lastEnd = i + 1
		case agent.EventOperation:
			l := logs[e.Message.SessionID]
			if l == nil {
				l = protocol.NewSessionLog(e.Message.SessionID)
				logs[e.Message.SessionID] = l
			}
			if _, err := l.Append(e.Message); err != nil {
				t.Errorf("line %d: %v", i, err)
			}
		}
	}
	testutil.Replay(t, func(yield func(*protocol.EnhancedMessage) bool) {
		for _, e := range evs[lastEnd:] {
			if e.Type == agent.EventOperation && !yield(e.Message) {
				return
			}
		}
	})
}

// Issue 19: a run of labmate run is in the data directory's one log. Started before the
// server, it is seen by the server that starts while it runs (which is not blocked by it), its
// events reach a follower and a dashboard (Chromium) live through the server, and it ends in
// the same stream. Killed
// (SIGKILL), it is ended as process_died, resumable; labmate run --resume continues the same
// story. A cancel from the server stops the process as Ctrl-C would. A server killed under a
// running labmate run loses nothing: the run writes into the file again, and the next server
// tells the whole story. labmate run appends to the log file itself, beside the server: there is no
// door between them.
func TestRunInTheLog(t *testing.T) {
	data := t.TempDir()
	var turns []llmtest.Turn
	turns = append(append(turns, oneStep()...), reviewAndAnswer()...) // run 1
	turns = append(append(turns, oneStep()...), reviewAndAnswer()...) // run 2, killed in its cell, then resumed
	turns = append(turns, oneStep()...)                               // run 3, cancelled in its cell
	turns = append(append(turns, oneStep()...), reviewAndAnswer()...) // run 4, the server killed while it runs
	env := fakeModelEnv(t, llmtest.NewServer(t, turns...))

	// Run 1 starts with no server: its first events are written into the file directly.
	run1, id1, out1 := startRun(t, env, "--data", data, "compute x")
	srv, url := serve(t, data, "--no-token")
	runs := listRunsOf(t, url)
	if len(runs) != 1 || runs[0].ID != id1 || runs[0].State != protocol.Running {
		t.Fatalf("GET /v1/runs while labmate run runs: %+v, want run %s running", runs, id1)
	}
	follow := make(chan []*agent.Event)
	go func() { follow <- runStream(t, url, id1) }()
	noDoor(t, data)
	// A dashboard opened while the run's cell waits sees the rest of the run as it comes.
	ctx := browsertest.Start(t, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/#lab/"+id1)); err != nil {
		t.Fatal(err)
	}
	const story = `document.querySelector("#stream").innerText`
	browsertest.Wait(t, ctx, "the run's cell, running", story+`.includes("compute x")`)
	// Its kernel is that process's, and the cell an operation of the run's session: the card
	// offers the Interrupt, which reaches that process through the log (run_cells_test.go).
	browsertest.Wait(t, ctx, "the cell of labmate run, running, with an Interrupt", `[...document.querySelectorAll("#stream article.op")].some((a) => `+
		`a.querySelector("header .muted").textContent === "python" && a.querySelector(".badge.s-running") && !a.querySelector("button.danger").hidden)`)
	if err := os.WriteFile(filepath.Join(data, "workspaces", "run-"+id1, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait(t, ctx, "the run's answer, live", story+`.includes("x = 1") && `+story+`.includes("answer: x = 1")`)
	browsertest.Screenshot(t, ctx, "cli-run.png")
	var printed int
	for out1.Scan() {
		printed++
	}
	if err := run1.Wait(); err != nil {
		t.Fatalf("labmate run: %v", err)
	}
	evs := <-follow
	checkStory(t, evs)
	if last := evs[len(evs)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered {
		t.Errorf("the followed stream ends with %+v, want the answer", last)
	}
	if evs[0].Type != agent.EventStart {
		t.Errorf("the stream begins with %s, want run_start", evs[0].Type)
	}
	// labmate run show reads the run's events from the log beside the server that holds it.
	out, errOut, code := labmateEnv(t, env, t.TempDir(), "", "run", "show", "--json", "--data", data, id1)
	var rec report.Record
	if err := json.Unmarshal([]byte(out), &rec); err != nil || code != 0 || len(rec.Operations) != 1 || !rec.Operations[0].OK {
		t.Errorf("run show beside the server: exit %d, %v, %+v\n%s", code, err, rec.Operations, errOut)
	}

	// Run 2 starts while the server runs, and is killed in its cell.
	run2, id2, _ := startRun(t, env, "--data", data, "compute x again")
	run2.Process.Kill()
	run2.Wait()
	lines := readEvents(t, url, id2, func(*agent.Event) bool { return true }) // ends when the server sees the process gone
	var died struct {
		Type protocol.Type
		protocol.RunEnd
	}
	json.Unmarshal([]byte(lines[len(lines)-1]), &died)
	hint := "labmate run --resume " + id2 + " --data " + data
	if died.Type != protocol.TypeRunEnd || died.Reason != protocol.ReasonProcessDied || !died.Resumable || !strings.Contains(died.Resume, hint) {
		t.Errorf("run 2 killed ended %+v, want process_died, resumable with %q", died, hint)
	}
	if err := os.WriteFile(filepath.Join(data, "workspaces", "run-"+id2, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := labmateEnv(t, env, t.TempDir(), "", "run", "--resume", id2, "--data", data); code != 0 {
		t.Fatalf("labmate run --resume: exit %d\n%s", code, errOut)
	}
	evs = runStream(t, url, id2)
	checkStory(t, evs)
	if last := evs[len(evs)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered {
		t.Errorf("run 2 resumed ends with %+v, want the answer", last)
	}

	// Run 3 is cancelled from the server: the process stops as from Ctrl-C, resumable.
	run3, id3, _ := startRun(t, env, "--data", data, "compute x once more")
	if resp, body := request(t, http.MethodPost, url, "/v1/runs/"+id3+"/cancel", "{}"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	if err := run3.Wait(); err == nil || run3.ProcessState.ExitCode() != 130 {
		t.Errorf("labmate run cancelled from the server: %v, want exit 130", err)
	}
	evs = runStream(t, url, id3)
	if last := evs[len(evs)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopCancelled || !last.Stop.Resumable {
		t.Errorf("run 3 cancelled ends with %+v, want cancelled, resumable", last)
	}

	// Run 4 goes on when the server is killed (SIGKILL) under it: it writes into the file
	// again, and the next server tells its whole story.
	run4, id4, _ := startRun(t, env, "--data", data, "compute x at last")
	srv.Process.Kill()
	srv.Wait()
	if err := os.WriteFile(filepath.Join(data, "workspaces", "run-"+id4, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run4.Wait(); err != nil {
		t.Fatalf("labmate run, its server killed: %v", err)
	}
	_, url = serve(t, data, "--no-token")
	evs = runStream(t, url, id4)
	checkStory(t, evs)
	if last := evs[len(evs)-1]; last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered {
		t.Errorf("run 4 ends with %+v, want the answer", last)
	}
	if rs := listRunsOf(t, url); len(rs) != 4 {
		t.Errorf("GET /v1/runs lists %d runs, want 4", len(rs))
	}
}

// noDoor checks that nothing but the log file connects labmate run and the server: no socket,
// no owner files.
func noDoor(t *testing.T, data string) {
	t.Helper()
	for _, name := range []string{"serve.sock", "owners"} {
		if _, err := os.Stat(filepath.Join(data, name)); err == nil {
			t.Errorf("%s is in the data directory: runs append to the log themselves", name)
		}
	}
}
