// Package locallog is the protocol log of a data directory (DATA/labmate.db) as a labmate run
// process writes its agent run into it, so that a run started from the command line is in the
// same log — the one story — as the server's runs, listed and followed live by the dashboard
// and every client.
//
// The log has one writer process at a time (package protocol/sqlite locks the file). A run's
// process appends each message directly, opening the file for that message only, while no
// server holds it; while labmate serve holds it, through the server's local door: a Unix socket
// in the data directory (Socket), open to this user only, which checks that the sender owns
// the run (the peer's pid, from the kernel) before the server appends the message to its log,
// where followers see it at once. The process owns its run for as long as it runs it (Own): a
// locked file DATA/owners/ID.lock naming its pid, released by the kernel when the process dies,
// so that a server can tell a run still running from one whose process was killed (Owner).
// OwnRun and Run.Logged are the two calls labmate run makes.
package locallog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// File is the log's file in the data directory.
const File = "labmate.db"

// Socket is the path of the local door of a server that holds the log of data directory data.
func Socket(data string) string { return filepath.Join(data, "serve.sock") }

// Path is the URL path of the door's one endpoint: POST a message, get the stored copy.
const Path = "/v1/log"

func ownerFile(data, id string) string { return filepath.Join(data, "owners", id+".lock") }

// Own makes this process the owner of run id of data directory data until release is called
// (or the process ends). A run another live process owns is refused, naming its pid.
func Own(data, id string) (release func(), err error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id[0] == '.' {
		return nil, fmt.Errorf("locallog: run id %q is not a name", id)
	}
	if err := os.MkdirAll(filepath.Join(data, "owners"), 0o700); err != nil {
		return nil, fmt.Errorf("locallog: %w", err)
	}
	path := ownerFile(data, id)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locallog: %w", err)
	}
	// A server looking at the file holds a shared lock for an instant: try a little while.
	for i := 0; ; i++ {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil || i == 20 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil {
		pid, _ := readPid(f)
		f.Close()
		return nil, fmt.Errorf("locallog: run %s is being run by another process (pid %d): stop it first", id, pid)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locallog: %s: %w", path, err)
	}
	return func() {
		os.Remove(path) // before the lock goes: a run that ended has no owner
		f.Close()
	}, nil
}

// Owner says whether a process owns run id of data directory data: found when the run was
// started by one (its owner file is there), live while that process runs it, and its pid.
func Owner(data, id string) (pid int, found, live bool) {
	f, err := os.OpenFile(ownerFile(data, id), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0, false, false
	}
	defer f.Close()
	pid, _ = readPid(f)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return pid, true, true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return pid, true, false
}

func readPid(f *os.File) (int, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 32))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Log appends to the log of a data directory from a process other than the server
// (operation.Log): directly while no server holds the file, through the server's door while
// one does. Create it with New.
type Log struct {
	data   string
	client *http.Client
	// Wait bounds how long Append tries when neither the file nor a server's door can be
	// reached (a server starting or stopping); default 10 s. After such a failure, later
	// appends try once each until one gets through, so that a run is not held up by a log it
	// cannot reach (another program holds the file).
	Wait    time.Duration
	failing atomic.Bool
}

// New returns the Log of data directory data.
func New(data string) *Log {
	sock := Socket(data)
	return &Log{data: data, Wait: 10 * time.Second, client: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}}
}

// Append appends m and returns the stored copy. A message the log refuses is an error that
// wraps protocol.ErrIllegalTransition or protocol.ErrInvalidMessage, whichever way it went.
// A message sent to a server that stopped before it answered is looked for in the log (by its
// id) once the file or the next server can be reached, and sent again only if it is not there:
// it is logged once either way.
func (l *Log) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	deadline := time.Now()
	if !l.failing.Load() {
		deadline = deadline.Add(l.Wait)
	}
	sent := false // to a server that stopped before it answered: it may have logged m
	for {
		if sent {
			if c := l.logged(ctx, m); c != nil {
				l.failing.Store(false)
				return c, nil
			}
		}
		c, err := l.direct(ctx, m)
		if !errors.Is(err, sqlite.ErrInUse) {
			l.failing.Store(false)
			return c, err
		}
		c, err = l.relay(ctx, m)
		var unreachable *doorError
		var lost *lostReply
		switch {
		case errors.As(err, &lost):
			if !sent { // the server is stopping: wait for the file or the next server
				sent, deadline = true, time.Now().Add(l.Wait)
			}
		case !errors.As(err, &unreachable):
			l.failing.Store(false)
			return c, err
		}
		if time.Now().After(deadline) {
			l.failing.Store(true)
			return nil, fmt.Errorf("locallog: %s is held by another process, and no server answers on %s: %w", filepath.Join(l.data, File), Socket(l.data), err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// direct appends m to the file, held only for that.
func (l *Log) direct(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	st, err := sqlite.Open(filepath.Join(l.data, File))
	if err != nil {
		return nil, err
	}
	c, err := st.Append(ctx, m)
	return c, errors.Join(err, st.Close())
}

// logged returns the stored copy of m when the log has it (nil when not, or when the log
// cannot be read).
func (l *Log) logged(ctx context.Context, m *protocol.EnhancedMessage) *protocol.EnhancedMessage {
	st, err := sqlite.OpenReadOnly(filepath.Join(l.data, File))
	if err != nil {
		return nil
	}
	defer st.Close()
	for c, err := range st.After(ctx, m.SessionID, 0) {
		if err != nil {
			return nil
		}
		if c.ID == m.ID {
			return c
		}
	}
	return nil
}

// doorError is a server's door that could not be reached.
type doorError struct{ err error }

func (e *doorError) Error() string { return e.err.Error() }
func (e *doorError) Unwrap() error { return e.err }

// lostReply is a message sent through the door of a server that stopped before it answered.
type lostReply struct{ err error }

func (e *lostReply) Error() string { return e.err.Error() }
func (e *lostReply) Unwrap() error { return e.err }

// relay appends m through the server's door.
func (l *Log) relay(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("locallog: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://labmate"+Path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("locallog: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, &doorError{err}
		}
		return nil, &lostReply{fmt.Errorf("locallog: the server's door %s: %w", Socket(l.data), err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, &lostReply{fmt.Errorf("locallog: the server's door %s: %w", Socket(l.data), err)}
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		err := errors.New(strings.TrimSpace(e.Error))
		switch resp.StatusCode {
		case http.StatusConflict:
			err = fmt.Errorf("%w: %w", protocol.ErrIllegalTransition, err)
		case http.StatusBadRequest:
			err = fmt.Errorf("%w: %w", protocol.ErrInvalidMessage, err)
		}
		return nil, fmt.Errorf("locallog: the server refused %s of run %s (%s): %w", m.Type, m.OperationID, resp.Status, err)
	}
	var c protocol.EnhancedMessage
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("locallog: the server's reply: %w", err)
	}
	return &c, nil
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

// Resumed logs to l that run id, owned by this process, resumes (by says who resumed it), and
// returns the seq its next message gets. A run whose stream a killed process left open is
// ended first (Died); a run the log does not have (it ran before runs were logged) gets a
// stream that begins there.
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

// OpenStore opens the log of data directory data for the one process that holds it (labmate
// serve), waiting up to wait while labmate run processes append to it (each holds it for one
// message).
func OpenStore(data string, wait time.Duration) (*sqlite.Store, error) {
	deadline := time.Now().Add(wait)
	for {
		st, err := sqlite.Open(filepath.Join(data, File))
		if !errors.Is(err, sqlite.ErrInUse) || time.Now().After(deadline) {
			return st, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Listen opens the local door's socket of data directory data, for the process that holds its
// log (OpenStore): a Unix socket only this user may connect to, replacing the one a killed
// server left. It is removed when the listener closes.
func Listen(data string) (net.Listener, error) {
	path := Socket(data)
	if len(path) >= 108 {
		return nil, fmt.Errorf("locallog: %s: the path is too long for a Unix socket (%d bytes, at most 107)", path, len(path))
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == fs.ModeSocket {
		os.Remove(path) // this process holds the log: no other server listens there
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("locallog: %w", err)
	}
	// The data directory is this user's only (0700); the door checks the peer's uid as well.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("locallog: %w", err)
	}
	return ln, nil
}
