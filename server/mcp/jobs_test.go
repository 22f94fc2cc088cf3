package mcp_test

import (
	"context"
	"encoding/json"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	jobtools "github.com/labmate/labmate/job/tools"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

// decode reads a tool result's structured content into v.
func decode(t *testing.T, r *sdk.CallToolResult, v any) {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", text(r))
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// The job tools over a real local scheduler, through the official client: submit_job runs a
// sandboxed job, job_logs waits for its lines and reads on with after, job_status and list_jobs
// see it end, cancel_job stops another, and bad calls are tool errors naming the field.
func TestJobTools(t *testing.T) {
	jobs, err := local.Open(t.TempDir(), &local.Options{Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sts, _ := jobs.List(context.Background())
		for _, st := range sts { // a failed test leaves none running
			jobs.Cancel(context.Background(), st.ID, "test over")
			for range jobs.Watch(context.Background(), st.ID) {
			}
		}
		jobs.Close()
	})
	store := protocol.NewMemStore()
	srv, err := server.New(context.Background(), server.Config{Config: runner.Config{Store: store, Log: log.New(t.Output(), "", 0), Workspaces: t.TempDir(), Jobs: job.Schedulers{"local": jobs}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	lab := mcp.New(srv.Runner, &mcp.Options{Version: "test"})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := lab.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tl := range tools.Tools {
		have[tl.Name] = true
	}
	for _, name := range []string{"submit_job", "job_status", "job_logs", "cancel_job", "list_jobs"} {
		if !have[name] {
			t.Errorf("tool %s is not served", name)
		}
	}

	ws := "run" // inside the workspace the server assigns
	var sub job.Status
	decode(t, call(t, ctx, cs, "", "submit_job", map[string]any{"name": "count", "workspace": ws, "memory": "512M", "wall_time": "2m",
		"command": []string{"sh", "-c", "sleep 0.3; for i in 1 2 3; do echo line $i; done; sleep 0.3; echo err >&2"}}), &sub)
	if !strings.HasPrefix(string(sub.ID), "local-") || sub.Name != "count" || sub.Spec.Resources.MemoryBytes != 512<<20 || sub.Spec.Resources.WallTime != 2*time.Minute {
		t.Fatalf("submit_job: %+v", sub)
	}
	var page jobtools.LogsOut
	decode(t, call(t, ctx, cs, "", "job_logs", map[string]any{"id": sub.ID, "wait_s": 20, "limit": 2}), &page)
	if len(page.Lines) == 0 || page.Lines[0].Text != "line 1" || page.Lines[0].Seq != 1 {
		t.Fatalf("job_logs waiting for the first lines: %+v, first %+v", page, page.Lines[0])
	}
	var got []string
	for _, l := range page.Lines {
		got = append(got, l.Stream+":"+l.Text)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !page.State.Terminal() || page.More {
		if time.Now().After(deadline) {
			t.Fatalf("the job did not end: %+v", page)
		}
		r := call(t, ctx, cs, "", "job_logs", map[string]any{"id": sub.ID, "after": page.Next, "wait_s": 5})
		next := jobtools.LogsOut{}
		decode(t, r, &next)
		for _, l := range next.Lines {
			got = append(got, l.Stream+":"+l.Text)
		}
		if next.State.Terminal() && !next.More && !strings.Contains(text(r), "this is all of its log") {
			t.Errorf("job_logs text at the end: %s", text(r))
		}
		page = next
	}
	if strings.Join(got, ",") != "stdout:line 1,stdout:line 2,stdout:line 3,stderr:err" {
		t.Errorf("the log read page by page: %q", got)
	}
	var status job.Status
	decode(t, call(t, ctx, cs, "", "job_status", map[string]any{"id": sub.ID}), &status)
	if status.State != job.Completed || status.ExitCode == nil || *status.ExitCode != 0 {
		t.Errorf("job_status: %+v", status)
	}

	// The job is an operation in the log, watched by perception, in the session named by its id.
	if sub.Spec == nil || !strings.HasSuffix(sub.Spec.Workspace, "/run") || !strings.HasPrefix(sub.Spec.Workspace, "/") {
		t.Errorf("the job's workspace: %+v: want the server's, with run inside it", sub.Spec)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ops, _ := store.Operations(ctx, string(sub.ID))
		if len(ops) == 1 && ops[0].ID == string(sub.ID) && ops[0].Kind == protocol.KindJob && ops[0].State == protocol.Completed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job's operation in the log: %+v", ops)
		}
	}

	var long job.Status
	decode(t, call(t, ctx, cs, "", "submit_job", map[string]any{"workspace": ws, "script": "sleep 60\n"}), &long)
	var cancelled job.Status
	decode(t, call(t, ctx, cs, "", "cancel_job", map[string]any{"id": long.ID, "why": "not needed"}), &cancelled)
	for st := range jobs.Watch(ctx, long.ID) {
		cancelled = *st
	}
	if cancelled.State != job.Cancelled || cancelled.Reason != "not needed" {
		t.Errorf("after cancel_job: %+v", cancelled)
	}
	var list jobtools.ListOut
	decode(t, call(t, ctx, cs, "", "list_jobs", map[string]any{}), &list)
	if len(list.Jobs) != 2 || list.Jobs[0].ID != long.ID || list.Jobs[1].ID != sub.ID {
		t.Errorf("list_jobs, newest first: %+v", list.Jobs)
	}
	decode(t, call(t, ctx, cs, "", "list_jobs", map[string]any{"active": true}), &list)
	if len(list.Jobs) != 0 {
		t.Errorf("list_jobs active: %+v", list.Jobs)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"job_status", map[string]any{"id": "local-nope"}, "unknown job: local-nope"},
		{"job_logs", map[string]any{"id": "slurm-17"}, `unknown job: "slurm-17"`},
		{"submit_job", map[string]any{"workspace": ws, "command": []string{"true"}, "memory": "2X"}, `memory: size "2X"`},
		{"submit_job", map[string]any{"workspace": ws, "command": []string{"true"}, "wall_time": "-5m"}, "wall_time: wall time \"-5m\" is negative"},
		{"submit_job", map[string]any{"workspace": ws, "command": []string{"true"}, "script": "true"}, "not both"},
		{"submit_job", map[string]any{"workspace": "/etc", "command": []string{"true"}}, "jobs run inside the workspace they are given"},
		{"submit_job", map[string]any{"workspace": "../../etc", "command": []string{"true"}}, "climbs out of the workspace jobs run inside"},
		{"submit_job", map[string]any{"workspace": ws, "command": []string{"true"}, "scheduler": "slurm"}, `scheduler "slurm": not available here`},
		{"submit_job", map[string]any{"workspace": ws, "command": []string{"true"}, "hotfix": "maybe"}, `hotfix "maybe"`},
	} {
		r := call(t, ctx, cs, "", c.tool, c.args)
		if !r.IsError || !strings.Contains(text(r), c.want) {
			t.Errorf("%s %v: error %v, %q; want %q", c.tool, c.args, r.IsError, text(r), c.want)
		}
	}
}
