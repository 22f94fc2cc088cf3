// Command labmate is the AI lab partner's command line: live sandboxed kernels (GNU Octave,
// Python with numpy/scipy, bash) that stream as they run, are watched by perception and
// stopped by the Hot-Fix when they go wrong (labmate exec), the protocol server that
// streams every operation to any client (labmate serve), and the agent that plans a task, runs
// code, repairs what breaks and re-plans when the plan was wrong (labmate run).
//
// It is the only place that picks concrete implementations (kernels, sandbox) and wires them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		var ex exitError
		if errors.As(err, &ex) {
			os.Exit(ex.code)
		}
		fmt.Fprintln(os.Stderr, "labmate:", err)
		os.Exit(2)
	}
}

// exitError ends labmate with a status code after the command already reported why.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// writeJSON prints v on w as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// interruptible is the context of a command that Ctrl-C (SIGINT) and SIGTERM stop.
func interruptible(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
}
