package slurm_test

import (
	"testing"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/jobtest"
	"github.com/labmate/labmate/job/slurm/slurmtest"
)

// TestSuite runs the suite every scheduler passes against the real one-node Slurm.
func TestSuite(t *testing.T) {
	jobtest.Run(t, func(t *testing.T) job.Scheduler {
		s, _ := newScheduler(t)
		return s
	}, &jobtest.Options{
		Cores:    slurmtest.Shared(t).CPUs,
		Start:    time.Minute,
		WallTime: time.Minute, // Slurm counts wall time in minutes
	})
}
