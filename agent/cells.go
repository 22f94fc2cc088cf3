package agent

import (
	"context"
	"iter"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// Cells runs a run's cells as operations of the run's session — in the queue, the kernels,
// the interrupt path and the log every other cell of that session goes through (package
// runner implements it). The run's events then name each cell by its operation id (an
// EventCell) instead of carrying its messages: those are the session's, in the log, and
// whoever interrupts that operation (the dashboard's Interrupt, POST …/interrupt) stops the
// cell, whose interrupted result comes back to the agent like any failure, for a repair.
// Without Cells the agent starts its kernels itself (Options.StartKernel) and a cell's
// messages travel inside the run's events (EventOperation).
type Cells interface {
	// Exec runs c as operation c.ID of session c.Session and yields its messages as they
	// are logged, from operation_request to the terminal message. When ctx ends first, the
	// operation is interrupted and Exec goes on to its terminal message. An error before
	// the first message is a request the runner refused (its limits) or could not log.
	Exec(ctx context.Context, c *CellRun) iter.Seq2[*protocol.EnhancedMessage, error]
	// Kernel returns the session's live kernel of that name, started in workspace (""
	// the runner's choice) when there is none: the run saves and restores its variables
	// through it (kernel.Snapshotter).
	Kernel(ctx context.Context, session, workspace, name string) (kernel.Kernel, error)
}

// CellRun is one cell of a run for Cells.Exec.
type CellRun struct {
	Session string // the run's session: the run's id
	ID      string // the operation's id
	// Workspace is where the session's kernels work, when they are not started yet (the
	// run's Task.Workspace; "": the runner's choice).
	Workspace string
	Request   *protocol.Request
	// Options are the perceive loop's (the run's judge, its artifact keeper); nil: the
	// runner's own.
	Options *operation.Options
}

// CellRef names a run_code operation of the run's session (an EventCell): its messages are
// that operation's in the log.
type CellRef struct {
	ID     string `json:"id"`
	Kernel string `json:"kernel"`
}

// EventCell reports that a run_code cell was submitted as operation Cell.ID of the run's
// session (with Options.Cells); its messages follow in the session, not in the run's events.
const EventCell EventType = "cell"

// execCell runs one cell through Options.Cells, collecting its outcome in out and reporting it
// as an EventCell, then perception's verdicts.
func (r *run) execCell(ctx context.Context, req *protocol.Request, out *operation.Collector, opts *operation.Options, blind bool) error {
	c := &CellRun{Session: r.st.RunID, ID: out.OperationID, Workspace: r.st.Task.Workspace, Request: req, Options: opts}
	if c.Options == nil {
		c.Options = &operation.Options{} // no judge: not the runner's either
	}
	if c.Options.Artifacts == nil {
		c.Options.Artifacts = r.a.opts.Artifacts
	}
	announced := false
	for m, err := range r.a.opts.Cells.Exec(ctx, c) {
		if err != nil {
			return err
		}
		if !announced {
			announced = true
			if err := r.emit(ctx, &Event{Type: EventCell, Cell: &CellRef{ID: out.OperationID, Kernel: req.Kernel}}, false); err != nil {
				return err
			}
		}
		payload, err := protocol.DecodePayload(m)
		if err != nil {
			return err
		}
		out.Add(&operation.Message{Type: m.Type, Payload: payload})
		if p, ok := payload.(*protocol.Progress); ok && p.Verdict != nil && !blind {
			if err := r.emit(ctx, &Event{Type: EventVerdict, Verdict: p.Verdict}, false); err != nil {
				return err
			}
		}
		if err := r.drainJudge(ctx); err != nil {
			return err
		}
	}
	return nil
}
