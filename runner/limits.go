package runner

import (
	"errors"
	"fmt"
)

// ErrBusy is wrapped by the error of a request refused because one of the server's limits
// is reached (live sessions, kernels, operations, agent runs). Nothing was started or
// logged; the server keeps serving, and the request may succeed later.
var ErrBusy = errors.New("server: busy")

// BusyError is a Refusal at a limit, with the HTTP status that says it: 429 for what one
// session asks too much of, 503 for the server's own capacity.
type BusyError struct {
	Code int // the HTTP status that says it: 429 (one session asks too much) or 503 (the runner is full)
	msg  string
}

func (e *BusyError) Error() string        { return e.msg }
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

func busy(code int, format string, args ...any) error {
	return &BusyError{Code: code, msg: fmt.Sprintf(format, args...)}
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
