package local

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/jobtest"
	"github.com/labmate/labmate/sandbox"
)

// open opens a scheduler on dir with the real sandbox, closed when the test ends.
func open(t testing.TB, dir string, o *Options) *Scheduler {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	if o == nil {
		o = &Options{}
	}
	if o.Mode == "" {
		o.Mode = sandbox.ModeBubblewrap
	}
	if o.Cores == 0 {
		o.Cores = 2
	}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestScheduler(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	jobtest.Run(t, func(t *testing.T) job.Scheduler { return s }, &jobtest.Options{Cores: 2, StreamOrder: true})
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func waitState(t testing.TB, s *Scheduler, id job.ID, want job.State, d time.Duration) *job.Status {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		st, err := s.Status(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == want {
			return st
		}
		if st.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("job %s is %s (%s), want %s", id, st.State, st.Reason, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func texts(t testing.TB, s *Scheduler, id job.ID) []string {
	t.Helper()
	var out []string
	var seq int64
	for l, err := range s.Logs(ctx(t), id, 0, false) {
		if err != nil {
			t.Fatal(err)
		}
		if l.Seq != seq+1 {
			t.Fatalf("seq %d after %d", l.Seq, seq)
		}
		seq = l.Seq
		out = append(out, l.Stream+":"+l.Text)
	}
	return out
}

// The job outlives its scheduler: closed and reopened, the new one finds it running, and then
// ended, with its logs continued in the same numbering.
func TestReopen(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	id, err := s.Submit(ctx(t), &job.Spec{Script: "echo one\nsleep 2\necho two", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	st := waitState(t, s, id, job.Running, 30*time.Second)
	// Read "one" through the first scheduler.
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(texts(t, s, id), "stdout:one") {
		if time.Now().After(deadline) {
			t.Fatal("no line one")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Close()

	s2 := open(t, dir, nil)
	st2, err := s2.Status(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if st2.State != job.Running || st2.Native != st.Native {
		t.Fatalf("reopened: %s (%s) pid %s, want running as pid %s", st2.State, st2.Reason, st2.Native, st.Native)
	}
	end := waitState(t, s2, id, job.Completed, time.Minute)
	if got, want := texts(t, s2, id), []string{"stdout:one", "stdout:two"}; !slices.Equal(got, want) {
		t.Errorf("logs %q, want %q", got, want)
	}
	if end.Ended.Sub(end.Started) < 2*time.Second {
		t.Errorf("ran %v, want ≥ 2 s", end.Ended.Sub(end.Started))
	}
}

// TestMain lets the test binary play a labmate that submits a job and is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("LABMATE_JOB_CHILD"); dir != "" {
		child(dir, os.Getenv("LABMATE_JOB_WS"))
		return
	}
	os.Exit(m.Run())
}

func child(dir, ws string) {
	s, err := Open(dir, &Options{Mode: sandbox.ModeBubblewrap, Cores: 2})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	id, err := s.Submit(context.Background(), &job.Spec{
		Script:    "for i in 1 2 3 4 5 6; do echo \"tick $i\"; echo \"file $i\" >>out.log; sleep 0.5; done\necho bye >&2",
		Workspace: ws, Follow: []string{"out.log"},
	})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for {
		st, err := s.Status(context.Background(), id)
		if err == nil && st.State == job.Running {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Read a little of the log, so that the index holds lines when the process dies.
	for l, err := range s.Logs(context.Background(), id, 0, true) {
		if err != nil || l.Seq >= 2 {
			break
		}
	}
	fmt.Println("submitted", id)
	select {}
}

// A labmate killed with SIGKILL while its job runs: the job runs on, and the next labmate
// finds it running, then completed, with every line once.
func TestSurvivesKill(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	dir, ws := t.TempDir(), t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LABMATE_JOB_CHILD="+dir, "LABMATE_JOB_WS="+ws)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("child: %q, %v", line, err)
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(line), "submitted ")
	if !ok {
		cmd.Process.Kill()
		t.Fatalf("child: %q", line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	s := open(t, dir, nil)
	st, err := s.Status(ctx(t), job.ID(id))
	if err != nil {
		t.Fatal(err)
	}
	if st.State != job.Running {
		t.Fatalf("after the submitter's SIGKILL: %s (%s), want running", st.State, st.Reason)
	}
	waitState(t, s, job.ID(id), job.Completed, time.Minute)
	var want []string
	for i := 1; i <= 6; i++ {
		want = append(want, fmt.Sprintf("stdout:tick %d", i), fmt.Sprintf("out.log:file %d", i))
	}
	want = append(want, "stderr:bye")
	got := texts(t, s, job.ID(id))
	sortedGot, sortedWant := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(sortedGot, sortedWant) {
		t.Errorf("logs %q, want (in any order across streams) %q", got, want)
	}
}

// killJob kills a job's recorder and everything in its cgroups behind the scheduler's back.
func killJob(t *testing.T, dir string, id job.ID) *record {
	t.Helper()
	r := readRec(t, dir, id)
	if err := syscall.Kill(-r.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killCgroups(r.Cgroups)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", r.PID)); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recorder %d still alive", r.PID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	os.Remove(filepath.Join(dir, "jobs", string(id), "exit"))
	return r
}

func readRec(t *testing.T, dir string, id job.ID) *record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "jobs", string(id), "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := &record{}
	if err := json.Unmarshal(b, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A job whose processes vanish without an exit record while nobody watches is LOST, with its
// last log line in the reason.
func TestLost(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	id, err := s.Submit(ctx(t), &job.Spec{Script: "echo started the run\nsleep 120", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Running, 30*time.Second)
	for deadline := time.Now().Add(30 * time.Second); ; { // let "started" be written
		if b, _ := os.ReadFile(filepath.Join(dir, "jobs", string(id), "stdout")); strings.Contains(string(b), "started the run") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job printed nothing in 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Close()
	killJob(t, dir, id)

	s2 := open(t, dir, nil)
	st, err := s2.Status(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != job.Lost || !strings.Contains(st.Reason, "started the run") {
		t.Errorf("killed behind its back: %s (%q), want %s with the last log line", st.State, st.Reason, job.Lost)
	}
	// It is not counted in the queue any more.
	id2, err := s2.Submit(ctx(t), &job.Spec{Command: []string{"true"}, Workspace: ws, Resources: job.Resources{Cores: 2}})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s2, id2, job.Completed, time.Minute)
}

// A recorded pid that now belongs to another process is not the job.
func TestPidReuse(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	id, err := s.Submit(ctx(t), &job.Spec{Script: "echo hi\nsleep 120", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Running, 30*time.Second)
	s.Close()
	r := killJob(t, dir, id)
	// A live process that is not the job now has the job's pid: this test process.
	r.PID = os.Getpid()
	b, _ := json.Marshal(r)
	if err := os.WriteFile(filepath.Join(dir, "jobs", string(id), "status.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, nil)
	if err := s2.Cancel(ctx(t), id, "must not signal the pid's new owner"); err != nil {
		t.Fatal(err)
	}
	st, err := s2.Status(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != job.Lost {
		t.Errorf("pid %d reused by another process: %s (%s), want %s", r.PID, st.State, st.Reason, job.Lost)
	}
	if !strings.Contains(st.Reason, strconv.Itoa(r.PID)) {
		t.Errorf("reason %q does not name the pid", st.Reason)
	}
}

// The queue counts memory as well as cores.
func TestQueueMemory(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, &Options{Cores: 2, MemoryBytes: 2 << 30})
	big, err := s.Submit(ctx(t), &job.Spec{Command: []string{"sleep", "120"}, Workspace: ws, Resources: job.Resources{MemoryBytes: 1536 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, big, job.Running, 30*time.Second)
	small, err := s.Submit(ctx(t), &job.Spec{Command: []string{"true"}, Workspace: ws, Resources: job.Resources{MemoryBytes: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Status(ctx(t), small)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != job.Queued || !strings.Contains(st.Reason, "1.5 GiB of 2.0 GiB") {
		t.Errorf("behind a 1.5 GiB job on 2 GiB: %s (%q), want queued for memory", st.State, st.Reason)
	}
	if err := s.Cancel(ctx(t), big, "room"); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, small, job.Completed, time.Minute)
	if _, err := s.Submit(ctx(t), &job.Spec{Command: []string{"true"}, Workspace: ws, Resources: job.Resources{MemoryBytes: 3 << 30}}); err == nil || !strings.Contains(err.Error(), "resources.memory_bytes") {
		t.Errorf("3 GiB on a 2 GiB queue: %v, want an error naming resources.memory_bytes", err)
	}
}

// Two processes that each fit the address-space limit but not, together, the memory budget:
// the cgroup's OOM killer ends one, and the reason says so.
func TestOOMKill(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	const alloc = `python3 -c "import time; b = bytearray(700 << 20); print('holding', flush=True); time.sleep(5)"`
	id, err := s.Submit(ctx(t), &job.Spec{
		Script:    alloc + " & a=$!\n" + alloc + " & b=$!\nwait $a; x=$?\nwait $b; y=$?\nexit $((x | y))",
		Workspace: ws, Resources: job.Resources{MemoryBytes: 1 << 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	var st *job.Status
	for st, err = range s.Watch(ctx(t), id) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if st.State != job.Failed || !strings.Contains(st.Reason, "OOM killer") {
		t.Errorf("two 700 MiB processes in 1 GiB: %s (%q), want FAILED by the OOM killer; log %q", st.State, st.Reason, texts(t, s, id))
	}
}

// A job runs in the kernels' sandbox: not as root, without the data directory or /root.
func TestSandboxed(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	id, err := s.Submit(ctx(t), &job.Spec{
		Script:    fmt.Sprintf("id -u\n[ -e %s ] && echo data visible || echo data hidden\n[ -e /root ] && echo root visible || echo root hidden\necho \"$LABMATE_JOB_ID\"", dir+"/jobs"),
		Workspace: ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Completed, time.Minute)
	want := []string{"stdout:" + strconv.Itoa(sandbox.UID), "stdout:data hidden", "stdout:root hidden", "stdout:" + string(id)}
	if got := texts(t, s, id); !slices.Equal(got, want) {
		t.Errorf("inside: %q, want %q", got, want)
	}
}
