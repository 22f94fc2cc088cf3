package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

func newExecCmd() *cobra.Command {
	var (
		kernelName string
		timeout    time.Duration
		asJSON     bool
		workspace  string
		sf         sandboxFlags
	)
	cmd := &cobra.Command{
		Use:   "exec [flags] FILE|-",
		Short: "Run a file (or stdin) as one cell in a fresh sandboxed kernel, streaming its output",
		Long: `Run a file (or - for stdin) as one cell in a fresh sandboxed kernel and print its output
live as it arrives. The kernel is chosen by --kernel or the file's extension (.m octave,
.py python, .sh shell). The workspace — the only writable directory — is the current
directory unless --workspace says otherwise.

With --json, the run is printed as NDJSON protocol messages: operation_request,
operation_ack, operation_start, one operation_progress per observation, and
operation_complete or operation_failed.

Ctrl-C interrupts the cell. Exit status: 0 when the cell completed, 1 on an error or crash,
124 on a timeout, 130 when interrupted, 2 when labmate could not run it at all.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := readCode(cmd.InOrStdin(), args[0])
			if err != nil {
				return err
			}
			name := kernelName
			if name == "" {
				if name, err = kernelFor(args[0]); err != nil {
					return err
				}
			}
			kk, err := findKernel(name)
			if err != nil {
				return err
			}
			cell := &kernel.Cell{Code: code, Timeout: timeout}
			if err := cell.Validate(); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if workspace == "" {
				if workspace, err = os.Getwd(); err != nil {
					return err
				}
			}
			sb, err := sf.open()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			var out reporter = &textReporter{stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
			if asJSON {
				out = newJSONReporter(cmd.OutOrStdout())
			}
			req := &protocol.Request{Kind: "exec", Kernel: name, Code: code, TimeoutS: timeout.Seconds()}
			if err := out.message(protocol.TypeRequest, req); err != nil {
				return err
			}
			out.message(protocol.TypeAck, &protocol.StatePayload{State: protocol.Acknowledged})
			// The kernel starts in a context of its own: Ctrl-C during start-up must not leave
			// a half-started interpreter behind, and start-up is bounded by the kernel itself.
			k, err := kk.start(context.WithoutCancel(ctx), &kernel.Options{Sandbox: sb, Workspace: workspace})
			if err != nil {
				out.message(protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonError, Error: err.Error()})
				return exitError{2}
			}
			defer k.Close()
			out.message(protocol.TypeStart, &protocol.StatePayload{State: protocol.Started})
			var res *protocol.Result
			for step, err := range k.Exec(ctx, cell) {
				switch {
				case err != nil:
					out.message(protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonError, Error: err.Error()})
					return exitError{2}
				case step.Result != nil:
					res = step.Result
				default:
					out.message(protocol.TypeProgress, &protocol.Progress{Observation: step.Observation})
				}
			}
			t, payload := protocol.Outcome(res)
			out.message(t, payload)
			return exitCode(res)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&kernelName, "kernel", "k", "", "kernel: octave, python or shell (default: from the file extension)")
	f.DurationVar(&timeout, "timeout", 0, "wall-clock limit for the cell, e.g. 30s or 5m (default: none); then interrupt, then kill")
	f.BoolVar(&asJSON, "json", false, "print the operation as NDJSON protocol messages")
	f.StringVar(&workspace, "workspace", "", "the kernel's working directory, the only writable one (default: the current directory)")
	sf.add(cmd)
	return cmd
}

func readCode(stdin io.Reader, arg string) (string, error) {
	var b []byte
	var err error
	if arg == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(arg)
	}
	if err != nil {
		return "", fmt.Errorf("reading the cell: %w", err)
	}
	return string(b), nil
}

func kernelFor(path string) (string, error) {
	ext := filepath.Ext(path)
	for _, k := range kernels {
		for _, e := range k.exts {
			if e == ext {
				return k.name, nil
			}
		}
	}
	if path == "-" {
		return "", errors.New("reading the cell from stdin: say which kernel runs it with --kernel octave|python|shell")
	}
	return "", fmt.Errorf("%s: cannot tell the kernel from the extension %q: pass --kernel octave|python|shell", path, ext)
}

func exitCode(r *protocol.Result) error {
	switch r.Status {
	case protocol.StatusOK:
		return nil
	case protocol.StatusTimeout:
		return exitError{124}
	case protocol.StatusInterrupted:
		return exitError{130}
	}
	return exitError{1}
}

// reporter prints one operation's messages.
type reporter interface {
	message(t protocol.Type, payload any) error
}

// jsonReporter prints NDJSON EnhancedMessages, run through a protocol.Log so that the
// stream obeys the operation state machine and carries gap-free seq numbers.
type jsonReporter struct {
	log *protocol.Log
	op  string
	enc *json.Encoder
}

func newJSONReporter(w io.Writer) *jsonReporter {
	return &jsonReporter{log: protocol.NewLog(uuid.NewString()), op: uuid.NewString(), enc: json.NewEncoder(w)}
}

func (r *jsonReporter) message(t protocol.Type, payload any) error {
	m, err := protocol.NewMessage(t, "", r.op, payload)
	if err != nil {
		return err
	}
	if m, err = r.log.Append(m); err != nil {
		return err
	}
	return r.enc.Encode(m)
}

// textReporter prints output as a terminal user expects: stdout lines to stdout, stderr
// lines to stderr, labmate's own notes to stderr prefixed "labmate:".
type textReporter struct{ stdout, stderr io.Writer }

func (r *textReporter) message(t protocol.Type, payload any) error {
	switch p := payload.(type) {
	case *protocol.Progress:
		o := p.Observation
		switch {
		case o.Kind == protocol.ObsStdout:
			fmt.Fprintln(r.stdout, o.Line)
		case o.Kind == protocol.ObsStderr:
			fmt.Fprintln(r.stderr, o.Line)
		case o.Event != nil && o.Event.Name == protocol.EventTruncated:
			fmt.Fprintln(r.stderr, "labmate: output truncated:", o.Event.Detail)
		}
	case *protocol.Complete:
		fmt.Fprintf(r.stderr, "labmate: ok in %.3fs\n", p.Result.DurationS)
	case *protocol.Failed:
		switch {
		case p.Result == nil:
			fmt.Fprintf(r.stderr, "labmate: failed: %s\n", p.Error)
		case p.Result.Line > 0:
			fmt.Fprintf(r.stderr, "labmate: %s at line %d after %.3fs: %s\n", p.Reason, p.Result.Line, p.Result.DurationS, firstLine(p.Error))
		default:
			fmt.Fprintf(r.stderr, "labmate: %s after %.3fs: %s\n", p.Reason, p.Result.DurationS, firstLine(p.Error))
		}
	}
	return nil
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
