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

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Run is an agent run this process runs, written into the data directory's log, where labmate
// serve, the dashboard and every client see it as they see the server's runs.
type Run struct {
	id     string
	log    *sqlite.Store
	resume string // how the run is resumed, for a resumable run_end
	warn   io.Writer
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
	return &Run{id: id, log: st, resume: resume, warn: warn}, func() { st.Close() }, nil
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
			var err error
			if next, err = Resumed(ctx, r.log, r.id, "labmate run --resume"); err != nil {
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
		for ev, err := range agent.LogRun(ctx, r.log, r.id, next, all, endOf, warn) {
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
		for m, err := range st.Operation(ctx, id, id) {
			if errors.Is(err, protocol.ErrUnknownSession) || errors.Is(err, protocol.ErrUnknownOperation) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if m.Type != protocol.TypeRunEvent {
				continue
			}
			ev := &agent.Event{}
			if err := m.Decode(ev); err != nil {
				yield(nil, fmt.Errorf("locallog: %s: event %d of run %s: %w", path, m.Seq, id, err))
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}
