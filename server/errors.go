package server

import (
	"errors"
	"net/http"

	"github.com/labmate/labmate/runner"
)

// statusOf is the HTTP status of err: 429 for a session's limit, 503 for the runner's, 409
// for a conflict, 501 for what the runner does not do, 400 for a bad task, else def.
func statusOf(err error, def int) int {
	var be *runner.BusyError
	switch {
	case errors.As(err, &be) && be.Session:
		return http.StatusTooManyRequests
	case be != nil:
		return http.StatusServiceUnavailable
	case errors.Is(err, runner.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, runner.ErrUnsupported):
		return http.StatusNotImplemented
	case errors.Is(err, runner.ErrBadTask):
		return http.StatusBadRequest
	}
	return def
}

// errorStatus answers err with its status (statusOf).
func errorStatus(w http.ResponseWriter, err error, def int) {
	httpError(w, statusOf(err, def), err.Error())
}
