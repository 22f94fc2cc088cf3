package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/report"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner/locallog"
)

// openRuns opens the log of the --data directory (dir), where the agent runs' checkpoints are
// events of their streams, for a command that reads them (role: what it is), importing first,
// once, what an earlier labmate kept beside it (importOld).
func openRuns(ctx context.Context, data, role string, stderr io.Writer) (runs *agent.Checkpoints, dir string, done func(), err error) {
	if dir, err = dataDir(data); err != nil {
		return nil, "", nil, err
	}
	log, err := locallog.Open(dir, role)
	if err != nil {
		return nil, "", nil, err
	}
	importOld(ctx, dir, log, stderr)
	return agent.NewCheckpoints(log), dir, func() { log.Close() }, nil
}

func newRunListCmd() *cobra.Command {
	var (
		data   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List past agent runs, the latest first",
		Long: `List the agent runs checkpointed in the log DATA/labmate.db, the latest first: id, state (the stop reason,
"resumable" when labmate run --resume continues it, or the phase of a run that has not stopped),
model, tokens spent, last update and task. --json prints one JSON array.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, _, done, err := openRuns(cmd.Context(), data, "runlist", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer done()
			runs, err := store.Runs(cmd.Context())
			if err != nil {
				return err
			}
			return report.Runs(cmd.OutOrStdout(), runs, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs as one JSON array")
	cmd.Flags().StringVar(&data, "data", "", logDataHelp)
	return cmd
}

func newRunShowCmd() *cobra.Command {
	var (
		data   string
		art    artifactFlag
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one agent run: its plan, steps, operations and outcome",
		Long: `Show one agent run, its checkpoint and events from the log DATA/labmate.db (read beside
a running labmate serve): the task, model and workspace, the plan
with the steps accepted so far, every run_code operation with its outcome, the tokens spent, and how
the run ended (the answer, or why it stopped and whether labmate run --resume continues it).
--json prints {"state": …, "operations": […], "started": …, "updated": …}.

--artifact PATH writes the bytes of a file the run's cells reported (a figure, a table) to
standard output, from the data directory's artifact store (DATA/artifacts), where it is kept
by its digest after the workspace has changed or gone.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			store, dir, done, err := openRuns(ctx, data, "runshow", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer done()
			if art.set() {
				return art.write(ctx, cmd.OutOrStdout(), dir, args[0], "run "+args[0], nil)
			}
			st, err := store.Load(ctx, args[0])
			if err != nil {
				return err
			}
			r, err := report.NewRecord(st, locallog.Events(ctx, dir, args[0]))
			if err != nil {
				return err
			}
			return report.Show(cmd.OutOrStdout(), r, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as one JSON object")
	art.add(cmd, "run")
	cmd.Flags().StringVar(&data, "data", "", logDataHelp)
	return cmd
}

// evalRuns opens an eval's result folder as a data directory for its trials' runs: their log
// (labmate.db), which holds their checkpoints too, held while the eval runs.
func evalRuns(out string) (*agent.Checkpoints, protocol.Store, func(), error) {
	log, err := locallog.Open(out, "serve")
	if err != nil {
		return nil, nil, nil, err
	}
	return agent.NewCheckpoints(log), log, func() { log.Close() }, nil
}
