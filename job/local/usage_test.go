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
	// A busy loop gets what the machine spares it: its CPU time must keep rising, to half a
	// second within 20 s however busy the machine is.
	u2 := u1
	for deadline := time.Now().Add(20 * time.Second); u2.CPUSeconds-u1.CPUSeconds < 0.5 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		u, err := s.Usage(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		if u.CPUSeconds < u2.CPUSeconds {
			t.Errorf("CPU seconds fell from %.3f to %.3f", u2.CPUSeconds, u.CPUSeconds)
		}
		u2 = u
	}
	if d := u2.CPUSeconds - u1.CPUSeconds; d < 0.5 {
		t.Errorf("CPU seconds rose by %.2f in 20 s of a busy loop, want ≥ 0.5 (%+v → %+v)", d, u1, u2)
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
