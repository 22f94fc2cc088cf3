package server

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrBusy is wrapped by the error of a request refused because one of the server's limits
// is reached (live sessions, kernels, operations, agent runs). Nothing was started or
// logged; the server keeps serving, and the request may succeed later.
var ErrBusy = errors.New("server: busy")

// busyError is a refusal at a limit, with the HTTP status that says it: 429 for what one
// session asks too much of, 503 for the server's own capacity.
type busyError struct {
	code int
	msg  string
}

func (e *busyError) Error() string        { return e.msg }
func (e *busyError) Is(target error) bool { return target == ErrBusy }

func busy(code int, format string, args ...any) error {
	return &busyError{code: code, msg: fmt.Sprintf(format, args...)}
}

// statusOf is the HTTP status of err: a busyError's own, else def.
func statusOf(err error, def int) int {
	var be *busyError
	if errors.As(err, &be) {
		return be.code
	}
	return def
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

// errorStatus answers err with its status (a busyError's, else def).
func errorStatus(w http.ResponseWriter, err error, def int) {
	httpError(w, statusOf(err, def), err.Error())
}
