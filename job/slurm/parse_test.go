package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/job"
)

// The testdata files are real outputs of Slurm 22.05 (Debian 12) from the one-node cluster
// slurmtest starts, captured by hand: `scontrol -o show job N` for a job in each state.

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseScontrol(t *testing.T) {
	code := func(n int) *int { return &n }
	type want struct {
		name, slurmState string
		state            job.State
		reason           string
		exit             *int
		signal           string
		started, ended   bool
	}
	for file, w := range map[string]want{
		"scontrol-running.txt":                 {"wrap", "RUNNING", job.Running, "", nil, "", true, false},
		"scontrol-pending-resources.txt":       {"wrap", "PENDING", job.Queued, "Resources", nil, "", false, false},
		"scontrol-pending-priority-spaces.txt": {"odd name  two spaces", "PENDING", job.Queued, "Priority", nil, "", false, false},
		"scontrol-completed.txt":               {"wrap", "COMPLETED", job.Completed, "", code(0), "", true, true},
		"scontrol-failed-exit3-pipe-name.txt":  {"a name | with pipe", "FAILED", job.Failed, "exit code 3", code(3), "", true, true},
		"scontrol-failed-signal11.txt":         {"wrap", "FAILED", job.Failed, "killed by SIGSEGV", nil, "SIGSEGV", true, true},
		"scontrol-out-of-memory.txt":           {"wrap", "OUT_OF_MEMORY", job.Failed, "out of memory: exceeded its memory limit of 100M", nil, "SIGKILL", true, true},
		"scontrol-timeout.txt":                 {`a name | with "q" pipe`, "TIMEOUT", job.TimedOut, "ran past its wall time (Slurm TimeLimit 00:01:00)", nil, "SIGTERM", true, true},
		"scontrol-cancelled-running.txt":       {"wrap", "CANCELLED", job.Cancelled, "", nil, "SIGTERM", true, true},
		"scontrol-cancelled-pending.txt":       {"wrap", "CANCELLED", job.Cancelled, "", nil, "", false, true},
	} {
		t.Run(file, func(t *testing.T) {
			in, err := parseScontrol(read(t, file))
			if err != nil {
				t.Fatal(err)
			}
			st := in.status()
			got := want{in.Name, in.State, st.State, st.Reason, st.ExitCode, st.Signal, !st.Started.IsZero(), !st.Ended.IsZero()}
			if diff := cmp.Diff(w, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if in.Submit.IsZero() || in.JobID == "" || st.Native != in.JobID {
				t.Errorf("id %q submit %v", in.JobID, in.Submit)
			}
		})
	}
}

func TestParseScontrolOdd(t *testing.T) {
	// A name that imitates later keys does not override them.
	line := strings.Replace(read(t, "scontrol-running.txt"), "JobName=wrap", "JobName=x JobState=COMPLETED ExitCode=9:0 =| |", 1)
	in, err := parseScontrol(line)
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "x JobState=COMPLETED ExitCode=9:0 =| |" || in.State != "RUNNING" || in.Exit != 0 {
		t.Errorf("got name %q state %s exit %d", in.Name, in.State, in.Exit)
	}
	for _, bad := range []string{"", read(t, "scontrol-unknown.txt"), "JobId=1 JobName=x UserId=0"} {
		if _, err := parseScontrol(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

func TestParseSbatch(t *testing.T) {
	for out, want := range map[string]string{
		read(t, "sbatch-parsable.txt"): "11",
		"12;labmatetest\n":             "12",
		"sbatch: warning: x\n13\n":     "13",
	} {
		got, err := parseSbatch(out)
		if err != nil || got != want {
			t.Errorf("parseSbatch(%q) = %q, %v; want %q", out, got, err, want)
		}
	}
	for _, bad := range []string{"", read(t, "sbatch-gres-error.txt"), "Submitted batch job 5"} {
		if got, err := parseSbatch(bad); err == nil {
			t.Errorf("parseSbatch(%q) = %q", bad, got)
		}
	}
}

func TestParseSacct(t *testing.T) {
	out := "7|a name | with pipe|CANCELLED by 0|0:15|2026-12-02T02:01:52|2026-12-02T02:01:53|2026-12-02T02:01:58\n"
	in, err := parseSacct(out, "7")
	if err != nil {
		t.Fatal(err)
	}
	st := in.status()
	if in.Name != "a name | with pipe" || st.State != job.Cancelled || st.Signal != "SIGTERM" || st.Started.IsZero() {
		t.Errorf("got %+v / %+v", in, st)
	}
	if _, err := parseSacct(strings.Split(read(t, "sacct-no-accounting.txt"), "\n")[0], "1"); err == nil {
		t.Error("parsed sacct's error")
	}
}

func TestParseDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"00:01:11": 71 * time.Second, "1-02:00:00": 26 * time.Hour, "05:07": 5*time.Minute + 7*time.Second,
		"UNLIMITED": 0, "": 0,
	} {
		if got := parseDuration(s); got != want {
			t.Errorf("parseDuration(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestBatchScript(t *testing.T) {
	got, err := batchScript(&job.Spec{
		Name:      `scf "Si" | 20 Ry`,
		Command:   []string{"pw.x", "-in", "scf in.txt", "it's"},
		Workspace: "/work/space dir",
		Env:       map[string]string{"OMP_NUM_THREADS": "2", "LIST": "a,b c"},
		Resources: job.Resources{Cores: 4, MemoryBytes: 1<<30 + 1, WallTime: 61 * time.Second, GPUs: 1, Partition: "gpu"},
	}, "/jobs/out/%j.stdout", "/jobs/out/%j.stderr")
	if err != nil {
		t.Fatal(err)
	}
	want := `#!/bin/bash
#SBATCH --job-name="scf \"Si\" | 20 Ry"
#SBATCH --chdir="/work/space dir"
#SBATCH --output=/jobs/out/%j.stdout
#SBATCH --error=/jobs/out/%j.stderr
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --mem=1025M
#SBATCH --time=2
#SBATCH --gres=gpu:1
#SBATCH --partition=gpu
#SBATCH --export=ALL
export LIST='a,b c'
export OMP_NUM_THREADS=2
exec pw.x -in 'scf in.txt' 'it'\''s'
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batch script (-want +got):\n%s", diff)
	}
	script, _ := batchScript(&job.Spec{Script: "echo hi", Workspace: "/w"}, "o", "e")
	if !strings.HasSuffix(script, "#SBATCH --export=ALL\necho hi\n") || !strings.Contains(script, "--job-name=labmate\n") {
		t.Errorf("script job:\n%s", script)
	}
}
