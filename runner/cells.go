package runner

import (
	"context"
	"encoding/json"
	"iter"
	"sync"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/operation"
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
	k, err := ss.kernel(ctx, name)
	if ck, ok := k.(*counted); ok {
		k = ck.Kernel // what the interpreter offers (kernel.Snapshotter): the session keeps the place
	}
	return k, err
}

// runLog is the log of an agent run's stream in its session (agent.LogRun), beside the
// operations of its cells: a run_event's payload says the seq the message gets, which the
// session knows once it has appended a message — the cells' make the run's own guess late.
type runLog struct{ ss *Session }

func (l runLog) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	ss := l.ss
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if m.Type == protocol.TypeRunEvent && ss.last > 0 {
		var ev agent.Event
		// The run's own guess counts its checkpoints (appended to the store, not through the
		// session); the session's counts its cells: the later of the two is the seq to come.
		if err := m.Decode(&ev); err == nil && ev.Seq < ss.last+1 {
			ev.Seq = ss.last + 1
			if payload, err := json.Marshal(&ev); err == nil {
				c := *m
				c.Payload = payload
				m = &c
			}
		}
	}
	return ss.appendLocked(ctx, m)
}

// HoldRun holds agent run id, which the caller runs in this process (labmate run drives its
// agent itself, its Options.Cells this runner's Cells), as the runner holds the runs it starts:
// the run's session stays live, its kernels kept however long the model thinks, and cancel
// stops the run (Running). The log returned is the session's, for the run's own stream
// (agent.LogRun) beside its cells. release lets the run go and closes its kernels (as
// runAndWatch does).
func (s *Runner) HoldRun(id string, cancel context.CancelFunc) (l operation.Log, release func(), err error) {
	if err := s.claimRun(id, cancel); err != nil {
		return nil, nil, err
	}
	ss, err := s.Open(id)
	if err != nil {
		s.endRun(id)
		return nil, nil, err
	}
	var once sync.Once
	return runLog{ss}, func() {
		once.Do(func() {
			ss.closeKernels(-1)
			s.endRun(id)
			s.Release(ss)
		})
	}, nil
}
