package runner

import (
	"context"
	"iter"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// Cells runs agent runs' cells (agent.Options.Cells) as operations of their runs' sessions:
// each one queued with the session's other operations, in the session's kernels (from the
// pool, in the run's workspace), logged in the session under its own id, and stopped by
// Interrupt like any cell.
func (s *Runner) Cells() agent.Cells { return runCells{s} }

type runCells struct{ s *Runner }

func (c runCells) Exec(ctx context.Context, cell *agent.CellRun) iter.Seq2[*protocol.EnhancedMessage, error] {
	return c.s.run(ctx, cell)
}

func (c runCells) Kernel(ctx context.Context, session, workspace, name string) (kernel.Kernel, error) {
	ss, err := c.s.Open(session)
	if err != nil {
		return nil, err
	}
	defer c.s.Release(ss)
	ss.useWorkspace(workspace)
	return ss.kernel(ctx, name)
}

// closeRunKernels closes the kernels of an agent run's session when the run has stopped and
// no operation of the session runs: a resumed run restores its variables from its snapshots.
func (ss *Session) closeRunKernels() { ss.closeKernels(-1) }
