package benchrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/report"
)

// StartFunc starts the named sandboxed kernel ("python" or "octave") working in workspace.
type StartFunc func(ctx context.Context, kernel, workspace string) (kernel.Kernel, error)

// The kernels a protocol is written for.
const (
	Python = "python" // an Opentrons Protocol API v2 file: metadata and def run(protocol):
	Octave = "octave" // a script of the Octave bench functions (lab/bench/client/octave), or one defining function run (protocol)
)

// KernelOf is the kernel of a protocol file by its extension: Octave for .m, else Python.
func KernelOf(path string) string {
	if filepath.Ext(path) == ".m" {
		return Octave
	}
	return Python
}

// Options of Run and Simulate.
type Options struct {
	// Start starts the kernel the protocol runs in (required).
	Start StartFunc
	// Kernel is the protocol's language: Python (default) or Octave.
	Kernel string
	// Approve is asked before each command on a physical backend (nil: Refuse).
	Approve bench.Approver
	// Watch are constraints on the bench's telemetry, e.g. "vol_plate_A1 <= 300".
	Watch []string
	// Hotfix is when perception interrupts the protocol (default on_error).
	Hotfix string
	// Timeout is the protocol's wall-clock limit (default 5 minutes).
	Timeout time.Duration
	// Log receives the operation's messages as text (nil: none).
	Log io.Writer
	// OpLog is the protocol log the protocol's operation is written to, a session of its own
	// (the data directory's, where labmate serve shows it; nil: kept in memory only).
	OpLog operation.Log
	// Hold, when set, holds the protocol's operation while it runs (runner.Host.Hold): the
	// context it returns is the operation's, cancelled when another process interrupts it
	// through OpLog (the dashboard's Interrupt). release is called when the operation ends.
	Hold func(ctx context.Context, session, id string) (hctx context.Context, release func())
	// Params are the protocol's parameters, what get_values returns (a fields.json beside the
	// protocol, --param NAME=VALUE).
	Params bench.Params
	// Labware are custom labware definitions (files) load_labware knows by load name, before
	// the standard ones.
	Labware []*bench.Labware
}

// Entry is one command the protocol sent and what came of it.
type Entry struct {
	Command bench.Command `json:"command"`
	Event   *bench.Event  `json:"event,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// Report is what a protocol did to a deck.
type Report struct {
	Deck     *bench.Deck
	Entries  []Entry
	Failure  string   // why the protocol failed, with its line; "" when it ran
	Verdicts []string // perception's verdicts other than Normal
}

// Simulate runs a protocol's code on a fresh twin in a temporary workspace: nothing persists.
func Simulate(ctx context.Context, code string, opts *Options) (*Report, error) {
	ws, err := os.MkdirTemp("", "labmate-simulate-")
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	defer os.RemoveAll(ws)
	return run(ctx, code, ws, false, opts)
}

// Run runs a protocol's code on the bench of workspace ws, which keeps its commands for the
// next run. The error is for a protocol that could not be run; one that failed is a Report
// with its Failure.
func Run(ctx context.Context, code, ws string, opts *Options) (*Report, error) {
	return run(ctx, code, ws, true, opts)
}

func run(ctx context.Context, code, ws string, keep bool, opts *Options) (*Report, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	hotfix := opts.Hotfix
	if hotfix == "" {
		hotfix = string(protocol.HotfixOnError)
	}
	cell := &operation.Cell{TimeoutS: timeout.Seconds(), Hotfix: hotfix, Watch: opts.Watch}
	switch opts.Kernel {
	case "", Python:
		cell.Kernel, cell.Code = Python, code+"\n__import__('labmate')._run_protocol()\n"
	case Octave:
		cell.Kernel, cell.Code = Octave, octaveCell(code)
	default:
		return nil, fmt.Errorf("a protocol is Python or Octave, not %q", opts.Kernel)
	}
	req := cell.Request()
	plan, err := operation.Check(req)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	note := func(c bench.Command, ev *bench.Event, err error) {
		if err == nil && (c.Name == "protocol" || c.Name == "params") {
			return // how the protocol runs, not what it does
		}
		e := Entry{Command: c, Event: ev}
		if err != nil {
			e.Error = err.Error()
		}
		rep.Entries = append(rep.Entries, e)
	}
	sopts := &ServeOptions{Keep: keep, Approve: opts.Approve, Note: note}
	if opts.Params != nil || len(opts.Labware) > 0 {
		d := bench.NewDeck()
		if keep {
			if d, err = Open(ctx, ws); err != nil {
				return nil, err
			}
		}
		for _, lw := range opts.Labware {
			d.AddDefinition(lw)
		}
		d.SetParams(opts.Params)
		sopts.Deck = d
	}
	srv, err := Serve(ctx, ws, sopts)
	if err != nil {
		return nil, err
	}
	last, err := operate(ctx, opts, ws, req, plan, rep)
	if cerr := srv.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	rep.Deck = srv.Deck()
	if last.Type != protocol.TypeComplete {
		rep.Failure = failureText(last, rep.Entries)
	}
	return rep, nil
}

// operate runs the protocol's cell in a kernel working in ws, reporting its messages to
// opts.Log and perception's verdicts to rep.
func operate(ctx context.Context, opts *Options, ws string, req *protocol.Request, plan *operation.Plan, rep *Report) (*operation.Message, error) {
	var k kernel.Kernel
	defer func() {
		if k != nil {
			k.Close()
		}
	}()
	start := func(ctx context.Context, name string) (kernel.Kernel, error) {
		var err error
		k, err = opts.Start(context.WithoutCancel(ctx), name, ws)
		return k, err
	}
	w := opts.Log
	if w == nil {
		w = io.Discard
	}
	out := report.NewText(w, w, plan.Hotfix, func(rel string) string { return filepath.Join(ws, rel) })
	var last *operation.Message
	var log operation.Log = protocol.NewMemStore()
	if opts.OpLog != nil {
		log = opts.OpLog
	}
	session, id := uuid.NewString(), uuid.NewString()
	if opts.Hold != nil {
		var release func()
		ctx, release = opts.Hold(ctx, session, id)
		defer release()
	}
	for m, err := range operation.Run(ctx, log, session, id, req, start, nil) {
		if err != nil {
			return nil, err
		}
		if err := out.Message(m.Type, m.Payload); err != nil {
			return nil, err
		}
		if p, ok := m.Payload.(*protocol.Progress); ok && p.Verdict != nil && p.Verdict.State != protocol.Normal {
			rep.Verdicts = append(rep.Verdicts, fmt.Sprintf("[%s] %s", p.Verdict.State, p.Verdict.Message))
		}
		last = m
	}
	if last == nil {
		return nil, fmt.Errorf("the protocol's operation ended without a message")
	}
	return last, nil
}

// failureText says why the protocol failed: the twin's refusal, else the kernel's error, with
// the protocol line.
func failureText(last *operation.Message, entries []Entry) string {
	if n := len(entries); n > 0 && entries[n-1].Error != "" {
		return entries[n-1].Error
	}
	f, ok := last.Payload.(*protocol.Failed)
	if !ok {
		return "the protocol did not finish"
	}
	msg := f.Error
	if f.Result != nil && f.Result.Error != "" {
		msg = f.Result.Error
		if f.Result.Line > 0 {
			msg = fmt.Sprintf("line %d: %s", f.Result.Line, msg)
		}
	}
	if f.Verdict != nil && f.Reason == protocol.ReasonInterrupted {
		msg = fmt.Sprintf("perception stopped it: %s (%s)", f.Verdict.Message, msg)
	}
	return msg
}

// octaveCell is the cell that runs an Octave protocol: the script as it stands, its lines the
// cell's as Octave reports them; when it defines function run (protocol), as Opentrons' def
// run(protocol):, run is then called with the bench's context-level functions as fields
// (lab/bench/client/octave/__bench_protocol__.m). A file whose first statement is a function
// definition is a function file to Octave, so "1; " before it on its line (the line numbers
// stay) makes it a script.
func octaveCell(code string) string {
	lines := strings.SplitAfter(code, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || (strings.HasPrefix(t, "%") || strings.HasPrefix(t, "#")) && t != "%{" && t != "#{" {
			continue
		}
		if t == "function" || strings.HasPrefix(t, "function ") || strings.HasPrefix(t, "function\t") {
			lines[i] = "1; " + l
		}
		break
	}
	code = strings.Join(lines, "")
	if !strings.HasSuffix(code, "\n") {
		code += "\n"
	}
	return code + `if (exist ("run") == 103) run (__bench_protocol__ ()); endif` + "\n"
}
