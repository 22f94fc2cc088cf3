package slurm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/slurm"
	"github.com/labmate/labmate/job/slurm/slurmtest"
)

// Every test here runs against one real Slurm cluster on localhost (slurmtest.Shared), in
// parallel: the node declares 8 CPUs and the jobs mostly sleep.
func TestMain(m *testing.M) { slurmtest.Main(m) }

const poll = 200 * time.Millisecond

func newScheduler(t testing.TB) (*slurm.Scheduler, string) {
	t.Helper()
	c := slurmtest.Shared(t)
	dir := t.TempDir()
	s, err := slurm.New(dir, &slurm.Options{Env: c.Env, Poll: poll})
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func submit(t testing.TB, s job.Scheduler, spec *job.Spec) job.ID {
	t.Helper()
	if spec.Workspace == "" {
		spec.Workspace = t.TempDir()
	}
	id, err := s.Submit(context.Background(), spec)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if !strings.HasPrefix(string(id), "slurm-") {
		t.Fatalf("id %q does not start with slurm-", id)
	}
	return id
}

// watch follows a job to its end and returns the states it went through and its last status.
func watch(t testing.TB, s job.Scheduler, id job.ID, within time.Duration) ([]job.State, *job.Status) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var states []job.State
	var last *job.Status
	for st, err := range s.Watch(ctx, id) {
		if err != nil {
			t.Fatalf("Watch %s after %v: %v", id, states, err)
		}
		states = append(states, st.State)
		last = st
	}
	if last == nil || !last.State.Terminal() {
		t.Fatalf("Watch %s ended without a terminal state: %v", id, states)
	}
	return states, last
}

// waitState polls Status until the job is in state want.
func waitState(t testing.TB, s job.Scheduler, id job.ID, want job.State, within time.Duration) *job.Status {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, err := s.Status(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == want {
			return st
		}
		if st.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("job %s is %s (%s), waiting for %s", id, st.State, st.Reason, want)
		}
		time.Sleep(poll)
	}
}

func logs(t testing.TB, s job.Scheduler, id job.ID, after int64, follow bool) []*job.Line {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var lines []*job.Line
	for l, err := range s.Logs(ctx, id, after, follow) {
		if err != nil {
			t.Fatalf("Logs %s: %v", id, err)
		}
		lines = append(lines, l)
	}
	return lines
}

func texts(lines []*job.Line) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.Stream+": "+l.Text)
	}
	return out
}

// checkStates: QUEUED and RUNNING may be missed between polls, but never go backwards.
func checkStates(t testing.TB, states []job.State) {
	t.Helper()
	rank := map[job.State]int{job.Queued: 0, job.Running: 1}
	for i := 1; i < len(states); i++ {
		a, b := states[i-1], states[i]
		if a == b || a.Terminal() || (!b.Terminal() && rank[b] < rank[a]) {
			t.Fatalf("Watch went %v", states)
		}
	}
}

func TestScriptEnvNameWorkspace(t *testing.T) {
	t.Parallel()
	s, _ := newScheduler(t)
	ws := t.TempDir()
	name := `scf "Si" | 20 Ry, take 2`
	id := submit(t, s, &job.Spec{
		Name:      name,
		Script:    "#!/bin/bash\nset -e\necho \"$GREETING\"\npwd\necho \"$SLURM_JOB_NAME\"\n",
		Workspace: ws,
		Env:       map[string]string{"GREETING": "hello, world|it's $HOME"},
	})
	_, st := watch(t, s, id, 60*time.Second)
	if st.State != job.Completed {
		t.Fatalf("status %+v", st)
	}
	want := []string{"stdout: hello, world|it's $HOME", "stdout: " + ws, "stdout: " + name}
	if diff := cmp.Diff(want, texts(logs(t, s, id, 0, false))); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

func TestExitCodesAndSignals(t *testing.T) {
	t.Parallel()
	s, _ := newScheduler(t)
	code := func(n int) *int { return &n }
	for _, tc := range []struct {
		name   string
		spec   job.Spec
		state  job.State
		exit   *int
		signal string
	}{
		{"exit 0", job.Spec{Script: "true"}, job.Completed, code(0), ""},
		{"exit 3", job.Spec{Script: "echo failing; exit 3"}, job.Failed, code(3), ""},
		{"command exit 42", job.Spec{Command: []string{"sh", "-c", "exit 42"}}, job.Failed, code(42), ""},
		{"script killed", job.Spec{Script: "kill -KILL $$"}, job.Failed, nil, "SIGKILL"},
		{"command terminated", job.Spec{Command: []string{"sh", "-c", "kill -TERM $$"}}, job.Failed, nil, "SIGTERM"},
		{"missing command", job.Spec{Command: []string{"/nonexistent/pw.x"}}, job.Failed, code(127), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := tc.spec
			_, st := watch(t, s, submit(t, s, &spec), 60*time.Second)
			if st.State != tc.state || st.Signal != tc.signal || !cmp.Equal(st.ExitCode, tc.exit) {
				t.Errorf("got %s exit %v signal %q (%s), want %s exit %v signal %q",
					st.State, deref(st.ExitCode), st.Signal, st.Reason, tc.state, deref(tc.exit), tc.signal)
			}
			if st.State == job.Failed && st.Reason == "" {
				t.Errorf("a failed job without a reason: %+v", st)
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestLogsFollowAfterAndFiles(t *testing.T) {
	t.Parallel()
	s, dir := newScheduler(t)
	id := submit(t, s, &job.Spec{
		Script: `sleep 0.5; mkdir calc # a followed file may appear late
for i in 1 2 3 4; do echo "step $i"; echo "energy $i" >> calc/out.log; sleep 0.3; done
echo warn >&2
printf 'no newline at the end'`,
		Follow: []string{"calc/out.log"},
	})
	all := logs(t, s, id, 0, true)
	got := texts(all)
	want := []string{"stdout: step 1", "stdout: step 2", "stdout: step 3", "stdout: step 4", "stdout: no newline at the end",
		"stderr: warn", "calc/out.log: energy 1", "calc/out.log: energy 2", "calc/out.log: energy 3", "calc/out.log: energy 4"}
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Fatalf("followed logs (-want +got):\n%s", diff)
	}
	for i, l := range all {
		if l.Seq != int64(i+1) || l.Time.IsZero() {
			t.Fatalf("line %d: seq %d time %v", i, l.Seq, l.Time)
		}
	}
	// The same numbering for a second reader, a new Scheduler value and a resumed one.
	again := logs(t, s, id, 0, false)
	if diff := cmp.Diff(all, again); diff != "" {
		t.Errorf("second read differs:\n%s", diff)
	}
	fresh, err := slurm.New(dir, &slurm.Options{Env: slurmtest.Shared(t).Env, Poll: poll})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all[4:], logs(t, fresh, id, 4, true)); diff != "" {
		t.Errorf("after=4 from a fresh scheduler (-want +got):\n%s", diff)
	}
	if n := len(logs(t, fresh, id, int64(len(all)), true)); n != 0 {
		t.Errorf("after the last line: %d lines", n)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestFollowedAgain is what survives `labmate serve` being killed: the job keeps running in
// Slurm, and a new Scheduler over the same directory lists it, resumes its log after the last
// line the old one read, and sees it end.
func TestFollowedAgain(t *testing.T) {
	t.Parallel()
	s, dir := newScheduler(t)
	id := submit(t, s, &job.Spec{Name: "md", Script: "for i in $(seq 1 8); do echo \"tick $i\"; sleep 0.3; done"})
	ctx, cancel := context.WithCancel(context.Background())
	var seen []*job.Line
	for l, err := range s.Logs(ctx, id, 0, true) {
		if err != nil {
			t.Fatal(err)
		}
		if seen = append(seen, l); len(seen) == 3 {
			break
		}
	}
	cancel()
	s = nil // the old process is gone

	fresh, err := slurm.New(dir, &slurm.Options{Env: slurmtest.Shared(t).Env, Poll: poll})
	if err != nil {
		t.Fatal(err)
	}
	list, err := fresh.List(context.Background())
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Name != "md" {
		t.Fatalf("List: %v %+v", err, list)
	}
	rest := logs(t, fresh, id, seen[len(seen)-1].Seq, true)
	var got []string
	for _, l := range append(seen, rest...) {
		got = append(got, fmt.Sprintf("%d %s", l.Seq, l.Text))
	}
	var want []string
	for i := 1; i <= 8; i++ {
		want = append(want, fmt.Sprintf("%d tick %d", i, i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log across schedulers (-want +got):\n%s", diff)
	}
	if _, st := watch(t, fresh, id, 30*time.Second); st.State != job.Completed {
		t.Errorf("status %+v", st)
	}
}

func TestResources(t *testing.T) {
	t.Parallel()
	s, _ := newScheduler(t)
	id := submit(t, s, &job.Spec{
		Script:    `echo "$SLURM_CPUS_PER_TASK $SLURM_MEM_PER_NODE $SLURM_JOB_PARTITION"; scontrol show job $SLURM_JOB_ID | grep -o 'TimeLimit=[^ ]*'`,
		Resources: job.Resources{Cores: 2, MemoryBytes: 300 << 20, WallTime: 90 * time.Second, Partition: "debug"},
		Env:       map[string]string{"SLURM_CONF": slurmtest.Shared(t).Conf},
	})
	if _, st := watch(t, s, id, 60*time.Second); st.State != job.Completed {
		t.Fatalf("status %+v", st)
	}
	want := []string{"stdout: 2 300 debug", "stdout: TimeLimit=00:02:00"}
	if diff := cmp.Diff(want, texts(logs(t, s, id, 0, false))); diff != "" {
		t.Errorf("resources seen by the job (-want +got):\n%s", diff)
	}
	// What the cluster cannot give is refused at submission, with Slurm's words.
	for _, tc := range []struct {
		r    job.Resources
		want string
	}{
		{job.Resources{GPUs: 1}, "gres"},
		{job.Resources{Partition: "nope"}, "partition"},
	} {
		_, err := s.Submit(context.Background(), &job.Spec{Script: "true", Workspace: t.TempDir(), Resources: tc.r})
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), tc.want) {
			t.Errorf("resources %+v: error %v, want one about %s", tc.r, err, tc.want)
		}
	}
}

// TestLost: a job Slurm has forgotten (past MinJobAge, no accounting) that nobody saw end.
func TestLost(t *testing.T) {
	t.Parallel()
	s, dir := newScheduler(t)
	id := submit(t, s, &job.Spec{Script: "echo last words"})
	watch(t, s, id, 60*time.Second)
	// Make the record point at a job id the controller never had, as if it had forgotten it.
	os.Remove(filepath.Join(dir, string(id), "final.json"))
	b, _ := os.ReadFile(filepath.Join(dir, string(id), "job.json"))
	native := strings.TrimPrefix(string(id), "slurm-")
	b = []byte(strings.Replace(string(b), `"native": "`+native+`"`, `"native": "987654"`, 1))
	os.WriteFile(filepath.Join(dir, string(id), "job.json"), b, 0o644)

	st, err := s.Status(context.Background(), id)
	if err != nil || st.State != job.Lost || !strings.Contains(st.Reason, "last words") {
		t.Fatalf("Status: %v %+v", err, st)
	}
}

func TestListOldestFirst(t *testing.T) {
	t.Parallel()
	s, _ := newScheduler(t)
	a := submit(t, s, &job.Spec{Name: "a", Script: "true"})
	b := submit(t, s, &job.Spec{Name: "b", Script: "true"})
	list, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []job.ID
	for _, st := range list {
		ids = append(ids, st.ID)
	}
	if diff := cmp.Diff([]job.ID{a, b}, ids); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

func newCluster(t testing.TB) *slurmtest.Cluster { return slurmtest.Shared(t) }

// TestControllerOutage: Watch and a followed Logs outlast a controller that stops answering
// for a while (here an scontrol that fails its first calls, as during a slurmctld restart).
func TestControllerOutage(t *testing.T) {
	t.Parallel()
	c := slurmtest.Shared(t)
	bin := t.TempDir()
	for _, name := range []string{"sbatch", "scancel", "sacct"} {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	real, err := exec.LookPath("scontrol")
	if err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(bin, "calls")
	fake := fmt.Sprintf(`#!/bin/sh
n=$(cat %[1]s 2>/dev/null || echo 0); echo $((n+1)) > %[1]s
if [ "$n" -ge 1 ] && [ "$n" -le 4 ]; then
	echo "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2; exit 1
fi
exec %[2]s "$@"
`, count, real)
	if err := os.WriteFile(filepath.Join(bin, "scontrol"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := slurm.New(t.TempDir(), &slurm.Options{Bin: bin, Env: c.Env, Poll: poll})
	if err != nil {
		t.Fatal(err)
	}
	id := submit(t, s, &job.Spec{Script: "echo through"})
	if _, err := s.Status(context.Background(), id); err != nil { // call 1 works
		t.Fatal(err)
	}
	if _, err := s.Status(context.Background(), id); err == nil || !strings.Contains(err.Error(), "Unable to contact") {
		t.Fatalf("Status during the outage: %v, want the controller's error", err)
	}
	if _, st := watch(t, s, id, 60*time.Second); st.State != job.Completed {
		t.Fatalf("status %+v", st)
	}
	if got := texts(logs(t, s, id, 0, true)); !cmp.Equal(got, []string{"stdout: through"}) {
		t.Errorf("logs %q", got)
	}
}
