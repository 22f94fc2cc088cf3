package main

import (
	"context"
	"io"
	"log"
	"path/filepath"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/runner/locallog"
	"github.com/labmate/labmate/sandbox"
)

// runCells makes the cells of labmate run's run id operations of the run's session, as those of
// labmate serve's runs are: a runner over the run's log (no HTTP server: the run is its only
// face; runner.Config.Guest beside any other process), kernels started in sb in the run's
// workspace, the session's queue, the interrupt path — a server on the same data directory
// interrupts them through the log — and the log. cancel stops the run. It returns the agent's
// Cells, each cell's messages handed to show as they are logged, and done, which lets the run
// go and closes the runner.
func runCells(ctx context.Context, rl *locallog.Run, id string, sb *sandbox.Sandbox, data string, cancel context.CancelFunc,
	show func(*agent.Event), stderr io.Writer) (agent.Cells, func(), error) {
	cfg := serverConfig(rl.Log(), sb, filepath.Join(data, "workspaces"), nil).Config
	cfg.Guest = true
	cfg.Log = log.New(stderr, "labmate run: ", 0)
	rn, err := runner.New(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	l, release, err := rn.HoldRun(id, cancel)
	if err != nil {
		rn.Close()
		return nil, nil, err
	}
	rl.Through(l)
	return rl.Cells(rn.Cells(), show), func() { release(); rn.Close() }, nil
}
