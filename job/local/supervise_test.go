package local

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/protocol"
)

// Every job a Scheduler with a Supervisor starts gets one, holding the job's supervisor lock
// from its start (fd 3, SupervisorFD): nobody else can take it while it runs, and anyone can
// once it has exited. Recorded verdicts are in the status; Fail stops a job as FAILED with
// the reason given; a quota without a supervisor is refused.
func TestSupervisor(t *testing.T) {
	dir, ws, out := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "supervisor.out")
	sup := []string{"/bin/sh", "-c", `echo "$1 $` + SupervisorFD + ` $(readlink /proc/$$/fd/3)" >>"$0"; sleep 2`, out}
	s := open(t, dir, &Options{Supervisor: sup})
	id, err := s.Submit(ctx(t), &job.Spec{Script: "echo hello; sleep 60", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Running, 30*time.Second)
	if !s.Supervised(ctx(t), id) {
		t.Error("a job just started has no supervisor")
	}
	if _, err := s.Supervise(id, nil); !errors.Is(err, ErrSupervised) {
		t.Errorf("a second supervisor: %v, want ErrSupervised", err)
	}
	var b []byte
	for deadline := time.Now().Add(5 * time.Second); len(b) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ = os.ReadFile(out)
	}
	lock := filepath.Join(dir, "jobs", string(id), "supervisor.lock")
	if got := strings.TrimSpace(string(b)); got != string(id)+" 3 "+lock {
		t.Errorf("the supervisor was started as %q, want %q", got, string(id)+" 3 "+lock)
	}
	for deadline := time.Now().Add(10 * time.Second); s.Supervised(ctx(t), id); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the supervisor's lock outlives it")
		}
	}
	v, err := s.Supervise(id, nil)
	if err != nil {
		t.Fatalf("taking the supervision of an unsupervised job: %v", err)
	}
	if !s.Supervised(ctx(t), id) {
		t.Error("Supervised is false while this process supervises the job")
	}

	verdict := &protocol.Verdict{State: protocol.Warning, Detector: "silence", Message: "no output for 5 s"}
	if err := s.RecordVerdict(id, &protocol.Verdict{State: protocol.Normal}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordVerdict(id, verdict); err != nil {
		t.Fatal(err)
	}
	if vs, err := s.Verdicts(ctx(t), id); err != nil || len(vs) != 1 || vs[0].Message != verdict.Message {
		t.Errorf("verdicts %+v, %v: want the Warning only", vs, err)
	}
	if arts, err := s.Artifacts(ctx(t), id); err != nil || len(arts) != 0 {
		t.Errorf("artifacts before any were recorded: %+v, %v", arts, err)
	}
	fig := &protocol.Artifact{Path: "figs/e.png", MIMEType: "image/png", Size: 3, SHA256: strings.Repeat("0f", 32)}
	if err := s.RecordArtifacts(id, []*protocol.Artifact{fig, {Path: "../escape", MIMEType: "text/plain"}}); err != nil {
		t.Fatal(err)
	}
	if arts, err := s.Artifacts(ctx(t), id); err != nil || len(arts) != 1 || *arts[0] != *fig {
		t.Errorf("artifacts %+v, %v: want the figure (the bad path left out)", arts, err)
	}
	if err := s.RecordArtifacts("local-nosuch", nil); !errors.Is(err, job.ErrUnknownJob) {
		t.Errorf("artifacts of an unknown job: %v", err)
	}
	if err := s.Fail(ctx(t), id, "workspace quota exceeded: 70 MiB of 64 MiB"); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx(t), id, "cancelled by a user"); err != nil { // too late: the first reason stands
		t.Fatal(err)
	}
	st := waitState(t, s, id, job.Failed, 30*time.Second)
	if st.Reason != "workspace quota exceeded: 70 MiB of 64 MiB" || st.Verdict == nil || st.Verdict.Detector != "silence" {
		t.Errorf("failed: %q, verdict %+v", st.Reason, st.Verdict)
	}
	v.Release()

	plain := open(t, t.TempDir(), nil)
	if _, err := plain.Submit(ctx(t), &job.Spec{Command: []string{"true"}, Workspace: ws, Resources: job.Resources{DiskBytes: 64 << 20}}); err == nil ||
		!strings.Contains(err.Error(), "resources.disk_bytes") {
		t.Errorf("a quota without a supervisor: %v", err)
	}
}
