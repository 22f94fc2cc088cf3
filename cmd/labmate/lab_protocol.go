package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner/locallog"
)

// protocolFlags are lab simulate's and lab run's.
type protocolFlags struct {
	language string
	watch    []string
	hotfix   string
	timeout  time.Duration
	approve  string
	params   []string
	labware  []string
	asJSON   bool
	data     string // lab run's data directory, whose log the run is written to
	sf       sandboxFlags
}

func (f *protocolFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.language, "kernel", "k", "", "the kernel the protocol runs in, python or octave (default: octave for a .m file, else python; - reads stdin)")
	alias(cmd.Flags(), "language", "", "kernel")
	cmd.Flags().StringArrayVar(&f.watch, "watch", nil, "a constraint on the bench's telemetry, e.g. 'vol_plate_A1 <= 300' (repeatable)")
	cmd.Flags().StringVar(&f.hotfix, "hotfix", string(protocol.HotfixOnError), "when perception interrupts the protocol: off, on_error or on_warning")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Minute, "wall-clock limit for the protocol")
	cmd.Flags().StringVar(&f.approve, "approve", "ask", "commands on a backend that moves a real instrument: ask (before each) or never (refuse them); the twin is never asked")
	cmd.Flags().StringArrayVar(&f.params, "param", nil, "a value get_values returns, NAME=VALUE (JSON or text; repeatable; over a fields.json beside the protocol)")
	cmd.Flags().StringArrayVar(&f.labware, "labware", nil, "a folder of custom labware definitions (*.json) load_labware knows by load name (repeatable; a labware/ folder beside the protocol is read too)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the commands, plate maps and errors as one JSON object")
	f.sf.add(cmd)
}

// beside reads the protocol's parameters and custom labware: a fields.json and labware/ beside
// the file, the --labware folders and the --param values over them.
func (f *protocolFlags) beside(file string) (bench.Params, []*bench.Labware, error) {
	var params bench.Params
	var defs []*bench.Labware
	if file != "-" {
		var err error
		if params, defs, _, err = benchrun.Beside(file); err != nil {
			return nil, nil, err
		}
	}
	for _, dir := range f.labware {
		more, _, err := benchrun.ReadLabware(dir)
		if err != nil {
			return nil, nil, err
		}
		if len(more) == 0 {
			return nil, nil, fmt.Errorf("--labware %s: no labware definitions (*.json) there", dir)
		}
		defs = append(defs, more...)
	}
	for _, p := range f.params {
		if params == nil {
			params = bench.Params{}
		}
		if err := benchrun.ParseParam(params, p); err != nil {
			return nil, nil, err
		}
	}
	return params, defs, nil
}

// run runs the protocol file on a fresh twin, or on the bench of workspace ws when ws is not
// empty, and prints what it did.
func (f *protocolFlags) run(cmd *cobra.Command, file, ws string) error {
	lang := f.language
	switch lang {
	case "":
		lang = benchrun.KernelOf(file)
	case benchrun.Python, benchrun.Octave:
	default:
		return fmt.Errorf("--kernel %q: choose python or octave", lang)
	}
	approve, err := f.approver(cmd)
	if err != nil {
		return err
	}
	code, err := readCode(cmd.InOrStdin(), file)
	if err != nil {
		return err
	}
	params, defs, err := f.beside(file)
	if err != nil {
		return err
	}
	sb, err := f.sf.open()
	if err != nil {
		return err
	}
	ctx, stop := interruptible(cmd)
	defer stop()
	opts := &benchrun.Options{Start: sandboxed{sb}.Start, Kernel: lang, Approve: approve, Watch: f.watch, Hotfix: f.hotfix,
		Timeout: f.timeout, Log: cmd.ErrOrStderr(), Params: params, Labware: defs}
	var rep *benchrun.Report
	if ws == "" {
		rep, err = benchrun.Simulate(ctx, code, opts)
	} else {
		// The run is an operation of the data directory's log, where labmate serve shows it live.
		log, host, closeLog := localLog(cmd.ErrOrStderr(), f.data, "lab")
		defer closeLog()
		opts.OpLog, opts.Hold = log, host.Hold // the dashboard's Interrupt stops it too
		// It prints a message of the run once the log has committed it.
		display := locallog.NewDisplay(log)
		opts.Log = display.Writer(opts.Log)
		rep, err = benchrun.Run(ctx, code, ws, opts)
		if ferr := display.Flush(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := printBench(cmd.OutOrStdout(), rep, f.asJSON); err != nil {
		return err
	}
	if rep.Failure != "" {
		return exitError{1}
	}
	return nil
}

// printBench prints a report as text or JSON.
func printBench(w io.Writer, rep *benchrun.Report, asJSON bool) error {
	if asJSON {
		s, err := rep.Summary()
		if err != nil {
			return err
		}
		return writeJSON(w, s)
	}
	text, err := rep.Text()
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, text)
	return err
}

// approver is --approve's: how a command on a physical backend is approved.
func (f *protocolFlags) approver(cmd *cobra.Command) (bench.Approver, error) {
	switch f.approve {
	case "never":
		return benchrun.Refuse("--approve never"), nil
	case "ask":
		in := bufio.NewReader(cmd.InOrStdin())
		return func(_ context.Context, c bench.Command) error {
			fmt.Fprintf(cmd.ErrOrStderr(), "labmate: line %d: %s on a real instrument — go ahead? [y/N] ", c.Line, c)
			answer, _ := in.ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
				return fmt.Errorf("%w: the answer was %q", bench.ErrNotApproved, strings.TrimSpace(answer))
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("--approve %q: ask or never", f.approve)
}
