package main

import (
	"fmt"
	"io"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/runner/locallog"
)

// localLog opens the log of data directory flag (default: the usual one) for a command that
// runs something here (role: "exec", "campaign", "lab"), beside labmate serve and any other
// process, with the Host that takes the interrupts other processes (the dashboard) append for
// what the command holds. When the log cannot be opened the run goes on, logged in memory only,
// and stderr says so. done stops following the log and closes it.
func localLog(stderr io.Writer, flag, role string) (log operation.Log, host *runner.Host, done func()) {
	dir, err := dataDir(flag)
	if err == nil {
		var st interface {
			operation.Log
			Close() error
		}
		if st, err = locallog.Open(dir, role); err == nil {
			h := runner.NewHost(st)
			return st, h, func() { h.Close(); st.Close() }
		}
	}
	fmt.Fprintf(stderr, "labmate %s: not written to the data directory's log (the dashboard will not list it): %v\n", role, err)
	log = protocol.NewMemStore()
	h := runner.NewHost(log)
	return log, h, h.Close
}
