// Package locallog is the protocol log of a data directory (DATA/labmate.db) as the labmate
// processes of this machine write into it, so that whatever runs from the command line — an
// agent run (labmate run), a cell (labmate exec), a campaign, a bench protocol — is in the same
// log, the one story, as the server's, listed and followed live by the dashboard and every
// client.
//
// Every process appends to the file directly (package protocol/sqlite assigns each message's
// seq inside its write transaction), whether or not labmate serve has it open; a server follows
// what the others append (sqlite.Store.Tail). Whether the process that writes a stream still
// runs is the store's to say (sqlite.Store.Writer): each writing process holds a lock the kernel
// releases when it dies, even of kill -9. OwnRun and Run.Logged are the two calls labmate run
// makes; Open is the log of every other command.
package locallog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// File is the log's file in the data directory.
const File = "labmate.db"

// Open opens the log of data directory data (created when missing, with the directory) for a
// process that appends to it beside any other; role says what the process is ("run", "exec",
// "campaign", "lab", …), as Runs.Owner tells others.
func Open(data, role string) (*sqlite.Store, error) {
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, fmt.Errorf("locallog: %w", err)
	}
	st, err := sqlite.OpenAs(filepath.Join(data, File), role)
	if err != nil {
		return nil, fmt.Errorf("locallog: %w", err)
	}
	return st, nil
}

// OpenReadOnly opens the log of data directory data for a process that only reads it (labmate
// session show, run show --artifact), beside whichever processes write it. A data directory
// without a log is an error wrapping fs.ErrNotExist that names the directory.
func OpenReadOnly(data string) (*sqlite.Store, error) {
	st, err := sqlite.OpenReadOnly(filepath.Join(data, File))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("the data directory %s has no log (%s): nothing ran there yet (--data names another): %w", data, File, err)
	case err != nil:
		return nil, fmt.Errorf("locallog: %w", err)
	}
	return st, nil
}

// Runs are the agent runs labmate run processes of data directory Data run over its log, as
// the server over Log sees them (runner.LocalRuns).
type Runs struct {
	Log  *sqlite.Store
	Data string
}

// Owner says whether agent run id is run by another labmate process than a server (labmate
// run): found when such a process wrote its stream last, live while that process runs, and
// its pid.
func (r Runs) Owner(id string) (pid int, found, live bool) {
	w, ok := r.Log.Writer(context.Background(), id, id)
	if !ok || w.Self || w.Role == "serve" {
		return 0, false, false
	}
	return w.Pid, true, w.Live
}

// ResumeCommand is ResumeCommand(r.Data, id).
func (r Runs) ResumeCommand(id string) string { return ResumeCommand(r.Data, id) }

// ResumeCommand is the command that continues agent run id of data directory data from its
// checkpoint, in its workspace, without a server.
func ResumeCommand(data, id string) string {
	return fmt.Sprintf("labmate run --resume %s --data %s", id, data)
}

// Died is the run_end of a run whose labmate run process (pid; 0: unknown) stopped without ending it:
// resumable from its checkpoint, as resume says (when not empty).
func Died(pid int, resume string) *protocol.RunEnd {
	end := &protocol.RunEnd{Reason: protocol.ReasonProcessDied, Resumable: true, Resume: resume,
		Error: fmt.Sprintf("labmate run (pid %d) stopped (killed?) while the run ran", pid)}
	if pid == 0 {
		end.Error = "labmate run stopped (killed?) while the run ran"
	}
	if resume != "" {
		end.Error += "; its checkpoint continues it: " + resume
	}
	return end
}

// Resumed logs to l that run id resumes (by says who resumed it), and returns the seq its next
// message gets. A run whose stream a killed process left open is ended first (Died); a run the
// log does not have (it ran before runs were logged) gets a stream that begins there.
func Resumed(ctx context.Context, l operation.Log, id, by string) (int64, error) {
	resume := func() (*protocol.EnhancedMessage, error) {
		m, err := protocol.NewMessage(protocol.TypeRunResume, id, id, &protocol.RunResume{By: by})
		if err != nil {
			return nil, err
		}
		return l.Append(ctx, m)
	}
	m, err := resume()
	if errors.Is(err, protocol.ErrIllegalTransition) {
		var end *protocol.EnhancedMessage
		if end, err = protocol.NewMessage(protocol.TypeRunEnd, id, id, Died(0, "")); err == nil {
			if _, err = l.Append(ctx, end); err == nil {
				m, err = resume()
			}
		}
	}
	if err != nil {
		return 0, fmt.Errorf("locallog: logging the resume of run %s: %w", id, err)
	}
	return m.Seq + 1, nil
}
