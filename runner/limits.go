package runner

import (
	"errors"
	"fmt"
)

// ErrBusy is wrapped by the error of a request refused because one of the server's limits
// is reached (live sessions, kernels, operations, agent runs). Nothing was started or
// logged; the server keeps serving, and the request may succeed later.
var ErrBusy = errors.New("server: busy")

// BusyError is a refusal at a limit: of one session (it asks too much: its queue is full), or
// of the runner's own capacity.
type BusyError struct {
	Session bool // the session's limit, not the runner's
	msg     string
}

func (e *BusyError) Error() string        { return e.msg }
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

func busy(session bool, format string, args ...any) error {
	return &BusyError{Session: session, msg: fmt.Sprintf(format, args...)}
}

// counter counts what is in use against a limit.
type counter struct {
	ch chan struct{}
}

func newCounter(limit int) *counter { return &counter{ch: make(chan struct{}, limit)} }

// take takes one unit; false when all are in use.
func (c *counter) take() bool {
	select {
	case c.ch <- struct{}{}:
		return true
	default:
		return false
	}
}

func (c *counter) put()       { <-c.ch }
func (c *counter) used() int  { return len(c.ch) }
func (c *counter) limit() int { return cap(c.ch) }
