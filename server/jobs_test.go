package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/runner"

	"github.com/coder/websocket"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/job/slurm"
	"github.com/labmate/labmate/job/slurm/slurmtest"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner/locallog"
	"github.com/labmate/labmate/sandbox"
	"github.com/labmate/labmate/server"
)

// jobLab is a server over a real sqlite log and a real, sandboxed job/local, on loopback
// HTTP. Its data (the log, the jobs) lives in dir, so that another jobLab over the same dir is
// the same lab after a restart.
type jobLab struct {
	dir   string
	store protocol.Store
	jobs  *local.Scheduler
	srv   *server.Server
	http  *httptest.Server
}

func openJobLab(t *testing.T, dir string, edit func(*server.Config)) *jobLab {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	l := &jobLab{dir: dir}
	var err error
	if l.store, err = locallog.Open(dir, "serve"); err != nil {
		t.Fatal(err)
	}
	if l.jobs, err = local.Open(dir, &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2, Poll: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{
		Config: runner.Config{Store: l.store, Workspaces: filepath.Join(dir, "workspaces"), Log: log.New(t.Output(), "", 0), Jobs: job.Schedulers{"local": l.jobs}, JobPoll: 200 * time.Millisecond},
	}
	if edit != nil {
		edit(&cfg)
	}
	if l.srv, err = server.New(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	l.http = httptest.NewServer(l.srv)
	t.Cleanup(l.close)
	return l
}

// close stops the server without ending its jobs: they run on, their operations open.
func (l *jobLab) close() {
	if l.srv == nil {
		return
	}
	l.http.Close()
	l.srv.Close()
	l.jobs.Close()
	l.store.Close()
	l.srv = nil
}

// cancelAll ends every job left running, when a test is over.
func cancelAll(t *testing.T, dir string) {
	t.Cleanup(func() {
		s, err := local.Open(dir, &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2, Poll: 100 * time.Millisecond})
		if err != nil {
			return
		}
		defer s.Close()
		sts, _ := s.List(context.Background())
		for _, st := range sts {
			if !st.State.Terminal() {
				s.Cancel(context.Background(), st.ID, "test over")
				for range s.Watch(context.Background(), st.ID) {
				}
			}
		}
	})
}

func (l *jobLab) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, l.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// submit posts a job and returns its id, checking the reply.
func (l *jobLab) submit(t *testing.T, body string) string {
	t.Helper()
	code, out := l.do(t, "POST", "/v1/jobs", body)
	var r map[string]string
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs %s: %d %s", body, code, out)
	}
	if r["id"] == "" || r["session"] != r["id"] || r["operation"] != r["id"] || len(r) != 3 {
		t.Fatalf("POST /v1/jobs: %v: want id, session and operation, the job's id", r)
	}
	return r["id"]
}

// follow reads session id's stream over WebSocket until operation id ends.
func (l *jobLab) follow(t *testing.T, id string, timeout time.Duration) []*protocol.EnhancedMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	url := strings.Replace(l.http.URL, "http", "ws", 1) + "/v1/sessions/" + id + "/ws?after=0"
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(16 << 20)
	var msgs []*protocol.EnhancedMessage
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("following job %s after %d messages: %v", id, len(msgs), err)
		}
		var m protocol.EnhancedMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if m.OperationID != id {
			continue
		}
		msgs = append(msgs, &m)
		if m.Type.Terminal() {
			return msgs
		}
	}
}

// waitOp waits until the log has operation id (in session id) in a terminal state, and
// returns its messages.
func waitOp(t *testing.T, store protocol.Store, id string, timeout time.Duration) []*protocol.EnhancedMessage {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		var msgs []*protocol.EnhancedMessage
		for m, err := range store.Operation(context.Background(), id, id) {
			if err != nil {
				break
			}
			msgs = append(msgs, m)
		}
		if len(msgs) > 0 && msgs[len(msgs)-1].Type.Terminal() {
			return msgs
		}
		if time.Now().After(deadline) {
			t.Fatalf("job operation %s did not end in %v: %d messages", id, timeout, len(msgs))
		}
	}
}

// jobSeqs are the job_seq of the log lines an operation logged, in order.
func jobSeqs(t *testing.T, msgs []*protocol.EnhancedMessage) (seqs []int64, lines []string) {
	t.Helper()
	for _, m := range msgs {
		if m.Type != protocol.TypeProgress {
			continue
		}
		p, err := protocol.DecodePayload(m)
		if err != nil {
			t.Fatal(err)
		}
		if o := p.(*protocol.Progress).Observation; o != nil && o.JobSeq > 0 {
			seqs = append(seqs, o.JobSeq)
			lines = append(lines, o.Line)
		}
	}
	return seqs, lines
}

func terminal(t *testing.T, msgs []*protocol.EnhancedMessage) any {
	t.Helper()
	p, err := protocol.DecodePayload(msgs[len(msgs)-1])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func counting(n int, pause string) string {
	return fmt.Sprintf(`{"name": "count", "script": "for i in $(seq 1 %d); do echo line $i; sleep %s; done\n", "resources": {"cores": 1, "memory_bytes": 268435456}}`, n, pause)
}

// A job submitted over REST is an operation in its own session, streamed over WebSocket to
// its end, listed, read back with after and follow, and cancelled.
func TestJobREST(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, nil)

	id := l.submit(t, counting(5, "0.05"))
	msgs := l.follow(t, id, 30*time.Second)
	if _, ok := terminal(t, msgs).(*protocol.Complete); !ok {
		t.Fatalf("job %s ended with %s %s", id, msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	var types []protocol.Type
	for _, m := range msgs[:3] {
		types = append(types, m.Type)
	}
	if !slices.Equal(types, []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart}) {
		t.Errorf("the operation begins %v", types)
	}
	seqs, lines := jobSeqs(t, msgs)
	if !slices.Equal(seqs, []int64{1, 2, 3, 4, 5}) || lines[4] != "line 5" {
		t.Errorf("logged lines %v %q", seqs, lines)
	}

	// GET /v1/jobs/ID and the list: the status with where it is in the log.
	code, out := l.do(t, "GET", "/v1/jobs/"+id, "")
	var one map[string]any
	json.Unmarshal([]byte(out), &one)
	if code != http.StatusOK || one["id"] != id || one["state"] != "COMPLETED" || one["scheduler"] != "local" || one["session"] != id || one["operation"] != id {
		t.Errorf("GET /v1/jobs/%s: %d %s", id, code, out)
	}
	ws, _ := one["spec"].(map[string]any)["workspace"].(string)
	if !strings.HasPrefix(ws, filepath.Join(dir, "workspaces", "jobs")+"/") {
		t.Errorf("the job's workspace %q: want one the server assigned", ws)
	}
	long := l.submit(t, `{"script": "echo started; sleep 60", "workspace": "sub/dir"}`)
	code, out = l.do(t, "GET", "/v1/jobs", "")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != http.StatusOK || len(list) != 2 || list[0]["id"] != long || list[1]["id"] != id {
		t.Fatalf("GET /v1/jobs, newest first: %d %s", code, out)
	}
	for _, k := range []string{"scheduler", "session", "operation", "state", "submitted"} {
		if _, ok := list[0][k]; !ok {
			t.Errorf("GET /v1/jobs: no %q in %v", k, list[0])
		}
	}
	if ws := list[0]["spec"].(map[string]any)["workspace"].(string); !strings.HasSuffix(ws, "/sub/dir") || !strings.HasPrefix(ws, filepath.Join(dir, "workspaces", "jobs")) {
		t.Errorf("a relative workspace is taken inside the server's: %q", ws)
	}

	// Logs: after, and follow to the end.
	code, out = l.do(t, "GET", "/v1/jobs/"+id+"/logs?after=3", "")
	if code != http.StatusOK || strings.Count(out, "\n") != 2 || !strings.Contains(out, `"seq":4`) || !strings.Contains(out, `"text":"line 5"`) {
		t.Errorf("logs after=3: %d %q", code, out)
	}
	fid := l.submit(t, counting(3, "0.3"))
	resp, err := http.Get(l.http.URL + "/v1/jobs/" + fid + "/logs?follow=1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var ln job.Line
		if err := json.Unmarshal(sc.Bytes(), &ln); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		got = append(got, fmt.Sprint(ln.Seq, ln.Text))
	}
	resp.Body.Close()
	if strings.Join(got, ",") != "1line 1,2line 2,3line 3" || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Errorf("logs follow=1: %q", got)
	}

	// Cancel: the job ends CANCELLED, its operation failed as interrupted.
	if code, out := l.do(t, "POST", "/v1/jobs/"+long+"/cancel", `{"why": "not needed"}`); code != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", code, out)
	}
	lm := l.follow(t, long, 30*time.Second)
	if f, ok := terminal(t, lm).(*protocol.Failed); !ok || f.Reason != protocol.ReasonInterrupted || f.Result.Job.State != "CANCELLED" || f.Result.Job.Reason != "not needed" {
		t.Errorf("the cancelled job's end: %s", lm[len(lm)-1].Payload)
	}

	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/jobs/local-nope", ""},
		{"GET", "/v1/jobs/slurm-12/logs", ""},
		{"POST", "/v1/jobs/local-nope/cancel", `{}`},
	} {
		if code, out := l.do(t, c.method, c.path, c.body); code != http.StatusNotFound {
			t.Errorf("%s %s: %d %s: want 404", c.method, c.path, code, out)
		}
	}
	for _, c := range []struct{ body, want string }{
		{`{"command": ["true"], "wokspace": "x"}`, `unknown field "wokspace"`},
		{`{"command": ["true"], "scheduler": "pbs"}`, `scheduler "pbs": not available here (choose local)`},
		{`{"command": ["true"], "script": "true"}`, "not both"},
		{`{"command": ["true"], "hotfix": "sometimes"}`, `hotfix "sometimes"`},
		{`{"command": ["true"], "resources": {"cores": -1}}`, "resources.cores: -1"},
	} {
		code, out := l.do(t, "POST", "/v1/jobs", c.body)
		var e struct{ Error string }
		json.Unmarshal([]byte(out), &e)
		if code != http.StatusBadRequest || !strings.Contains(e.Error, c.want) {
			t.Errorf("POST /v1/jobs %s: %d %s: want 400 %q", c.body, code, out, c.want)
		}
	}
	l.close()
	testutil.ReplayStore(t, reopen(t, dir))
}

// A client of the server names no host directory for a job.
func TestJobHostileWorkspace(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, nil)
	for _, ws := range []string{"/", "/root", "/etc/..", "../../etc", "a/../../b", "..", "~root"} {
		code, out := l.do(t, "POST", "/v1/jobs", fmt.Sprintf(`{"command": ["touch", "pwned"], "workspace": %q}`, ws))
		var e struct{ Error string }
		json.Unmarshal([]byte(out), &e)
		if code != http.StatusBadRequest || !strings.Contains(e.Error, "workspace: "+fmt.Sprintf("%q", ws)) {
			t.Errorf("workspace %q: %d %s: want 400 naming the workspace", ws, code, out)
		}
	}
	if code, out := l.do(t, "GET", "/v1/jobs", ""); code != http.StatusOK || out != "[]\n" {
		t.Errorf("after hostile requests, jobs: %d %s", code, out)
	}
	// Through the scheduler the faces use (MCP, the agent), the same.
	for _, ws := range []string{"/", "/root", "../../etc"} {
		if _, err := l.srv.Jobs()["local"].Submit(context.Background(), &job.Spec{Command: []string{"true"}, Workspace: ws}); err == nil || !strings.Contains(err.Error(), "workspace") {
			t.Errorf("Server.Jobs().Submit in %q: %v", ws, err)
		}
	}
}

// An in-process caller with a workspace of its own (an agent run's) submits through JobsIn:
// the job runs in that workspace, is an operation of the log at once (not only once adopted),
// and a workspace outside it is refused.
func TestJobsIn(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	// No adoption during the test: only JobsIn puts the job in the log.
	l := openJobLab(t, dir, func(c *server.Config) { c.JobPoll = time.Hour })
	root := filepath.Join(dir, "workspaces", "run-x")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	jobs := l.srv.JobsIn(root)["local"]
	id, err := jobs.Submit(context.Background(), &job.Spec{Script: "echo here > out.txt", Workspace: filepath.Join(root, "sub")})
	if err != nil {
		t.Fatal(err)
	}
	if msgs := waitOp(t, l.store, string(id), 30*time.Second); msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Errorf("the job's operation ended with %s", msgs[len(msgs)-1].Type)
	}
	if b, err := os.ReadFile(filepath.Join(root, "sub", "out.txt")); err != nil || string(b) != "here\n" {
		t.Errorf("the job did not run in the caller's workspace: %q, %v", b, err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{dir, "/etc", filepath.Join(root, ".."), filepath.Join(root, "etc"), "sub"} {
		if _, err := jobs.Submit(context.Background(), &job.Spec{Command: []string{"true"}, Workspace: ws}); err == nil || !strings.Contains(err.Error(), "not inside the caller's workspace") {
			t.Errorf("JobsIn(%s).Submit in %q: %v, want a refusal", root, ws, err)
		}
	}
	if _, err := l.srv.JobsIn(t.TempDir())["local"].Submit(context.Background(), &job.Spec{Command: []string{"true"}, Workspace: root}); err == nil {
		t.Error("a root outside the server's workspaces was taken")
	}
}

// 501 when the server runs no jobs.
func TestJobNone(t *testing.T) {
	srv, err := server.New(context.Background(), server.Config{Config: runner.Config{Store: protocol.NewMemStore(), Log: log.New(t.Output(), "", 0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := httptest.NewServer(srv)
	defer h.Close()
	resp, err := http.Get(h.URL + "/v1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented || !strings.Contains(string(b), "runs no jobs") {
		t.Errorf("GET /v1/jobs without jobs: %d %s", resp.StatusCode, b)
	}
	if srv.Jobs() != nil {
		t.Errorf("Server.Jobs without Config.Jobs: %v", srv.Jobs())
	}
}

// reopen opens dir's log again once the server over it has closed. Like labmate serve, it
// waits for the file lock: a process forked while the lock was open holds it until it execs.
func reopen(t *testing.T, dir string) protocol.Store {
	t.Helper()
	s, err := locallog.Open(dir, "serve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A server stopped while its job runs detaches from it; the next server over the same log
// and data follows it on to its end, every line logged exactly once.
func TestJobRestart(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, nil)
	id := l.submit(t, counting(40, "0.05"))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var msgs []*protocol.EnhancedMessage
		for m, err := range l.store.Operation(context.Background(), id, id) {
			if err == nil {
				msgs = append(msgs, m)
			}
		}
		if seqs, _ := jobSeqs(t, msgs); len(seqs) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job logged no lines")
		}
	}
	l.close() // the job runs on
	st := reopen(t, dir)
	var open bool
	ops, _ := st.Operations(context.Background(), id)
	open = len(ops) == 1 && !ops[0].State.Terminal()
	st.Close()
	if !open {
		t.Fatalf("after Close, the job's operation: %+v: want it open", ops)
	}

	l2 := openJobLab(t, dir, nil)
	msgs := waitOp(t, l2.store, id, 30*time.Second)
	if _, ok := terminal(t, msgs).(*protocol.Complete); !ok {
		t.Fatalf("after the restart the job ended %s %s", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	seqs, _ := jobSeqs(t, msgs)
	want := make([]int64, 40)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(seqs, want) {
		t.Errorf("job_seq over the restart: %v: want 1…40, each once", seqs)
	}
	l2.close()
	testutil.ReplayStore(t, reopen(t, dir))
}

// A job operation whose scheduler the next server does not have is closed, saying so.
func TestJobRestartWithoutScheduler(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, nil)
	id := l.submit(t, `{"script": "echo hi; sleep 30"}`)
	l.close()
	l2 := openJobLab(t, dir, func(c *server.Config) { c.Jobs = job.Schedulers{} })
	msgs := waitOp(t, l2.store, id, 10*time.Second)
	if f, ok := terminal(t, msgs).(*protocol.Failed); !ok || f.Reason != protocol.ReasonError || !strings.Contains(f.Error, "has no local scheduler") {
		t.Errorf("a job whose scheduler is gone: %s %s", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	l2.close()
	testutil.ReplayStore(t, reopen(t, dir))
}

// Jobs submitted beside the server, straight to its scheduler (labmate job submit over the
// same data directory), before it starts and while it runs, are adopted: logged in their own
// sessions and watched to their end. Those that ended before the server looked are logged too,
// however many.
func TestJobAdopt(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	cli, err := local.Open(dir, &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2, Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := map[job.ID][]string{}
	for i := range 10 { // more than one look adopts of ended jobs
		ended, err := cli.Submit(ctx, &job.Spec{Name: "ended", Script: fmt.Sprintf("echo zero %d", i), Workspace: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		for st, err := range cli.Watch(ctx, ended) {
			if err != nil {
				t.Fatal(err)
			}
			if st.State.Terminal() {
				break
			}
		}
		want[ended] = []string{fmt.Sprintf("zero %d", i)}
	}
	before, err := cli.Submit(ctx, &job.Spec{Name: "before", Script: "sleep 0.5; echo one; echo two", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cli.Close()
	l := openJobLab(t, dir, nil)
	cli, err = local.Open(dir, &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2, Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	during, err := cli.Submit(ctx, &job.Spec{Name: "during", Script: "sleep 1; echo three", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want[before], want[during] = []string{"one", "two"}, []string{"three"}
	for id, want := range want {
		msgs := waitOp(t, l.store, string(id), 30*time.Second)
		if _, ok := terminal(t, msgs).(*protocol.Complete); !ok {
			t.Errorf("adopted job %s ended %s %s", id, msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
		}
		if _, lines := jobSeqs(t, msgs); !slices.Equal(lines, want) {
			t.Errorf("adopted job %s logged %q, want %q", id, lines, want)
		}
	}
	code, out := l.do(t, "GET", "/v1/jobs/"+string(during), "")
	if code != http.StatusOK || !strings.Contains(out, `"session":"`+string(during)+`"`) {
		t.Errorf("GET an adopted job: %d %s", code, out)
	}
	l.close()
	testutil.ReplayStore(t, reopen(t, dir))
}

func TestMain(m *testing.M) {
	if path := os.Getenv(appenderEnv); path != "" { // BenchmarkAppendLatency's second process
		appender(path)
		return
	}
	slurmtest.Main(m)
}

// A sloshing SCF submitted over REST is cancelled by perception: the server watches the
// jobs it submits.
func TestJobSloshingSCF(t *testing.T) {
	if _, err := exec.LookPath("pw.x"); err != nil {
		t.Skip("pw.x is not installed")
	}
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, nil)
	script := fmt.Sprintf("cat > al4.in <<'IN'\n%sIN\npw.x -in al4.in\n",
		testutil.CorpusInput(t, "f_qe_scf_sloshing", "electron_maxstep = 60", "electron_maxstep = 40"))
	body, _ := json.Marshal(map[string]any{"name": "al4-scf", "script": script, "resources": map[string]any{"cores": 1, "wall_time_s": 300}})
	start := time.Now()
	id := l.submit(t, string(body))
	msgs := l.follow(t, id, 3*time.Minute)
	f, ok := terminal(t, msgs).(*protocol.Failed)
	if !ok || f.Reason != protocol.ReasonInterrupted || f.Verdict == nil || f.Verdict.State != protocol.Error ||
		f.Result == nil || f.Result.Job == nil || f.Result.Job.State != "CANCELLED" || !strings.Contains(f.Result.Job.Reason, "perception: ") {
		t.Fatalf("the sloshing SCF ended %s %s: want cancelled by perception's Error", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	t.Logf("cancelled by perception (%s: %s) %.1fs after it was submitted", f.Verdict.Detector, f.Verdict.Message, time.Since(start).Seconds())
	l.close()
	testutil.ReplayStore(t, reopen(t, dir))
}

// One job through REST on the real one-node Slurm: submitted, followed over WebSocket to
// its end, its log read back.
func TestJobSlurm(t *testing.T) {
	c := slurmtest.Shared(t)
	sl, err := slurm.New(t.TempDir(), &slurm.Options{Env: c.Env, Poll: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, func(cfg *server.Config) { cfg.Jobs["slurm"] = sl })
	id := l.submit(t, `{"scheduler": "slurm", "script": "echo one; sleep 1; echo two", "resources": {"cores": 1}}`)
	if !strings.HasPrefix(id, "slurm-") {
		t.Fatalf("id %q", id)
	}
	msgs := l.follow(t, id, 2*time.Minute)
	if _, ok := terminal(t, msgs).(*protocol.Complete); !ok {
		t.Fatalf("the Slurm job ended %s %s", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	if _, lines := jobSeqs(t, msgs); !slices.Equal(lines, []string{"one", "two"}) {
		t.Errorf("the Slurm job logged %q", lines)
	}
	code, out := l.do(t, "GET", "/v1/jobs/"+id+"/logs", "")
	if code != http.StatusOK || !strings.Contains(out, `"text":"two"`) {
		t.Errorf("logs of the Slurm job: %d %s", code, out)
	}
	code, out = l.do(t, "GET", "/v1/jobs/"+id, "")
	if code != http.StatusOK || !strings.Contains(out, `"scheduler":"slurm"`) || !strings.Contains(out, `"state":"COMPLETED"`) {
		t.Errorf("GET the Slurm job: %d %s", code, out)
	}
}
