package server_test

import (
	"context"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	jobtools "github.com/labmate/labmate/job/tools"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/sandbox"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/tool"
)

// gatedJob waits for the file "go" in its workspace, then prints its result.
const gatedJob = "while [ ! -e go ]; do sleep 0.05; done\necho computing\necho result=42"

// parkDirs are what a parking server keeps on disk: its log, its runs' checkpoints, its job
// directory and the runs' workspace.
type parkDirs struct{ log, jobs, ws string }

func newParkDirs(t *testing.T) *parkDirs {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	d := t.TempDir()
	p := &parkDirs{log: d + "/labmate.db", jobs: d + "/data", ws: d + "/ws"}
	if err := os.MkdirAll(p.ws, 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// parkServer is a server over dirs whose agent runs talk to fake and have the job tools
// over a local scheduler; stop closes it (and its scheduler) as a stopped labmate serve would.
func parkServer(t *testing.T, fake *llmtest.Server, dirs *parkDirs) (f *fixture, stop func()) {
	t.Helper()
	sch, err := local.Open(dirs.jobs, &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	jobs := job.Schedulers{"local": sch}
	store, err := sqlite.Open(dirs.log)
	if err != nil {
		t.Fatal(err)
	}
	runs := agent.NewCheckpoints(store)
	tools, err := tool.NewSet(jobtools.Tools(jobs, &jobtools.Options{Workspace: dirs.ws, Confine: true})...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(openai.New("fake", &openai.Options{Provider: "fake", BaseURL: fake.OpenAIBaseURL()}),
		&agent.Options{Tools: tools, Jobs: jobs, Store: runs})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Config{
		Config: runner.Config{Store: store, Workspaces: t.TempDir(), Log: log.New(t.Output(), "", 0), Agents: &agentFuncs{run: a.Run, resume: a.Resume}, Jobs: jobs, LocalRuns: cliRuns{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f = &fixture{srv: srv, http: httptest.NewServer(srv), store: store}
	stopped := false
	closeAll := func(replay bool) {
		if stopped {
			return
		}
		stopped = true
		f.http.Close()
		srv.Close()
		// Zero illegal transitions, once the story has ended: a server stopped mid-way
		// leaves the operations of the jobs it followed open, for the next one.
		if replay {
			testutil.ReplayStore(t, store)
		}
		store.Close()
		sch.Close()
	}
	t.Cleanup(func() { closeAll(true) })
	return f, func() { closeAll(false) }
}

// parkScript is the scripted model of a run that submits a gated job and waits for it, then
// answers with what wait_job returned.
func parkScript(t *testing.T) *llmtest.Server {
	return llmtest.NewServer(t,
		agenttest.Plan("simulate", "submit the simulation as a job and wait for its result", "the job prints result"),
		agenttest.SubmitJob("sim", gatedJob),
		agenttest.JobCall(agent.ToolWaitJob),
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			m := c.Request.Messages
			got := m[len(m)-1].Content
			if !strings.Contains(got, " ended: COMPLETED in ") || !strings.Contains(got, "[stdout] result=42") {
				t.Errorf("wait_job gave the resumed run:\n%s\nwant the job's outcome and its log's tail", got)
			}
			return agenttest.FinalAnswer("result = 42")
		}},
	)
}

// parked starts a run and follows it to its parked end; it returns the run, its job and the
// seq of its last line.
func parked(t *testing.T, f *fixture) (id, jobID string, seq int64) {
	t.Helper()
	code, id := post(t, f, "/v1/runs", `{"goal": "Run the simulation and report its result"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d %s", code, id)
	}
	lines := followEvents(t, f, id, 0, nil)
	last := lines[len(lines)-1]
	if last.Type != agent.EventStop || last.Stop.Reason != agent.StopParked || !last.Stop.Resumable || last.Stop.Job == "" {
		t.Fatalf("the run's last line: %+v, want a parked stop naming its job", last)
	}
	return id, last.Stop.Job, last.Seq
}

// answered follows run id after seq until it answers (the server resumes it by itself).
func answered(t *testing.T, f *fixture, id string, after int64) []*line {
	t.Helper()
	var all []*line
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		lines := followEvents(t, f, id, after, nil)
		all = append(all, lines...)
		for _, l := range lines {
			after = l.Seq
			if l.Type == agent.EventStop && l.Stop.Reason != agent.StopParked {
				if l.Stop.Reason != agent.StopAnswered || l.Stop.Result == nil || l.Stop.Result.Text != "result = 42" {
					t.Fatalf("the resumed run stopped with %+v", l.Stop)
				}
				return all
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run %s was not resumed and answered within a minute; it logged %d more lines", id, len(all))
	return nil
}

// lastEnd returns the payload of run id's latest run_end, and what resumed it last.
func lastEnd(t *testing.T, f *fixture, id string) (end, by string) {
	t.Helper()
	for m, err := range f.store.After(context.Background(), id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		switch m.Type {
		case "run_end":
			end = string(m.Payload)
		case "run_resume":
			by = string(m.Payload)
		}
	}
	return end, by
}

// A run that submits a job and waits for it parks (run_end parked, resumable) and takes no
// place among the runs; when the job ends the server resumes it, the wait_job call gets the
// job's outcome, and the run answers with the job's result.
func TestParkServerResumes(t *testing.T) {
	dirs := newParkDirs(t)
	f, _ := parkServer(t, parkScript(t), dirs)
	id, jobID, seq := parked(t, f)
	if end, _ := lastEnd(t, f, id); !strings.Contains(end, `"reason":"parked"`) || !strings.Contains(end, "the server resumes it when job "+jobID+" ends") {
		t.Errorf("the parked run's run_end: %s", end)
	}
	if err := os.WriteFile(filepath.Join(dirs.ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	answered(t, f, id, seq)
	if _, by := lastEnd(t, f, id); !strings.Contains(by, "job "+jobID+" ended (COMPLETED)") {
		t.Errorf("the run_resume: %s, want it to say the job ended", by)
	}
}

// A server stopped while a run is parked loses nothing: the next one, on the same log,
// checkpoints and job directory, watches the job again and resumes the run when it ends.
func TestParkServerRestart(t *testing.T) {
	dirs := newParkDirs(t)
	fake := parkScript(t)
	f, stop := parkServer(t, fake, dirs)
	id, jobID, seq := parked(t, f)
	stop()

	f, _ = parkServer(t, fake, dirs)
	// The job still waits for its file: it ends only now, watched by the new server.
	if err := os.WriteFile(filepath.Join(dirs.ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	answered(t, f, id, seq)
	if _, by := lastEnd(t, f, id); !strings.Contains(by, "job "+jobID+" ended (COMPLETED)") {
		t.Errorf("the run_resume: %s, want it to say the job ended", by)
	}
}
