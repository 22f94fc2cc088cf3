package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/job"
	jobreport "github.com/labmate/labmate/job/report"
)

// waitForJob waits for job id, which a run is parked on, to end, saying so on stderr; an empty
// id has nothing to wait for. Interrupted, the run stays parked (exit 130).
func waitForJob(ctx context.Context, cmd *cobra.Command, jobs job.Schedulers, id string) error {
	if id == "" {
		return nil
	}
	if jobs == nil {
		return fmt.Errorf("the run is parked on job %s, and no job scheduler could be opened here", id)
	}
	sch, err := jobs.For(job.ID(id))
	if err != nil {
		return fmt.Errorf("the run is parked on job %s: %w", id, err)
	}
	stderr := cmd.ErrOrStderr()
	first := true
	for st, err := range sch.Watch(ctx, job.ID(id)) {
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "labmate run: interrupted; the run stays parked on job %s\n", id)
				return exitError{130}
			}
			return fmt.Errorf("watching job %s: %w", id, err)
		}
		if st.State.Terminal() {
			fmt.Fprintf(stderr, "labmate run: %s; the run goes on with its outcome\n", jobreport.Ended(st))
			return nil
		}
		if first {
			fmt.Fprintf(stderr, "labmate run: the run is parked: waiting for job %s (%s; Ctrl-C leaves the run parked)\n", id, st.State)
			first = false
		}
	}
	if ctx.Err() != nil {
		return exitError{130}
	}
	return nil
}
