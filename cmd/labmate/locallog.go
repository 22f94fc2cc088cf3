package main

import (
	"fmt"
	"io"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner/locallog"
)

// localLog opens the log of data directory flag (default: the usual one) for a command that
// runs something here (role: "exec", "campaign", "lab"), beside labmate serve and any other
// process. When it cannot be opened the run goes on, logged in memory only, and stderr says so.
func localLog(stderr io.Writer, flag, role string) (operation.Log, func()) {
	dir, err := dataDir(flag)
	if err == nil {
		var st interface {
			operation.Log
			Close() error
		}
		if st, err = locallog.Open(dir, role); err == nil {
			return st, func() { st.Close() }
		}
	}
	fmt.Fprintf(stderr, "labmate %s: not written to the data directory's log (the dashboard will not list it): %v\n", role, err)
	return protocol.NewMemStore(), func() {}
}
