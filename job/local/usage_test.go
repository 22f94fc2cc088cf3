package local

import (
	"errors"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
)

// A running job's CPU time rises while it computes; a job that has ended has no usage.
func TestUsage(t *testing.T) {
	s := open(t, t.TempDir(), nil)
	id, err := s.Submit(ctx(t), &job.Spec{Script: "while :; do :; done", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Running, 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	u1, err := s.Usage(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	u2, err := s.Usage(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if d := u2.CPUSeconds - u1.CPUSeconds; d < 0.5 {
		t.Errorf("CPU seconds rose by %.2f in 1 s of a busy loop, want ≥ 0.5 (%+v → %+v)", d, u1, u2)
	}
	if u2.RSSBytes <= 0 || u2.MemoryLimit <= 0 {
		t.Errorf("usage %+v: want memory in use and a limit", u2)
	}
	if err := s.Cancel(ctx(t), id, "test"); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, id, job.Cancelled, 10*time.Second)
	if _, err := s.Usage(ctx(t), id); !errors.Is(err, job.ErrNotRunning) {
		t.Errorf("Usage of a cancelled job: %v, want ErrNotRunning", err)
	}
}
