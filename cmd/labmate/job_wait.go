package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/report"
)

func newJobWaitCmd() *cobra.Command {
	var (
		asJSON bool
		dirs   jobDirs
	)
	cmd := &cobra.Command{
		Use:   "wait ID",
		Short: "Wait until a job ends; exit with how it ended",
		Long: `Wait until a job ends (starting a queued local job when there is room), say on stderr how it
ended, and exit with it. --json prints its final status as one JSON object.

While it waits, perception reads the job's log as labmate serve would: its Warnings and
Errors are printed on stderr as they come, and an Error (a diverging residual, a NaN, a
stalled job) cancels the job with the verdict as the reason, so that wait exits 3 saying
perception stopped it and why — unless the job was submitted with --hotfix off.

Exit status: ` + jobExitHelp + `.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := interruptible(cmd)
			defer stop()
			s, st, closeS, err := dirs.status(ctx, args[0])
			if err != nil {
				return err
			}
			defer closeS()
			return followJob(ctx, cmd, s, st, 0, nil, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the final status as one JSON object")
	dirs.add(cmd)
	return cmd
}

// waitJob waits for id to end, watched by perception, and exits with how it ended.
func waitJob(ctx context.Context, cmd *cobra.Command, s job.Scheduler, id job.ID, asJSON bool) error {
	st, err := s.Status(ctx, id)
	if err != nil {
		return err
	}
	return followJob(ctx, cmd, s, st, 0, nil, asJSON)
}

// followJob follows st to its end (report.Follow: its lines after after on lines, when not
// nil, and perception's verdicts on stderr), says how it ended and exits with it.
func followJob(ctx context.Context, cmd *cobra.Command, s job.Scheduler, st *job.Status, after int64, lines *report.Lines, asJSON bool) error {
	stopped, err := report.Follow(ctx, s, st, after, lines, cmd.ErrOrStderr())
	if ctx.Err() != nil {
		return interrupted(cmd, st.ID)
	}
	if err != nil {
		return err
	}
	last, err := s.Status(ctx, st.ID)
	if err != nil {
		return err
	}
	if !last.State.Terminal() {
		return interrupted(cmd, st.ID)
	}
	if stopped != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "labmate:", report.Stopped(st.ID, stopped))
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "labmate:", report.Ended(last))
	if asJSON {
		if err := report.Status(cmd.OutOrStdout(), last, true); err != nil {
			return err
		}
	}
	return jobExit(last)
}
