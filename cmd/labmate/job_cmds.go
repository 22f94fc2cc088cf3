package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/report"
)

// jobExitHelp is the exit status of the commands that wait for a job.
const jobExitHelp = `0 COMPLETED, 1 FAILED (exited non-zero, or killed by a signal or its memory limit),
3 CANCELLED (by a user or by perception; the reason says which), 4 LOST, 124 TIMEOUT
(past its wall time), 130 when interrupted (the job keeps running), 2 when labmate could not
follow it (an unknown id, say)`

func newJobStatusCmd() *cobra.Command {
	var (
		asJSON bool
		art    artifactFlag
		dirs   jobDirs
	)
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show a job's state, why, what it runs and when",
		Long: `Show a job: its state (QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, LOST) and
why, its exit code or signal, what it runs, where, with what resources, and when it was
submitted, started and ended. --json prints the job's status as one JSON object.

--artifact PATH writes the bytes of a file the job's workspace gained or changed (a figure, a
table; its path in the workspace) to standard output, from the data directory's artifact store
(DATA/artifacts), where the job's supervisor — or a labmate serve that followed the job — kept
it by its digest when the job ended, so that it outlives the workspace.

Exit status: 0 when the job is known, whatever its state (labmate job wait exits with how
it ended), 2 when it is not (or labmate cannot reach its scheduler).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, st, closeS, err := dirs.status(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer closeS()
			if art.set() {
				return writeJobArtifact(cmd.Context(), cmd.OutOrStdout(), &dirs, s, st, &art)
			}
			return report.Status(cmd.OutOrStdout(), st, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as one JSON object")
	art.add(cmd, "job")
	dirs.add(cmd)
	return cmd
}

func newJobLogsCmd() *cobra.Command {
	var (
		follow, asJSON bool
		after          int64
		art            artifactFlag
		dirs           jobDirs
	)
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a job's log: stdout, stderr and the files it follows; -f follows it to its end",
		Long: `Print a job's log: its stdout, stderr and followed files (--follow of submit), line by line in
the order they were read. stdout lines print as written; the others are prefixed with their
stream: "[stderr] …", "[scf.out] …". Lines are numbered 1, 2, … across streams: --after SEQ
prints only those after line SEQ (the numbers are the same for every reader, always).
--json prints each line as one JSON object: {"seq", "stream", "text", "time"}.

-f follows the log until the job has ended and every line is printed, then says on stderr how
it ended (a queued local job is started meanwhile, when there is room). While it follows,
perception watches the job as labmate serve would: its Warnings and Errors are printed on
stderr as they come, and an Error cancels the job with the verdict as the reason — unless
the job was submitted with --hotfix off.

--artifact PATH writes, instead of the log, the bytes of a file the job's workspace gained or
changed (its path in the workspace), as labmate job status --artifact does: from the data
directory's artifact store (DATA/artifacts), where it was kept when the job ended.

Exit status: 0 (with -f: ` + jobExitHelp + `).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if after < 0 {
				return fmt.Errorf("--after %d: give a line number, 0 or more", after)
			}
			if art.set() && (follow || after > 0 || asJSON) {
				return fmt.Errorf("--artifact %s writes the file to standard output instead of the log: leave out -f, --after and --json", art.rel)
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			s, st, closeS, err := dirs.status(ctx, args[0])
			if err != nil {
				return err
			}
			defer closeS()
			if art.set() {
				return writeJobArtifact(ctx, cmd.OutOrStdout(), &dirs, s, st, &art)
			}
			out := report.NewLines(cmd.OutOrStdout(), asJSON)
			if !follow {
				for ln, err := range s.Logs(ctx, job.ID(args[0]), after, false) {
					if err != nil {
						return dirs.unknownJob(err)
					}
					if err := out.Line(ln); err != nil {
						return err
					}
				}
				return nil
			}
			return followJob(ctx, cmd, s, st, after, out, false)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log until the job ends")
	cmd.Flags().Int64Var(&after, "after", 0, "print only the lines after this line number")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the lines as NDJSON")
	art.add(cmd, "job")
	dirs.add(cmd)
	return cmd
}

func newJobCancelCmd() *cobra.Command {
	var (
		why    string
		asJSON bool
		dirs   jobDirs
	)
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Stop a queued or running job",
		Long: `Stop a queued or running job, recording --why (default "cancelled by NAME", the user), and
wait up to 15 s for it to end (its processes get SIGTERM, then SIGKILL 10 s later). A job that
has already ended is left alone, and said to have ended (its state and when). Prints how it
ended on stderr; --json prints its final status.

Exit status: 0 when the job was cancelled and has ended; 1 when it had already ended before
(nothing was cancelled), or is still stopping after 15 s; 2 when labmate could not cancel it
(an unknown id, say).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, before, closeS, err := dirs.status(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer closeS()
			id := job.ID(args[0])
			if why == "" {
				why = "cancelled by " + userName()
			}
			if before.State.Terminal() { // nothing to cancel: say so, and do not claim it was
				if asJSON {
					if err := report.Status(cmd.OutOrStdout(), before, true); err != nil {
						return err
					}
				}
				when := ""
				if !before.Ended.IsZero() {
					when = fmt.Sprintf(" at %s (%s ago)", before.Ended.Local().Format("2006-01-02 15:04:05"), time.Since(before.Ended).Round(time.Second))
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "labmate: job %s had already ended%s, %s: nothing to cancel (%s)\n", id, when, before.State, report.Ended(before))
				return exitError{1}
			}
			if err := s.Cancel(cmd.Context(), id, why); err != nil {
				return dirs.unknownJob(err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			var last *job.Status
			for st, err := range s.Watch(ctx, id) {
				if err != nil {
					break
				}
				last = st
			}
			if last == nil || !last.State.Terminal() {
				if last, err = s.Status(cmd.Context(), id); err != nil {
					return err
				}
			}
			if asJSON {
				if err := report.Status(cmd.OutOrStdout(), last, true); err != nil {
					return err
				}
			}
			if !last.State.Terminal() {
				fmt.Fprintf(cmd.ErrOrStderr(), "labmate: job %s is still %s 15 s after the cancel; see labmate job status %s\n", id, last.State, id)
				return exitError{1}
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "labmate:", report.Ended(last))
			return nil
		},
	}
	cmd.Flags().StringVar(&why, "why", "", `the reason recorded with the job (default "cancelled by USER")`)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job's final status as one JSON object")
	dirs.add(cmd)
	return cmd
}

func newJobListCmd() *cobra.Command {
	var (
		asJSON bool
		dirs   jobDirs
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the jobs, newest first",
		Long: `List every job of DATA, local and Slurm (once a job was submitted to it), the newest first:
id, state, name, when submitted, how long it ran, and what it runs or why it is in its state.
--json prints one JSON array of statuses, newest first too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, closeM, err := dirs.all(cmd)
			if err != nil {
				return err
			}
			defer closeM()
			sts, err := m.List(cmd.Context())
			if err != nil {
				return err
			}
			return report.List(cmd.OutOrStdout(), sts, asJSON, time.Now())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the jobs as one JSON array")
	dirs.add(cmd)
	return cmd
}

func jobExit(st *job.Status) error {
	if code := report.ExitCode(st.State); code > 0 {
		return exitError{code}
	}
	return nil
}

func interrupted(cmd *cobra.Command, id job.ID) error {
	fmt.Fprintf(cmd.ErrOrStderr(), "labmate: stopped waiting; job %s goes on (labmate job status %s)\n", id, id)
	return exitError{130}
}

func userName() string {
	for _, v := range []string{"USER", "LOGNAME"} {
		if u := os.Getenv(v); u != "" {
			return u
		}
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}
