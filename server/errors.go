package server

import (
	"errors"
	"net/http"

	"github.com/labmate/labmate/runner"
)

// statusOf is the HTTP status of err: a runner.BusyError's or runner.Refusal's own, else def.
func statusOf(err error, def int) int {
	var be *runner.BusyError
	if errors.As(err, &be) {
		return be.Code
	}
	var rf *runner.Refusal
	if errors.As(err, &rf) {
		return rf.Code
	}
	return def
}

// errorStatus answers err with its status (a runner.BusyError's, else def).
func errorStatus(w http.ResponseWriter, err error, def int) {
	httpError(w, statusOf(err, def), err.Error())
}
