package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/slurm/slurmtest"
)

// jobCLI runs labmate job VERB --data data ARGS… in dir (--data before the arguments: after
// submit's COMMAND, flags are the command's).
func jobCLI(t *testing.T, data, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return labmateEnv(t, nil, dir, stdin, jobArgs(data, args...)...)
}

func jobArgs(data string, args ...string) []string {
	return append([]string{"job", args[0], "--data", data}, args[1:]...)
}

func jobStatus(t *testing.T, data, id string) *job.Status {
	t.Helper()
	out, errOut, code := jobCLI(t, data, t.TempDir(), "", "status", "--json", id)
	var st job.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("status --json %s: exit %d, %v: %s%s", id, code, err, out, errOut)
	}
	return &st
}

func jobLines(t *testing.T, out string) []*job.Line {
	t.Helper()
	var lines []*job.Line
	for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
		if s == "" {
			continue
		}
		var l job.Line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("not a job line: %v: %q", err, s)
		}
		lines = append(lines, &l)
	}
	return lines
}

// A job submitted from the CLI runs in the sandbox after labmate exits; a new process sees it
// running, then its end; its log holds stdout, stderr and the followed file, resumable with
// --after; list shows it newest first.
func TestJobSubmitOutlivesCLI(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	script := "echo start\necho oops >&2\nfor i in 1 2 3; do echo \"energy = -$i.5\" >> scf.out; sleep 0.4; done\necho done > result.txt\necho end\n"
	write(t, dir, "run.sh", script)
	out, errOut, code := jobCLI(t, data, dir, "", "submit", "--json", "--name", "scf", "--script", "run.sh",
		"--follow", "scf.out", "--cores", "1", "--mem-limit", "512M", "--time", "5:00", "--env", "OMP_NUM_THREADS=1", "--profile", "qe")
	var st job.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("submit --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	id := string(st.ID)
	if !strings.HasPrefix(id, "local-") || st.Spec.Workspace != dir || st.Spec.Script != script || st.Spec.Resources.MemoryBytes != 512<<20 ||
		st.Spec.Resources.WallTime != 5*time.Minute || st.Spec.Env["OMP_NUM_THREADS"] != "1" || st.Spec.Profile != "qe" || st.Name != "scf" {
		t.Errorf("submitted %+v, spec %+v", st, st.Spec)
	}
	if !strings.Contains(errOut, "job "+id+" is running") || !strings.Contains(errOut, "labmate job logs -f "+id) {
		t.Errorf("submit's stderr %q", errOut)
	}
	// labmate has exited: the job runs on, and a new process sees it.
	if st := jobStatus(t, data, id); st.State != job.Running {
		t.Fatalf("status after submit exited: %s (%s)", st.State, st.Reason)
	}
	out, errOut, code = jobCLI(t, data, t.TempDir(), "", "logs", "-f", id)
	want := []string{"start", "[stderr] oops", "[scf.out] energy = -1.5", "[scf.out] energy = -2.5", "[scf.out] energy = -3.5", "end"}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("logs -f lacks %q:\n%s", w, out)
		}
	}
	if code != 0 || !strings.Contains(errOut, "job "+id+" COMPLETED (exit code 0)") {
		t.Errorf("logs -f: exit %d, stderr %q", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "result.txt")); err != nil || string(b) != "done\n" {
		t.Errorf("the job's file: %q, %v", b, err)
	}
	out, _, code = jobCLI(t, data, dir, "", "logs", "--json", id)
	all := jobLines(t, out)
	if code != 0 || len(all) != len(want) {
		t.Fatalf("logs --json: exit %d, %d lines:\n%s", code, len(all), out)
	}
	out, _, _ = jobCLI(t, data, dir, "", "logs", "--json", "--after", "2", id)
	rest := jobLines(t, out)
	if len(rest) != len(all)-2 || rest[0].Seq != 3 || *rest[0] != *all[2] {
		t.Errorf("logs --after 2: %+v, want the lines from %+v on", rest, all[2])
	}
	if st := jobStatus(t, data, id); st.State != job.Completed || st.ExitCode == nil || *st.ExitCode != 0 || st.Ended.IsZero() {
		t.Errorf("final status %+v", st)
	}
	out, _, code = jobCLI(t, data, dir, "", "status", id)
	for _, w := range []string{id + "  COMPLETED  scf", "ended:     exit code 0", "workspace: " + dir, "resources: 1 core, 512 MiB, wall time 00:05:00"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("status lacks %q:\n%s", w, out)
		}
	}

	// A second job: list puts it first.
	out, _, code = jobCLI(t, data, dir, "", "submit", "--", "echo", "second")
	second := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(second, "local-") {
		t.Fatalf("submit: exit %d, %q", code, out)
	}
	if _, errOut, code := jobCLI(t, data, dir, "", "wait", second); code != 0 {
		t.Fatalf("wait: exit %d, %s", code, errOut)
	}
	out, _, code = jobCLI(t, data, dir, "", "list", "--json")
	var sts []*job.Status
	if err := json.Unmarshal([]byte(out), &sts); err != nil || code != 0 || len(sts) != 2 || string(sts[0].ID) != second || string(sts[1].ID) != id {
		t.Fatalf("list --json: exit %d, %v, want [%s %s]: %s", code, err, second, id, out)
	}
	out, _, _ = jobCLI(t, data, dir, "", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.HasPrefix(lines[1], second) || !strings.Contains(lines[2], "COMPLETED  scf") {
		t.Errorf("list:\n%s", out)
	}
}

// Cancel stops a running job with its reason; wait, logs -f and submit --wait exit with how a
// job ended.
func TestJobCancelAndExitCodes(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	out, _, code := jobCLI(t, data, dir, "", "submit", "--", "sh", "-c", "echo going; sleep 60")
	id := strings.TrimSpace(out)
	if code != 0 {
		t.Fatalf("submit: exit %d", code)
	}
	start := time.Now()
	out, errOut, code := jobCLI(t, data, dir, "", "cancel", "--json", "--why", "wrong input deck", id)
	var st job.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || st.State != job.Cancelled || st.Reason != "wrong input deck" {
		t.Fatalf("cancel: exit %d, %v, status %+v, stderr %q", code, err, st, errOut)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if _, errOut, code := jobCLI(t, data, dir, "", "wait", id); code != 3 || !strings.Contains(errOut, "CANCELLED") || !strings.Contains(errOut, "wrong input deck") {
		t.Errorf("wait on a cancelled job: exit %d, %q", code, errOut)
	}
	if _, errOut, code := jobCLI(t, data, dir, "", "cancel", id); code != 1 || !strings.Contains(errOut, "had already ended at ") || !strings.Contains(errOut, "CANCELLED: nothing to cancel") {
		t.Errorf("cancelling an ended job: exit %d, %q; want 1 and that it had already ended", code, errOut)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"failed", []string{"submit", "--wait", "--", "sh", "-c", "exit 3"}, 1, "FAILED after "},
		{"timeout", []string{"submit", "--wait", "--time", "1s", "--", "sleep", "30"}, 124, "TIMEOUT"},
		{"completed", []string{"submit", "--wait", "--", "true"}, 0, "COMPLETED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := jobCLI(t, data, dir, "", c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) || !strings.HasPrefix(out, "local-") {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, c.code, out, errOut, c.want)
			}
		})
	}
}

// A job that does not fit beside the running ones is queued: submit says so and who starts
// it; submit --wait starts it once there is room, and ends with it.
func TestJobQueuedStartsWhileWaiting(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	cores := strconv.Itoa(runtime.NumCPU()) // every core: a second such job does not fit
	out, _, code := jobCLI(t, data, dir, "", "submit", "--name", "big", "--cores", cores, "--", "sleep", "60")
	first := strings.TrimSpace(out)
	if code != 0 {
		t.Fatalf("submit: exit %d", code)
	}
	out, errOut, code := jobCLI(t, data, dir, "", "submit", "--cores", cores, "--", "echo", "queued one ran")
	second := strings.TrimSpace(out)
	if code != 0 || !strings.Contains(errOut, "job "+second+" is QUEUED") || !strings.Contains(errOut, "labmate job wait "+second) {
		t.Fatalf("second submit: exit %d, stderr %q", code, errOut)
	}
	// Nobody holds the directory open: it stays queued.
	time.Sleep(300 * time.Millisecond)
	if st := jobStatus(t, data, second); st.State != job.Queued || st.Reason == "" {
		t.Fatalf("queued job: %s (%s)", st.State, st.Reason)
	}
	wait := exec.Command(bin, "job", "wait", second, "--data", data)
	var errb bytes.Buffer
	wait.Stderr = &errb
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := jobCLI(t, data, dir, "", "cancel", first); code != 0 {
		t.Fatalf("cancel: exit %d, %q", code, errOut)
	}
	err := wait.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err != nil || !strings.Contains(errb.String(), "COMPLETED") {
		t.Fatalf("wait for the queued job: %v, stderr %q", err, errb.String())
	}
	out, _, _ = jobCLI(t, data, dir, "", "logs", second)
	if out != "queued one ran\n" {
		t.Errorf("the queued job's log: %q", out)
	}
}

func TestJobBadInputs(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	write(t, dir, "run.sh", "echo hi\n")
	noSlurm := []string{"PATH=" + t.TempDir()} // no sbatch
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"unknownID", nil, []string{"status", "local-20200101-000000-000000-00000000"}, 2, "unknown job: local-20200101-000000-000000-00000000 (in " + data},
		{"unknownKind", nil, []string{"logs", "pbs-17"}, 2, `unknown job: "pbs-17": job ids start with local- or slurm-`},
		{"cancelUnknown", nil, []string{"cancel", "local-nope"}, 2, "unknown job: local-nope"},
		{"waitUnknown", nil, []string{"wait", "local-nope"}, 2, "unknown job"},
		{"memoryUnit", nil, []string{"submit", "--mem-limit", "2X", "--", "true"}, 2, `invalid argument "2X" for "--mem-limit"`},
		{"memoryAbsurd", nil, []string{"submit", "--mem-limit", "100T", "--", "true"}, 2, "more than this machine's"},
		{"memoryTiny", nil, []string{"submit", "--mem-limit", "1K", "--", "true"}, 2, "below the minimum"},
		{"negativeTime", nil, []string{"submit", "--time", "-5m", "--", "true"}, 2, `"-5m" for "--time" flag: wall time "-5m" is negative`},
		{"badTime", nil, []string{"submit", "--time", "soon", "--", "true"}, 2, `wall time "soon"`},
		{"commandAndScript", nil, []string{"submit", "--script", "run.sh", "--", "echo", "hi"}, 2, "not both"},
		{"nothing", nil, []string{"submit"}, 2, "nothing to run"},
		{"unknownScheduler", nil, []string{"submit", "--scheduler", "pbs", "--", "true"}, 2, `--scheduler "pbs": choose local or slurm`},
		{"noSbatch", noSlurm, []string{"submit", "--scheduler", "slurm", "--", "true"}, 2, "sbatch is not on PATH"},
		{"gpusLocal", nil, []string{"submit", "--gpus", "1", "--", "true"}, 2, "Slurm's"},
		{"badHotfix", nil, []string{"submit", "--hotfix", "maybe", "--", "true"}, 2, `--hotfix "maybe"`},
		{"badProfile", nil, []string{"submit", "--profile", "fortran", "--", "true"}, 2, `unknown profile "fortran"`},
		{"badEnv", nil, []string{"submit", "--env", "NOVALUE", "--", "true"}, 2, `--env "NOVALUE": want NAME=VALUE`},
		{"loaderEnv", nil, []string{"submit", "--env", "LD_PRELOAD=/tmp/evil.so", "--", "true"}, 2, "--env: LD_PRELOAD: environment variable refused"},
		{"badFollow", nil, []string{"submit", "--follow", "../etc/passwd", "--", "true"}, 2, `--follow "../etc/passwd"`},
		{"badWorkspace", nil, []string{"submit", "--workspace", "nothere", "--", "true"}, 2, "--workspace nothere: not a directory"},
		{"missingScript", nil, []string{"submit", "--script", "nothere.sh"}, 2, "--script nothere.sh"},
		{"badAfter", nil, []string{"logs", "--after", "-1", "local-x"}, 2, "--after -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := labmateEnv(t, c.env, dir, "", jobArgs(data, c.args...)...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q), stdout %q", code, c.code, errOut, c.want, out)
			}
		})
	}
	if out, _, _ := jobCLI(t, data, dir, "", "list", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("a refused submission left a job: %s", out)
	}
}

// One round trip through a real one-node Slurm: submit → logs -f → COMPLETED, listed beside
// the local jobs.
func TestJobSlurmRoundTrip(t *testing.T) {
	c := slurmtest.Start(t)
	dir, data := t.TempDir(), t.TempDir()
	env := c.Env
	out, errOut, code := labmateEnv(t, env, dir, "", jobArgs(data, "submit", "--scheduler", "slurm", "--name", "hello", "--time", "2",
		"--", "sh", "-c", "echo hello from slurm; echo note >&2")...)
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "slurm-") {
		t.Fatalf("submit: exit %d, %q, %s", code, out, errOut)
	}
	out, errOut, code = labmateEnv(t, env, dir, "", jobArgs(data, "logs", "-f", id)...)
	if code != 0 || !strings.Contains(out, "hello from slurm\n") || !strings.Contains(out, "[stderr] note\n") || !strings.Contains(errOut, "COMPLETED") {
		t.Fatalf("logs -f: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, code = labmateEnv(t, env, dir, "", jobArgs(data, "list", "--json")...)
	var sts []*job.Status
	if err := json.Unmarshal([]byte(out), &sts); err != nil || code != 0 || len(sts) != 1 || string(sts[0].ID) != id ||
		sts[0].State != job.Completed || sts[0].Name != "hello" || sts[0].Spec.Resources.WallTime != 2*time.Minute {
		t.Errorf("list --json: exit %d, %v: %s", code, err, out)
	}
}

// labmate job wait and logs -f watch the job with perception: a diverging residual is
// cancelled by it, saying so and why, and wait exits 3 (CANCELLED); a converging one runs to
// its end; with --hotfix off the diverging one does too.
func TestJobWaitPerception(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	diverging := `for i in $(seq 1 25); do echo "residual = $((10**i))"; sleep 0.2; done`
	converging := `for i in $(seq 1 8); do echo "residual = 1e-$i"; sleep 0.2; done`
	submit := func(t *testing.T, args ...string) string {
		t.Helper()
		out, errOut, code := jobCLI(t, data, dir, "", append([]string{"submit"}, args...)...)
		if code != 0 {
			t.Fatalf("submit: exit %d: %s", code, errOut)
		}
		return strings.TrimSpace(out)
	}
	for _, c := range []struct {
		name    string
		verb    []string
		submit  []string
		code    int
		stopped bool
	}{
		{"diverging/wait", []string{"wait"}, []string{"--", "bash", "-c", diverging}, 3, true},
		{"diverging/logs-f", []string{"logs", "-f"}, []string{"--", "bash", "-c", diverging}, 3, true},
		{"converging/wait", []string{"wait"}, []string{"--", "bash", "-c", converging}, 0, false},
		{"hotfix-off/wait", []string{"wait"}, []string{"--hotfix", "off", "--", "bash", "-c", diverging}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := submit(t, c.submit...)
			start := time.Now()
			out, errOut, code := jobCLI(t, data, dir, "", append(c.verb, id)...)
			took := time.Since(start)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			st := jobStatus(t, data, id)
			if !c.stopped {
				if st.State != job.Completed || strings.Contains(errOut, "perception") {
					t.Errorf("%s (%s); stderr %q", st.State, st.Reason, errOut)
				}
				return
			}
			if !strings.Contains(errOut, "perception stopped job "+id+": divergence: residual") || !strings.Contains(errOut, "CANCELLED") {
				t.Errorf("stderr %q", errOut)
			}
			if st.State != job.Cancelled || !strings.HasPrefix(st.Reason, "perception: divergence") {
				t.Errorf("status %s (%s)", st.State, st.Reason)
			}
			if took > 4*time.Second { // it would run 5 s
				t.Errorf("perception took %v to stop it", took)
			}
			if c.verb[0] == "logs" && !strings.HasPrefix(out, "residual = 10\nresidual = 100\n") {
				t.Errorf("logs -f printed %q", out)
			}
		})
	}
}
