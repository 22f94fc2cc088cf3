package benchrun

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/tool"
)

// The tools' names.
const (
	SimulateProtocol = "simulate_protocol"
	BenchState       = "bench_state"
)

// ToolsOptions give the tools their kernels and bench.
type ToolsOptions struct {
	// Start starts the kernels (Python, Octave) simulate_protocol runs protocols in (required).
	Start StartFunc
	// Workspace is the workspace whose bench bench_state shows: the agent run's, the MCP
	// connection's session's (from tool.OriginOf(ctx)); "" is a session that has none yet, a
	// fresh bench.
	Workspace func(ctx context.Context) (string, error)
}

// SimulateIn is a protocol to simulate.
type SimulateIn struct {
	Code     string   `json:"code" jsonschema:"the protocol's code: Python (Opentrons Protocol API v2: metadata = {'apiLevel': '2.x'} and def run(protocol): …) or an Octave script of the bench functions (plate = load_labware (…); p = load_instrument (…); transfer (p, 100, src, plate.rows{1}); …)"`
	Language string   `json:"language,omitempty" jsonschema:"the protocol's language: python (default) or octave"`
	Watch    []string `json:"watch,omitempty" jsonschema:"constraints on the bench's telemetry that stop the protocol when broken, e.g. 'vol_plate_A1 <= 300'"`
}

// BenchIn asks for the bench.
type BenchIn struct{}

// Tools returns simulate_protocol and bench_state, written once for the agent and MCP.
func Tools(opts *ToolsOptions) []tool.Tool {
	return []tool.Tool{
		tool.Must(SimulateProtocol, "Run an Opentrons-style protocol (Python, Protocol API v2; or an Octave script of the bench functions) on a fresh liquid-handler twin and "+
			"return its numbered commands with their protocol lines, the final plate maps and every warning and error with its line. "+
			"Nothing persists: use it to check a protocol before running it on the bench with labmate.bench() in a Python cell "+
			"(or the same bench functions in an Octave cell).",
			func(ctx context.Context, in SimulateIn) (*tool.Result, error) {
				if opts.Start == nil {
					return nil, errors.New("no kernel can be started here")
				}
				lang := strings.ToLower(in.Language)
				if lang != "" && lang != Python && lang != Octave {
					return &tool.Result{Content: fmt.Sprintf("language %q: a protocol is python or octave", in.Language), IsError: true}, nil
				}
				rep, err := Simulate(ctx, in.Code, &Options{Start: opts.Start, Kernel: lang, Watch: in.Watch})
				if err != nil {
					return nil, err
				}
				return result(rep)
			}),
		tool.Must(BenchState, "Show the bench of this run or session (what labmate.bench() in a cell works on): every labware's "+
			"plate map (volumes in µL and the dominant species of each well) and the tips.",
			func(ctx context.Context, _ BenchIn) (*tool.Result, error) {
				ws, err := opts.Workspace(ctx)
				if err != nil {
					return nil, err
				}
				rep := &Report{}
				if ws == "" {
					rep.Deck = bench.NewDeck()
				} else if rep.Deck, err = Open(ctx, ws); err != nil {
					return nil, err
				}
				return result(rep)
			}),
	}
}

func result(rep *Report) (*tool.Result, error) {
	text, err := rep.Text()
	if err != nil {
		return nil, err
	}
	s, err := rep.Summary()
	if err != nil {
		return nil, err
	}
	if text == "" {
		text = "the bench is empty: no labware is loaded"
	}
	return &tool.Result{Content: text, Data: s}, nil
}
