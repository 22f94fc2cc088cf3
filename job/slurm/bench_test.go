package slurm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
)

// The benchmarks compare the Scheduler with what a user would type: sbatch --wrap, then
// squeue until the job runs. Run them alone, a few iterations each:
//
//	go test ./job/slurm -run '^$' -bench . -benchtime 5x

const benchPoll = 50 * time.Millisecond

// BenchmarkSubmitToRunning: Submit, then Status every 50 ms until RUNNING.
func BenchmarkSubmitToRunning(b *testing.B) {
	s, _ := newScheduler(b)
	ws := b.TempDir()
	ctx := context.Background()
	var total, submitting time.Duration
	for b.Loop() {
		start := time.Now()
		id, err := s.Submit(ctx, &job.Spec{Script: "sleep 60", Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		submitting += time.Since(start)
		for {
			st, err := s.Status(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			if st.State == job.Running {
				break
			}
			if st.State.Terminal() {
				b.Fatalf("%s ended %s", id, st.State)
			}
			time.Sleep(benchPoll)
		}
		total += time.Since(start)
		b.StopTimer()
		s.Cancel(ctx, id, "benchmark")
		waitEnded(b, s, id)
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/running")
	b.ReportMetric(float64(submitting.Milliseconds())/float64(b.N), "ms/submit")
}

// BenchmarkShellSubmitToRunning is the baseline: sbatch --parsable --wrap, then
// squeue -h -j N -o %T every 50 ms until RUNNING.
func BenchmarkShellSubmitToRunning(b *testing.B) {
	c := newCluster(b)
	ctx := context.Background()
	var total, submitting time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := c.Command(ctx, "sbatch", "--parsable", "--output=/dev/null", "--wrap", "sleep 60").Output()
		if err != nil {
			b.Fatal(err)
		}
		native := strings.TrimSpace(string(out))
		submitting += time.Since(start)
		for {
			out, err := c.Command(ctx, "squeue", "-h", "-t", "all", "-j", native, "-o", "%T").Output()
			if err != nil {
				b.Fatal(err)
			}
			if strings.TrimSpace(string(out)) == "RUNNING" {
				break
			}
			time.Sleep(benchPoll)
		}
		total += time.Since(start)
		b.StopTimer()
		c.Command(ctx, "scancel", native).Run()
		for {
			out, _ := c.Command(ctx, "squeue", "-h", "-t", "all", "-j", native, "-o", "%T").Output()
			if s := strings.TrimSpace(string(out)); s == "CANCELLED" || s == "" {
				break
			}
			time.Sleep(benchPoll)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/running")
	b.ReportMetric(float64(submitting.Milliseconds())/float64(b.N), "ms/submit")
}

// BenchmarkStatus is the cost of one Status of a running job (one scontrol call, parsed).
func BenchmarkStatus(b *testing.B) {
	s, _ := newScheduler(b)
	ctx := context.Background()
	id := submit(b, s, &job.Spec{Script: "sleep 120"})
	defer s.Cancel(ctx, id, "benchmark over")
	waitState(b, s, id, job.Running, 60*time.Second)
	for b.Loop() {
		if _, err := s.Status(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatusEnded: a job whose end is recorded is read from its directory, not Slurm.
func BenchmarkStatusEnded(b *testing.B) {
	s, _ := newScheduler(b)
	ctx := context.Background()
	id := submit(b, s, &job.Spec{Script: "true"})
	waitEnded(b, s, id)
	for b.Loop() {
		if _, err := s.Status(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShellSqueue is the baseline poll: squeue -h -j N -o %T of a running job.
func BenchmarkShellSqueue(b *testing.B) {
	s, _ := newScheduler(b)
	c := newCluster(b)
	ctx := context.Background()
	id := submit(b, s, &job.Spec{Script: "sleep 120"})
	defer s.Cancel(ctx, id, "benchmark over")
	waitState(b, s, id, job.Running, 60*time.Second)
	native := strings.TrimPrefix(string(id), "slurm-")
	for b.Loop() {
		if err := c.Command(ctx, "squeue", "-h", "-t", "all", "-j", native, "-o", "%T").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func waitEnded(b testing.TB, s job.Scheduler, id job.ID) {
	for {
		st, err := s.Status(context.Background(), id)
		if err != nil {
			b.Fatal(err)
		}
		if st.State.Terminal() {
			return
		}
		time.Sleep(benchPoll)
	}
}
