package agent_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	jobtools "github.com/labmate/labmate/job/tools"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/sandbox"
	"github.com/labmate/labmate/tool"
)

// gatedJob is a job that waits for the file "go" in its workspace, then prints its result.
const gatedJob = "while [ ! -e go ]; do sleep 0.05; done\necho computing\necho result=42"

// A run that submits a job and waits for it parks: it stops, resumable, naming the job, and
// its poll is not counted as a tool call. Resumed before the job ends, it parks again without
// a model call; resumed after, its wait_job call gets the job's outcome and the run answers.
func TestRunParksOnJob(t *testing.T) {
	ctx := context.Background()
	sch := localJobs(t)
	jobs := job.Schedulers{"local": sch}
	ws := t.TempDir()
	store := checkpoints(t)
	srv := llmtest.NewServer(t,
		agenttest.Plan("simulate", "submit the simulation as a job and wait for its result", "the job prints result"),
		agenttest.SubmitJob("sim", gatedJob),
		agenttest.JobCall(jobtools.JobStatus), // a poll
		agenttest.JobCall(agent.ToolWaitJob),  // parks
	)
	tools, err := tool.NewSet(jobtools.Tools(jobs, &jobtools.Options{Workspace: ws, Confine: true})...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(openAIModel(srv), &agent.Options{Tools: tools, Jobs: jobs, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{ID: "p1", Goal: "Run the simulation and report its result", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	s := stopOf(t, evs)
	if s.Reason != agent.StopParked || !s.Resumable || !strings.HasPrefix(s.Job, "local-") {
		t.Fatalf("stop = %+v, want a resumable parked stop naming the job", s)
	}
	if s.Stats.Polls != 1 || s.Stats.ToolCalls != 1 {
		t.Errorf("stats: %d tool calls, %d polls; want 1 (submit_job) and 1 (job_status)", s.Stats.ToolCalls, s.Stats.Polls)
	}
	st, err := store.Load(ctx, "p1")
	if err != nil || st.Parked == nil || st.Parked.Job != s.Job || st.Phase != agent.PhaseCode {
		t.Fatalf("saved state: %+v, %v; want parked on %s in phase code", st, err, s.Job)
	}
	if sp, err := sch.Status(ctx, job.ID(s.Job)); err != nil || sp.Spec.Workspace != ws {
		t.Fatalf("the job's workspace: %+v, %v; want the run's %s", sp, err, ws)
	}

	// Too early: it parks again, and asks the model nothing.
	calls := len(srv.Calls())
	again := resumed(t, a, "p1")
	if s := stopOf(t, again); s.Reason != agent.StopParked || s.Job != st.Parked.Job {
		t.Fatalf("resumed before the job ended: %+v, want parked again", s)
	}
	if n := len(srv.Calls()); n != calls {
		t.Errorf("parking again made %d model calls", n-calls)
	}

	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for js, err := range sch.Watch(wctx, job.ID(s.Job)) {
		if err != nil {
			t.Fatal(err)
		}
		if js.State.Terminal() {
			break
		}
	}
	srv.Add(llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
		got := lastMessage(c).Content
		if !strings.Contains(got, "job "+s.Job+" ended: COMPLETED in ") || !strings.Contains(got, "exit code 0") || !strings.Contains(got, "[stdout] result=42") {
			t.Errorf("wait_job gave the model:\n%s\nwant the job's outcome and the tail of its log", got)
		}
		return agenttest.FinalAnswer("result = 42")
	}})
	done := resumed(t, a, "p1")
	s = stopOf(t, done)
	if s.Reason != agent.StopAnswered || s.Result.Text != "result = 42" {
		t.Fatalf("the resumed run stopped with %+v", s)
	}
	if s.Stats.ToolCalls != 3 || s.Stats.Polls != 1 {
		t.Errorf("stats: %d tool calls, %d polls; want 3 (submit_job, wait_job, final_answer) and 1", s.Stats.ToolCalls, s.Stats.Polls)
	}
	var waited *agent.ToolEvent
	for _, e := range of(done, agent.EventToolResult) {
		if e.Tool.Name == agent.ToolWaitJob {
			waited = e.Tool
		}
	}
	if waited == nil || waited.IsError || waited.CallID != st.Parked.CallID {
		t.Errorf("the wait_job result: %+v; want the parked call %s answered", waited, st.Parked.CallID)
	}
	if st, _ := store.Load(ctx, "p1"); st.Parked != nil {
		t.Errorf("the answered run is still parked on %s", st.Parked.Job)
	}
}

func resumed(t *testing.T, a *agent.Agent, id string) []*agent.Event {
	t.Helper()
	var evs []*agent.Event
	for ev, err := range a.Resume(context.Background(), id) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// The agent's submit_job tool refuses LD_PRELOAD in a job's env, naming it to the model, and
// no job is submitted.
func TestSubmitJobRefusesLDPreload(t *testing.T) {
	sch := localJobs(t)
	jobs := job.Schedulers{"local": sch}
	ws := t.TempDir()
	srv := llmtest.NewServer(t,
		agenttest.Plan("simulate", "submit the simulation as a job", "the job runs"),
		llmtest.CallTool("submit_job", agenttest.Args(map[string]any{"name": "evil", "script": "true",
			"env": map[string]string{"LD_PRELOAD": ws + "/evil.so"}})),
		agenttest.FinalAnswer("refused"),
	)
	tools, err := tool.NewSet(jobtools.Tools(jobs, &jobtools.Options{Workspace: ws, Confine: true})...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(openAIModel(srv), &agent.Options{Tools: tools, Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, a, &agent.Task{ID: "evil", Goal: "Run the simulation", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	told := false
	for _, c := range srv.Calls() {
		for _, m := range c.Request.Messages {
			if m.Role == llm.RoleTool && strings.Contains(m.Content, "LD_PRELOAD") && strings.Contains(m.Content, "refused") {
				told = true
			}
		}
	}
	if !told {
		t.Error("the model was not told that LD_PRELOAD is refused")
	}
	if sts, err := sch.List(context.Background()); err != nil || len(sts) != 0 {
		t.Errorf("jobs after a refused submit_job: %v %v", sts, err)
	}
}

// localJobs is a local scheduler in bubblewrap (skipping the test without it), closed with the
// test.
func localJobs(t *testing.T) *local.Scheduler {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	sch, err := local.Open(t.TempDir(), &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sch.Close() })
	return sch
}
