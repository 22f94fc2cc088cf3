package local

import (
	"context"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
)

// BenchmarkSubmit measures submit → running, a status poll of a running job, and a no-op job
// (`true`, submit → completed seen by Watch) against the same command run directly in the same
// sandbox (reported as direct-ns/op and the ratio x-direct).
func BenchmarkSubmit(b *testing.B) {
	dir, ws := b.TempDir(), b.TempDir()
	s := open(b, dir, nil)
	ctx := context.Background()

	b.Run("running", func(b *testing.B) {
		for b.Loop() {
			id, err := s.Submit(ctx, &job.Spec{Command: []string{"sleep", "60"}, Workspace: ws})
			if err != nil {
				b.Fatal(err)
			}
			for {
				st, err := s.Status(ctx, id)
				if err != nil {
					b.Fatal(err)
				}
				if st.State == job.Running {
					break
				}
				if st.State.Terminal() {
					b.Fatalf("%s: %s", st.State, st.Reason)
				}
				time.Sleep(100 * time.Microsecond)
			}
			b.StopTimer()
			s.Cancel(ctx, id, "benchmark")
			for st, err := range s.Watch(ctx, id) {
				if err != nil || st.State.Terminal() {
					break
				}
			}
			b.StartTimer()
		}
	})

	b.Run("status", func(b *testing.B) {
		id, err := s.Submit(ctx, &job.Spec{Command: []string{"sleep", "60"}, Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Cancel(ctx, id, "benchmark")
		for b.Loop() {
			if st, err := s.Status(ctx, id); err != nil || st.State != job.Running {
				b.Fatal(st, err)
			}
		}
	})

	b.Run("noop", func(b *testing.B) {
		n := 0
		start := time.Now()
		for b.Loop() {
			n++
			id, err := s.Submit(ctx, &job.Spec{Command: []string{"true"}, Workspace: ws})
			if err != nil {
				b.Fatal(err)
			}
			var last *job.Status
			for st, err := range s.Watch(ctx, id) {
				if err != nil {
					b.Fatal(err)
				}
				last = st
			}
			if last.State != job.Completed {
				b.Fatalf("%s: %s", last.State, last.Reason)
			}
		}
		jobNs := float64(time.Since(start).Nanoseconds()) / float64(n)
		box, err := s.box(1, s.defMem) // the sandbox a default job runs in
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		for range n {
			cmd, err := box.Command([]string{"true"}, []string{"PATH=/usr/bin:/bin"}, ws)
			if err != nil {
				b.Fatal(err)
			}
			if err := box.Start(cmd); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			box.Kill(cmd)
		}
		directNs := float64(time.Since(start).Nanoseconds()) / float64(n)
		b.ReportMetric(jobNs, "job-ns/op")
		b.ReportMetric(directNs, "direct-ns/op")
		b.ReportMetric(jobNs/directNs, "x-direct")
	})
}
