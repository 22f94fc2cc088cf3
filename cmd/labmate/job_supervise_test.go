package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/job/report"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// sloshingScript is a Quantum ESPRESSO SCF that never converges (perception's corpus,
// f_qe_scf_sloshing.sh, cut to 40 steps): it runs ≈25 s to its end unless perception stops it.
func sloshingScript(t *testing.T) string {
	if _, err := exec.LookPath("pw.x"); err != nil {
		t.Skip("pw.x is not installed (scripts/deps installs quantum-espresso)")
	}
	in := testutil.CorpusInput(t, "f_qe_scf_sloshing", "electron_maxstep = 60", "electron_maxstep = 40")
	return "cat > al4.in <<'IN'\n" + in + "IN\npw.x -in al4.in\n"
}

// untilEnded polls labmate job status (each a process of its own, as a user would) until the
// job has ended, and returns its last status.
func untilEnded(t *testing.T, data, id string, limit time.Duration) *job.Status {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		st := jobStatus(t, data, id)
		if st.State.Terminal() {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %v: %s", id, st.State, limit, st.Reason)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// unsupervised waits until nobody holds job id's supervisor lock: its supervisor has exited.
func unsupervised(t *testing.T, data, id string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(data, "jobs", id, "supervisor.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("job %s has no supervisor lock: %v", id, err)
	}
	defer f.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: its supervisor still runs 20 s after the job ended", id)
		}
	}
}

// iterations counts the SCF iterations in a job's log.
func iterations(t *testing.T, data, id string) int {
	t.Helper()
	out, errOut, code := jobCLI(t, data, t.TempDir(), "", "logs", id)
	if code != 0 {
		t.Fatalf("logs %s: exit %d: %s", id, code, errOut)
	}
	return strings.Count(out, "iteration #")
}

// A sloshing SCF submitted with labmate job submit --script, with no other labmate process
// open (only labmate job status now and then, as a user polls), is stopped by its supervisor
// as fast as labmate job wait stops the same job without one: its verdict in the job's status
// and the reason. The yardstick, run at the same time so that both share the machine's load:
// the same job followed as labmate job wait follows it (report.Follow, in this process, over a
// scheduler that starts no supervisor).
func TestJobSupervisorStopsSloshingSCF(t *testing.T) {
	script := sloshingScript(t)

	// Followed by job wait, with no supervisor: the yardstick.
	dir2, data2 := t.TempDir(), t.TempDir()
	s, err := local.Open(data2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	jid, err := s.Submit(ctx, &job.Spec{Name: "al4", Script: script, Workspace: dir2})
	if err != nil {
		t.Fatal(err)
	}
	st2, err := s.Status(ctx, jid)
	if err != nil {
		t.Fatal(err)
	}
	type followed struct {
		v   *protocol.Verdict
		err error
	}
	waitDone := make(chan followed, 1)
	go func() {
		v, err := report.Follow(ctx, s, st2, 0, nil, io.Discard)
		waitDone <- followed{v, err}
	}()

	// Submitted alone.
	dir, data := t.TempDir(), t.TempDir()
	write(t, dir, "run.sh", script)
	out, errOut, code := jobCLI(t, data, dir, "", "submit", "--name", "al4", "--script", "run.sh")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	st := untilEnded(t, data, id, 3*time.Minute)
	unsupervised(t, data, id)
	if st.State != job.Cancelled || !strings.HasPrefix(st.Reason, "perception: profile: ") {
		t.Fatalf("submitted alone: %s (%s): want CANCELLED by perception", st.State, st.Reason)
	}
	if st.Verdict == nil || st.Verdict.State != protocol.Error || !strings.Contains(st.Reason, st.Verdict.Message) {
		t.Errorf("submitted alone: the verdict in the status is %+v, want the Error that stopped it (%s)", st.Verdict, st.Reason)
	}
	alone, aloneIt := st.Ended.Sub(st.Started), iterations(t, data, id)
	text, _, _ := jobCLI(t, data, dir, "", "status", id)
	if !strings.Contains(text, "perceived: Error · profile: ") {
		t.Errorf("status does not say what perception saw:\n%s", text)
	}
	log, _ := os.ReadFile(filepath.Join(data, "jobs", id, "supervisor.log"))
	if !strings.Contains(string(log), "perception stopped it: profile: ") {
		t.Errorf("the supervisor's log:\n%s", log)
	}

	f := <-waitDone
	if f.err != nil || f.v == nil {
		t.Fatalf("job wait: %v, verdict %v: want stopped by perception", f.err, f.v)
	}
	if st2, err = s.Status(ctx, jid); err != nil || st2.State != job.Cancelled {
		t.Fatalf("job wait: %+v %v: want CANCELLED", st2, err)
	}
	waited, waitedIt := st2.Ended.Sub(st2.Started), iterations(t, data2, string(jid))

	t.Logf("sloshing SCF stopped by perception: submitted alone (its supervisor) after %.2fs and %d SCF iterations; under job wait after %.2fs and %d iterations",
		alone.Seconds(), aloneIt, waited.Seconds(), waitedIt)
	if aloneIt > waitedIt+3 || alone > waited+waited/2+3*time.Second {
		t.Errorf("submitted alone the job ran %v (%d iterations), under job wait %v (%d): want as fast", alone, aloneIt, waited, waitedIt)
	}
}

// A job that writes past its --disk quota is stopped by its supervisor, with labmate gone:
// FAILED, the quota and how much was written in its reason. fallocate, which the quota's
// watchdog would see late, is refused in a job as in a kernel.
func TestJobDiskQuota(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	write(t, dir, "fill.sh", "fallocate -l 1G big || echo fallocate refused\nfor i in $(seq 1 100); do dd if=/dev/zero of=f$i bs=1M count=4 status=none; done\necho filled\nsleep 60\n")
	out, errOut, code := jobCLI(t, data, dir, "", "submit", "--disk", "64M", "--script", "fill.sh")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	st := untilEnded(t, data, id, time.Minute)
	unsupervised(t, data, id)
	if st.State != job.Failed || !strings.Contains(st.Reason, "workspace quota exceeded") || !strings.Contains(st.Reason, "of 64 MiB written to the workspace "+dir) {
		t.Fatalf("%s (%s): want FAILED, saying the workspace went past its 64 MiB quota", st.State, st.Reason)
	}
	var used int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			used += fi.Size()
		}
	}
	t.Logf("job %s: %s; %d MiB in the workspace", id, st.Reason, used>>20)
	if out, _, _ := jobCLI(t, data, dir, "", "logs", id); !strings.Contains(out, "fallocate refused") {
		t.Errorf("fallocate was not refused: the job's log %q", out)
	}
	if used > 64<<20+64<<20 {
		t.Errorf("the workspace holds %d MiB: want at most the quota and its overshoot (64 MiB)", used>>20)
	}
	if text, _, _ := jobCLI(t, data, dir, "", "status", id); !strings.Contains(text, "disk quota 64 MiB") {
		t.Errorf("status does not show the quota:\n%s", text)
	}
	if _, errOut, code := jobCLI(t, data, dir, "", "submit", "--disk", "1M", "--", "true"); code != 2 || !strings.Contains(errOut, "below the minimum") {
		t.Errorf("--disk 1M: exit %d, %q", code, errOut)
	}
}

// A local job gets a workspace quota by default (job status says which), --disk 0 asks for
// none, and a job making 300 000 empty files — which allocate no blocks, and which no file-size
// limit stops — against a 64 MiB quota is stopped with its workspace grown by at most 64 MiB
// more, each inode charged sandbox.InodeBytes.
func TestJobDiskQuotaFiles(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	out, errOut, code := jobCLI(t, data, dir, "", "submit", "--", "true")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	untilEnded(t, data, strings.TrimSpace(out), time.Minute)
	if text, _, _ := jobCLI(t, data, dir, "", "status", strings.TrimSpace(out)); !strings.Contains(text, "disk quota "+sandbox.FormatSize(local.DefaultDiskBytes)) {
		t.Errorf("a job that asked for no quota: status does not show the default one:\n%s", text)
	}
	out, errOut, code = jobCLI(t, data, dir, "", "submit", "--disk", "0", "--", "true")
	if code != 0 {
		t.Fatalf("submit --disk 0: exit %d: %s", code, errOut)
	}
	untilEnded(t, data, strings.TrimSpace(out), time.Minute)
	if text, _, _ := jobCLI(t, data, dir, "", "status", strings.TrimSpace(out)); !strings.Contains(text, "no disk quota") {
		t.Errorf("--disk 0: status does not say there is no quota:\n%s", text)
	}

	files := `import os
for d in range(300):
    os.mkdir("e%d" % d)
    for i in range(1000):
        os.close(os.open("e%d/%d" % (d, i), os.O_WRONLY | os.O_CREAT, 0o644))
print("made 300000 files", flush=True)
`
	write(t, dir, "files.py", files)
	base, _ := sandbox.WorkspaceBytes(dir, 0)
	out, errOut, code = jobCLI(t, data, dir, "", "submit", "--disk", "64M", "--", "python3", "files.py")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	st := untilEnded(t, data, id, 5*time.Minute)
	unsupervised(t, data, id)
	grown, _ := sandbox.WorkspaceBytes(dir, 0)
	grown -= base
	t.Logf("job %s: %s; the workspace grew by %d MiB (%d inodes' worth)", id, st.Reason, grown>>20, grown/sandbox.InodeBytes)
	if st.State != job.Failed || !strings.Contains(st.Reason, "workspace quota exceeded") {
		t.Fatalf("%s (%s): want FAILED, past its 64 MiB quota", st.State, st.Reason)
	}
	if grown > 128<<20 {
		t.Errorf("the workspace grew by %d MiB: want at most the quota and its overshoot (64 MiB)", grown>>20)
	}
}

// supervisorPID is the pid of job id's supervisor, 0 when none runs.
func supervisorPID(id string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), "\x00job\x00supervise\x00") && strings.HasSuffix(string(b), "\x00"+id+"\x00") {
			return pid
		}
	}
	return 0
}

// A supervisor killed with SIGKILL is started again by the next labmate command that looks at
// the job (here labmate job status), and that one stops the job when it goes wrong.
func TestJobSupervisorKilled(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	diverging := `sleep 3; for i in $(seq 1 25); do echo "residual = $((10**i))"; sleep 0.2; done`
	out, errOut, code := jobCLI(t, data, dir, "", "submit", "--", "bash", "-c", diverging)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	pid := 0
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if pid = supervisorPID(id); pid == 0 && time.Now().After(deadline) {
			t.Fatal("no supervisor runs for the job")
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if supervisorPID(id) != pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the supervisor survived SIGKILL")
		}
	}
	st := untilEnded(t, data, id, time.Minute)
	unsupervised(t, data, id)
	if st.State != job.Cancelled || !strings.HasPrefix(st.Reason, "perception: divergence") {
		t.Fatalf("%s (%s): want CANCELLED by perception, watched by a new supervisor", st.State, st.Reason)
	}
	if again := supervisorPID(id); again != 0 {
		t.Errorf("a supervisor (%d) still runs after the job ended", again)
	}
}
