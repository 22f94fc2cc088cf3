package local

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/sandbox"
)

// evilSource is a library whose constructor appends, to the file $EVIL_MARK, the process's
// mount namespace and executable: where it ran.
const evilSource = `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
	const char *m = getenv("EVIL_MARK");
	char ns[128] = {0}, exe[512] = {0};
	FILE *f;
	if (!m) return;
	readlink("/proc/self/ns/mnt", ns, sizeof ns - 1);
	readlink("/proc/self/exe", exe, sizeof exe - 1);
	f = fopen(m, "a");
	if (!f) return;
	fprintf(f, "%s %s\n", ns, exe);
	fclose(f);
}
`

// buildEvil compiles evilSource into ws/evil.so, as a cell could with the sandbox's gcc.
func buildEvil(t *testing.T, ws string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed:", err)
	}
	src := filepath.Join(t.TempDir(), "evil.c")
	if err := os.WriteFile(src, []byte(evilSource), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(ws, "evil.so")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v: %s", err, out)
	}
	return so
}

// LD_PRELOAD in a job's spec is refused with an error naming it.
func TestAttackLDPreloadRefused(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	for _, name := range []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "GCONV_PATH", "PYTHONSTARTUP", "BASH_ENV"} {
		_, err := s.Submit(ctx(t), &job.Spec{Command: []string{"true"}, Workspace: ws, Env: map[string]string{name: ws + "/evil.so"}})
		if !errors.Is(err, sandbox.ErrEnvRefused) || !strings.Contains(err.Error(), name) {
			t.Errorf("env %s: %v, want a refusal naming it", name, err)
		}
	}
}

// Even let through, a job's LD_PRELOAD loads its library in the sandboxed command only, never
// in a process of the host: the recorder's /bin/sh, sleep, mv, the wrapper shell, bwrap.
func TestAttackLDPreloadNotOnHost(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	so := buildEvil(t, ws)
	mark := filepath.Join(ws, "marks")
	checkUserEnv = func(map[string]string) error { return nil }
	t.Cleanup(func() { checkUserEnv = sandbox.CheckUserEnv })
	id, err := s.Submit(ctx(t), &job.Spec{Command: []string{"true"}, Workspace: ws,
		Env:       map[string]string{"LD_PRELOAD": so, "EVIL_MARK": mark},
		Resources: job.Resources{WallTime: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Completed, time.Minute)
	host, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(mark)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	inside := 0
	for _, l := range lines {
		ns, exe, _ := strings.Cut(l, " ")
		switch {
		case ns == host:
			t.Errorf("the job's LD_PRELOAD ran in a host process: %s", exe)
		case ns != "":
			inside++
		}
	}
	if inside == 0 {
		t.Errorf("the library never loaded, not even in the sandboxed command (marks %q): the test shows nothing", b)
	}
}

// The job's environment is set inside the sandbox only: the recorder and the other processes
// of the host that start the job do not have it.
func TestHostEnvClean(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	id, err := s.Submit(ctx(t), &job.Spec{Script: `echo "probe=$LABMATE_PROBE"; sleep 30`, Workspace: ws,
		Env: map[string]string{"LABMATE_PROBE": "only-inside"}})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Running, 30*time.Second)
	t.Cleanup(func() {
		s.Cancel(ctx(t), id, "done")
		waitState(t, s, id, job.Cancelled, 30*time.Second) // its recorder is done writing before the TempDir goes
	})
	r, err := s.readRecord(id)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !slicesContains(texts(t, s, id), "stdout:probe=only-inside") {
		if time.Now().After(deadline) {
			t.Fatalf("the job did not see its env: %q", texts(t, s, id))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The host's side is every process outside the sandbox's user namespace (as root, the
	// wrapper has a mount namespace of its own, but never another user namespace).
	host, _ := os.Readlink("/proc/self/ns/user")
	checked := 0
	for _, pid := range descendants(r.PID) {
		ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/user")
		if err != nil || ns != host {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		checked++
		if bytes.Contains(env, []byte("LABMATE_PROBE")) {
			exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
			t.Errorf("host process %d (%s) has the job's env", pid, exe)
		}
	}
	if checked == 0 {
		t.Error("no host process of the job found to check")
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// descendants is pid and the processes under it.
func descendants(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(out[i]) + "/task/" + strconv.Itoa(out[i]) + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// A queued job's workspace replaced by a symlink to a directory outside before the job
// starts: the job is refused, and nothing is written in the symlink's target.
func TestAttackWorkspaceSwap(t *testing.T) {
	dir, parent, scratch := t.TempDir(), t.TempDir(), t.TempDir()
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, &Options{Cores: 1})
	blocker, err := s.Submit(ctx(t), &job.Spec{Command: []string{"sleep", "120"}, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, blocker, job.Running, 30*time.Second)
	id, err := s.Submit(ctx(t), &job.Spec{Command: []string{"sh", "-c", "echo pwned >planted"}, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status(ctx(t), id); st.State != job.Queued {
		t.Fatalf("the second job is %s, want queued behind the first", st.State)
	}
	// What a cell in the workspace's parent can do while the job waits.
	if err := os.Rename(ws, ws+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(scratch, ws); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx(t), blocker, "make room"); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, s, id, job.Failed, time.Minute)
	if !strings.Contains(st.Reason, "not the directory the job was submitted with") {
		t.Errorf("reason %q, want it to say the workspace was replaced", st.Reason)
	}
	for _, d := range []string{scratch, ws + ".moved"} {
		if _, err := os.Lstat(filepath.Join(d, "planted")); err == nil {
			t.Errorf("the job ran in %s", d)
		}
	}
}

// The last check is the job's own first instruction: a workspace that is not the pinned
// directory by the time the sandbox mounts it runs nothing.
func TestPreambleRefusesOtherDirectory(t *testing.T) {
	dir, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	p, err := pinWorkspace(other) // the pin of another directory: as if ws were swapped after start's check
	if err != nil {
		t.Fatal(err)
	}
	p.Path = ws
	box, err := s.box(1, s.defMem)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := box.Command(preambled(p, []string{"A=1"}, []string{"sh", "-c", "echo pwned >planted"}), s.env(&record{Cores: 1}), ws)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Kill(cmd)
	out, err := combinedOutput(box, cmd)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), "not the directory it was submitted with") {
		t.Errorf("a workspace that is not the pinned one: %v, %q; want exit 125 saying why", err, out)
	}
	if _, err := os.Lstat(filepath.Join(ws, "planted")); err == nil {
		t.Error("the command ran")
	}
	// And the right pin runs it, with its env.
	p, err = pinWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	cmd2, err := box.Command(preambled(p, []string{"A=it's 1"}, []string{"sh", "-c", `echo "$A"`}), s.env(&record{Cores: 1}), ws)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Kill(cmd2)
	if out, err := combinedOutput(box, cmd2); err != nil || string(out) != "it's 1\n" {
		t.Errorf("the pinned workspace: %v, %q", err, out)
	}
}

// A job cannot make .labmate, where labmate's host side later serves and journals the bench:
// labmate makes it before the job starts, and the sandbox mounts it read-only.
func TestLabmateDirReadOnly(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	s := open(t, dir, nil)
	id, err := s.Submit(ctx(t), &job.Spec{Script: "echo x >.labmate/bench.jsonl && echo wrote", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	var st *job.Status
	for st, err = range s.Watch(ctx(t), id) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if st.State == job.Completed {
		t.Errorf("the job wrote .labmate/bench.jsonl: %q", texts(t, s, id))
	}
	if fi, err := os.Lstat(filepath.Join(ws, ".labmate")); err != nil || !fi.IsDir() {
		t.Errorf(".labmate: %v, want the directory labmate made", err)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".labmate", "bench.jsonl")); err == nil {
		t.Error("bench.jsonl exists")
	}
}

// A followed file that a job replaces with a symlink out of its workspace, or with a FIFO, is
// not read: the log never shows the target, and reading does not hang.
func TestAttackFollowSymlinkFIFO(t *testing.T) {
	dir, ws, outside := t.TempDir(), t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(ws, "out.log")); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, nil)
	id, err := s.Submit(ctx(t), &job.Spec{Script: "mkfifo pipe.log; echo done", Workspace: ws, Follow: []string{"out.log", "pipe.log"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *job.Status, 1)
	go func() {
		var last *job.Status
		for st, err := range s.Watch(ctx(t), id) {
			if err != nil {
				break
			}
			last = st
		}
		done <- last
	}()
	select {
	case st := <-done:
		if st == nil || st.State != job.Completed {
			t.Fatalf("job: %+v", st)
		}
	case <-time.After(time.Minute):
		t.Fatal("the job's log hangs on a FIFO")
	}
	for _, l := range texts(t, s, id) {
		if strings.Contains(l, "host secret") {
			t.Errorf("the log read the symlink's target: %q", l)
		}
	}
}

// The attacks above, with labmate run by an ordinary user (nobody): the test binary again, as
// uid 65534.
func TestAttackAsOrdinaryUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the tests as another user (as an ordinary user they ran above)")
	}
	dir, err := os.MkdirTemp("", "labmate-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "local.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.count=1", "-test.v",
		"-test.run", "^(TestAttackLDPreloadNotOnHost|TestHostEnvClean|TestAttackWorkspaceSwap|TestPreambleRefusesOtherDirectory|TestAttackFollowSymlinkFIFO)$")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "--- PASS"); n != 5 {
		t.Errorf("as nobody: %d tests passed, want 5\n%s", n, out)
	}
}

// combinedOutput starts cmd, a command of box's, and returns its stdout and stderr together.
func combinedOutput(box *sandbox.Sandbox, cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := box.Start(cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	return out.Bytes(), err
}

// A job that prints empty lines makes its log (DIR/jobs/ID/log, on the host's disk, outside
// any quota) a hundred times bigger than its output, and one that truncates and rewrites a
// followed file has it read again and again: the log must stay within its bound however the
// job writes, and say where it was cut.
func TestAttackLogFlood(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	const limit = 1 << 20
	s := open(t, dir, &Options{MaxLogBytes: limit})
	script := `head -c 524288 /dev/zero | tr '\0' '\n'
i=0; while [ $i -lt 40 ]; do head -c 65536 /dev/zero | tr '\0' '\n' >out.log; sleep 0.02; : >out.log; i=$((i + 1)); done
echo done`
	id, err := s.Submit(ctx(t), &job.Spec{Script: script, Workspace: ws, Follow: []string{"out.log"}})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Completed, time.Minute)
	lines := texts(t, s, id)
	fi, err := os.Stat(filepath.Join(dir, "jobs", string(id), "log"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.Stat(filepath.Join(dir, "jobs", string(id), "stdout"))
	t.Logf("stdout %d bytes, log %d bytes, %d lines", out.Size(), fi.Size(), len(lines))
	if fi.Size() > limit {
		t.Errorf("the job's log is %d bytes, past its bound of %d", fi.Size(), limit)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "cut") || !strings.Contains(last, "stdout") {
		t.Errorf("the log's last line %q does not say it was cut and where the output is", last)
	}
}
