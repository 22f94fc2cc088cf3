package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"strconv"

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

// EventCell reports that a run_code cell is submitted as operation Cell.ID of the run's
// session (with Options.Cells); its messages follow in the session, not in the run's events.
const EventCell EventType = "cell"

// execCell runs one cell through Options.Cells, collecting its outcome in out and reporting it
// as an EventCell, then perception's verdicts.
func (r *run) execCell(ctx context.Context, req *protocol.Request, out *operation.Collector, opts *operation.Options, blind bool) error {
	c := &CellRun{Session: r.st.RunID, ID: out.OperationID, Workspace: r.st.Task.Workspace, Request: req, Options: opts}
	// Said before the cell is submitted: a reader of the session knows the step and the
	// attempt of each of the cell's messages (Story).
	if err := r.emit(ctx, &Event{Type: EventCell, Cell: &CellRef{ID: out.OperationID, Kernel: req.Kernel}}, false); err != nil {
		return err
	}
	for m, err := range r.a.opts.Cells.Exec(ctx, c) {
		if err != nil {
			return err
		}
		payload, err := protocol.DecodePayload(m)
		if err != nil {
			return err
		}
		if err := r.collect(ctx, out, &operation.Message{Type: m.Type, Payload: payload}, blind); err != nil {
			return err
		}
	}
	return nil
}

// Story reads the messages of run id's session, in order, as the run's event stream: its
// run_events, and the messages of its cells as operation events (the events a run with
// kernels of its own emits), each with the step and the attempt of its cell's EventCell.
type Story struct {
	id    string
	cells map[string]*Event // the EventCell of each cell, by its operation id
}

// NewStory reads run id's session.
func NewStory(id string) *Story { return &Story{id: id, cells: map[string]*Event{}} }

// In says whether m, a message of the run's session, is in the run's event stream: one of
// its run_events, or a message of one of its cells (CellEvent).
func (s *Story) In(m *protocol.EnhancedMessage) bool {
	if m.OperationID == s.id {
		return m.Type == protocol.TypeRunEvent
	}
	switch m.Type {
	case protocol.TypeRunEvent, protocol.TypeRunEnd, protocol.TypeRunResume, protocol.TypeSessionUpdate:
		return false
	}
	return true
}

// Cell is the operation event of m, a message of one of the run's cells.
func (s *Story) Cell(m *protocol.EnhancedMessage) *Event {
	ev := CellEvent(s.id, m)
	if ref := s.cells[m.OperationID]; ref != nil {
		ev.Step, ev.Attempt = ref.Step, ref.Attempt
	}
	return ev
}

// Event is the event run_event m carries, its Seq the message's; an EventCell is noted for
// the cell's messages that follow.
func (s *Story) Event(m *protocol.EnhancedMessage) (*Event, error) {
	ev, err := EventOf(m)
	if err == nil {
		s.Note(ev)
	}
	return ev, err
}

// JSON is the payload of run_event m with the event's seq the message's — the payload itself
// when it says so already (the writer's expectation held), else re-encoded — noting an
// EventCell as Event does.
func (s *Story) JSON(m *protocol.EnhancedMessage) ([]byte, error) {
	if bytes.Contains(m.Payload, []byte(`"type":"cell"`)) {
		if _, err := s.Event(m); err != nil {
			return nil, err
		}
	}
	id, _ := json.Marshal(m.OperationID) // a string always encodes
	prefix := `{"run_id":` + string(id) + `,"seq":` + strconv.FormatInt(m.Seq, 10) + `,`
	if bytes.HasPrefix(m.Payload, []byte(prefix)) {
		return m.Payload, nil
	}
	ev, err := EventOf(m)
	if err != nil {
		return nil, err
	}
	return json.Marshal(ev)
}

// Note notes ev, one of the run's events as it is emitted: an EventCell names the step and
// the attempt of the cell's messages that follow (Cell).
func (s *Story) Note(ev *Event) {
	if ev.Type == EventCell && ev.Cell != nil {
		s.cells[ev.Cell.ID] = ev
	}
}
