package locallog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"sync"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Run is an agent run this process runs, written into the data directory's log, where labmate
// serve, the dashboard and every client see it as they see the server's runs.
type Run struct {
	id      string
	log     *sqlite.Store
	through operation.Log // where the run's own stream is appended: log, or its session in a runner (Through)
	resume  string        // how the run is resumed, for a resumable run_end
	warn    io.Writer

	mu    sync.Mutex
	story *agent.Story // the run's cells, noted from its events, for the step and attempt of their messages (Cells)
}

// OwnRun opens the log of data directory data to run agent run id in this process, and returns
// the run to log its events with (Logged); resume says how the run is resumed (labmate run
// --resume …), messages the log refused go to warn. A run another live process is running is
// refused, naming its pid. release closes the log.
func OwnRun(data, id, resume string, warn io.Writer) (*Run, func(), error) {
	st, err := Open(data, "run")
	if err != nil {
		return nil, nil, err
	}
	ctx := context.Background()
	if w, ok := st.Writer(ctx, id, id); ok && w.Live && !w.Self {
		ops, _ := st.Operations(ctx, id)
		for _, op := range ops {
			if op.ID == id && op.State.Live() {
				st.Close()
				return nil, nil, fmt.Errorf("locallog: run %s is being run by another process (labmate %s, pid %d): stop it first", id, w.Role, w.Pid)
			}
		}
	}
	return &Run{id: id, log: st, through: st, resume: resume, warn: warn, story: agent.NewStory(id)}, func() { st.Close() }, nil
}

// Through appends the run's own stream (its events, its resume) to l, the run's session in a
// runner over Log (runner.Runner.HoldRun), beside the operations of its cells, instead of
// to the file directly.
func (r *Run) Through(l operation.Log) { r.through = l }

// Cells is c, the runner's cells the run's agent runs its cells with (agent.Options.Cells), with
// each message of a cell handed to show as it is logged: as the run's operation event
// (agent.CellEvent) with the step and attempt of the cell's EventCell, as GET /v1/runs/ID/events
// streams it. labmate run prints them between the run's events (Logged); show is called while
// Logged's consumer waits for the next event.
func (r *Run) Cells(c agent.Cells, show func(*agent.Event)) agent.Cells {
	return shownCells{c, r, show}
}

type shownCells struct {
	agent.Cells
	r    *Run
	show func(*agent.Event)
}

func (c shownCells) Exec(ctx context.Context, cell *agent.CellRun) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		for m, err := range c.Cells.Exec(ctx, cell) {
			if err == nil {
				c.r.mu.Lock()
				ev := c.r.story.Cell(m)
				c.r.mu.Unlock()
				c.show(ev)
			}
			if !yield(m, err) {
				return
			}
		}
	}
}

// Log is the log the run is written to, for its checkpoints (agent.Checkpoints).
func (r *Run) Log() *sqlite.Store { return r.log }

// Logged logs events as the run's stream: a new run's (resumed false), or the continuation of
// one that resumes; each event is committed to the file before it is yielded. A resume that fails before its first event (the run had ended) logs
// nothing.
func (r *Run) Logged(ctx context.Context, events iter.Seq2[*agent.Event, error], resumed bool) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		pull, stop := iter.Pull2(events)
		defer stop()
		first, firstErr, ok := pull()
		if !ok || firstErr != nil && resumed {
			if ok {
				yield(nil, firstErr)
			}
			return
		}
		warn := func(err error) {
			fmt.Fprintf(r.warn, "labmate run: the log: %v (the run goes on, and its checkpoint keeps it resumable)\n", err)
		}
		next := int64(1)
		if resumed {
			// The cells a killed process left running end first, then the run.
			if err := Orphaned(ctx, r.log, r.through, r.id); err != nil {
				warn(err)
			}
			var err error
			if next, err = Resumed(ctx, r.through, r.id, "labmate run --resume"); err != nil {
				warn(err)
				next = 1
			}
		}
		endOf := func(stop *agent.Stop) *protocol.RunEnd {
			end := agent.RunEndOf(stop)
			if end.Resumable {
				end.Resume = r.resume
			}
			return end
		}
		all := func(yield func(*agent.Event, error) bool) {
			for ev, err, ok := first, firstErr, true; ok; ev, err, ok = pull() {
				if !yield(ev, err) {
					return
				}
			}
		}
		for ev, err := range agent.LogRun(ctx, r.through, r.id, next, all, endOf, warn) {
			if ev != nil {
				r.mu.Lock()
				r.story.Note(ev)
				r.mu.Unlock()
			}
			// What the run reports is in the file first: a kill -9 right after loses nothing
			// it printed (a run's events are few; the log commits a cell's lines in batches).
			if err := r.log.Sync(ctx); err != nil {
				warn(err)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Events yields the events of run id from the log of data directory data, in order, read
// beside whichever process holds the log. A run the log does not have (it ran before runs were
// logged) has none.
func Events(ctx context.Context, data, id string) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		path := filepath.Join(data, File)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return
		}
		st, err := sqlite.OpenReadOnly(path)
		if err != nil {
			yield(nil, err)
			return
		}
		defer st.Close()
		story := agent.NewStory(id)
		for m, err := range st.After(ctx, id, 0) { // the run's session: its events, and its cells' messages
			if errors.Is(err, protocol.ErrUnknownSession) || errors.Is(err, protocol.ErrUnknownOperation) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !story.In(m) {
				continue
			}
			ev := story.Cell(m)
			if m.OperationID == id {
				if ev, err = story.Event(m); err != nil {
					yield(nil, fmt.Errorf("locallog: %s: event %d of run %s: %w", path, m.Seq, id, err))
					return
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}
