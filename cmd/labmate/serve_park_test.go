package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Must hold (issue 20): an agent run of labmate serve that submits a job and waits for it
// parks; kill -9 of the server while it is parked loses nothing. The job ends while no server
// runs; the server restarted on the same data directory resumes the run by itself, and the
// run answers with the job's result: GET /v1/runs/ID/events tells one gap-free story whose
// events before the kill are unchanged, the job's operation in the log is complete, and the
// log replays with no illegal transition.
func TestServeParkedKilled(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	data := t.TempDir()
	srv := llmtest.NewServer(t,
		agenttest.Plan("simulate", "submit the simulation as a job and wait for its result", "the job prints result"),
		agenttest.SubmitJob("sim", "while [ ! -e go ]; do sleep 0.05; done\necho computing\necho result=42"),
		agenttest.JobCall(agent.ToolWaitJob),
		// After the restart, the resumed run's wait_job call has the job's outcome.
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			m := c.Request.Messages
			if got := m[len(m)-1].Content; !strings.Contains(got, " ended: COMPLETED in ") || !strings.Contains(got, "[stdout] result=42") {
				t.Errorf("wait_job gave the resumed run:\n%s\nwant the job's outcome and its log's tail", got)
			}
			return agenttest.FinalAnswer("result = 42")
		}},
	)
	for _, kv := range fakeModelEnv(t, srv) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cmd, url := serve(t, data, "--no-token")
	resp, body := request(t, http.MethodPost, url, "/v1/runs", `{"goal": "Run the simulation and report its result"}`)
	var started struct{ ID string }
	if err := json.Unmarshal([]byte(body), &started); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d %s", resp.StatusCode, body)
	}
	id := started.ID
	before, jobID := followParked(t, url, id)
	cmd.Process.Kill() // SIGKILL, while the run is parked
	cmd.Wait()

	// The job ends while no server runs.
	if err := os.WriteFile(filepath.Join(runWorkspaceDir(data, id), "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := jobCLI(t, data, t.TempDir(), "", "wait", jobID); code != 0 {
		t.Fatalf("labmate job wait %s: exit %d %s %s", jobID, code, out, errOut)
	}

	// Restarted with the model, the server resumes the run by itself, to its answer.
	cmd, url = serve(t, data, "--no-token")
	var after []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, body = request(t, http.MethodGet, url, "/v1/runs/"+id+"/events", "")
		after = strings.Split(strings.TrimSpace(body), "\n")
		if strings.Contains(after[len(after)-1], `"reason":"answered"`) && strings.Contains(after[len(after)-1], `"type":"stop"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s was not resumed to its answer after the restart:\n%s", id, body)
		}
	}
	if len(after) < len(before) {
		t.Fatalf("after the restart %d lines, fewer than the %d before the kill:\n%s", len(after), len(before), body)
	}
	if diff := cmp.Diff(before, after[:len(before)]); diff != "" {
		t.Errorf("the events up to the kill changed (-before +after):\n%s", diff)
	}
	// One story: each line's seq is past the one before (the run's checkpoints, its run_end and
	// run_resume take seqs between them, not lines of the stream).
	evs := ndjson(t, strings.Join(after, "\n"))
	stops := 0
	for i, ev := range evs {
		if i > 0 && ev.Seq <= evs[i-1].Seq || ev.Seq < 1 {
			t.Errorf("line %d has seq %d, after %d: %s", i, ev.Seq, evs[max(i-1, 0)].Seq, after[i])
		}
		if ev.Type == agent.EventStop {
			stops++
		}
	}
	last := evs[len(evs)-1]
	if stops != 2 || last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered || last.Stop.Result == nil || last.Stop.Result.Text != "result = 42" {
		t.Errorf("the run stopped %d times, last with %+v; want parked, then answered", stops, last.Stop)
	}
	if runs := listRunsOf(t, url); len(runs) != 1 || runs[0].ID != id || runs[0].State != protocol.Ended || runs[0].End == nil || runs[0].End.Reason != "answered" {
		t.Errorf("GET /v1/runs after the resumed run answered: %+v", runs)
	}
	if first := evs[len(before)]; first.Type != agent.EventStart || !first.Start.Resumed {
		t.Errorf("the resumed events begin with %+v, want a resumed run_start", first)
	}
	msgs, _ := waitJobOp(t, url, jobID)
	if msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Errorf("the job's operation ended %s %s", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}

	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	store, err := sqlite.Open(filepath.Join(data, "labmate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	testutil.ReplayStore(t, store) // zero illegal transitions
}

// followParked follows run id at url to its parked end; it returns the lines read and the job
// the run parked on.
func followParked(t *testing.T, url, id string) ([]string, string) {
	t.Helper()
	var stop *agent.Stop
	lines := readEvents(t, url, id, func(ev *agent.Event) bool {
		if ev.Type != agent.EventStop {
			return true
		}
		if ev.Stop.Reason != agent.StopParked || !ev.Stop.Resumable || ev.Stop.Job == "" {
			t.Fatalf("the run stopped %+v, want parked on its job", ev.Stop)
		}
		stop = ev.Stop
		return false // the stream ends at the stop; the run's end is the log's run_end
	})
	if stop == nil {
		t.Fatalf("the run never parked; it streamed:\n%s", strings.Join(lines, "\n"))
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		runs := listRunsOf(t, url)
		if len(runs) == 1 && runs[0].End != nil {
			if e := runs[0].End; e.Reason != "parked" || !e.Resumable || !strings.Contains(e.Resume, "the server resumes it when job "+stop.Job+" ends") {
				t.Fatalf("the parked run's end: %+v", e)
			}
			return lines, stop.Job
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/runs shows no end of the parked run: %+v", runs)
		}
	}
}
