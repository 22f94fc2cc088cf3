// Package octave is the GNU Octave kernel: a persistent octave-cli session whose cells run
// in the base workspace, with labmate_log(name, value[, t]) for telemetry.
//
// The session is set up for headless science: figures are invisible by default and are
// written with print or saveas (gnuplot, e.g. print -dpng fig.png), the gnuplot toolkit's
// "discouraged" notice and the "shadows a core library function" warnings that pkg load
// statistics and optim print are off, and labmate's implementations of toolbox functions that
// Octave's packages lack (toolbox/: stepinfo, allmargin, iirnotch, MATLAB semantics) are at
// the end of the load path, so a package or user function of the same name takes precedence.
//
// The session's liquid-handler bench (lab/bench) is driven with Opentrons-style functions
// (bench/: load_labware, load_instrument, define_liquid, load_liquid, pick_up_tip, aspirate,
// dispense, mix, blow_out, drop_tip, return_tip, transfer, distribute, consolidate, wells,
// delay, comment, bench_command), its modules with functions named as the Python module's
// methods, the module first (load_module; heater-shaker: set_and_wait_for_temperature,
// set_and_wait_for_shake_speed, deactivate_heater, deactivate_shaker, open_labware_latch,
// close_labware_latch, current_temperature; plate reader: initialize, read; analysis: analyze,
// amount_mM, yield_vs_limiting), also at the end of the load path; Opentrons names the twin
// does not model (air_gap, touch_tip, move_labware, …) are errors that say so. A protocol
// file for labmate lab simulate is a script of these functions. Octave has no sockets, so they
// talk to the bench through the named pipes WORKSPACE/.labmate/bench.in and bench.out
// (bench.ServeFIFO), with the same commands, replies and telemetry as the Python module's
// socket.
//
// The kernel is a kernel.Snapshotter: the base workspace's variables are saved with save
// -binary (matrices, structs, cells, integers, function handles with what they captured), each
// first tried alone, so that one save cannot write (a classdef object such as containers.Map,
// or a struct holding one) is skipped with Octave's reason.
package octave

import (
	"context"
	"embed"
	"fmt"
	"strings"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/internal/engine"
)

// Binary is the interpreter labmate starts.
const Binary = "octave-cli"

//go:embed driver/*.m toolbox/*.m bench/*.m
var driverFS embed.FS

// Toolbox lists labmate's implementations of toolbox functions missing from the Octave
// packages Debian ships, in the runtime directory's toolbox/ folder.
var Toolbox = []string{"stepinfo", "allmargin", "iirnotch"}

var dialect = &engine.Dialect{
	Name:     "octave",
	Ext:      ".m",
	CellFile: "__labmate_cell__.m",
	Files:    files(),
	Argv: func(string) []string {
		return []string{Binary, "--no-gui", "--no-window-system", "--quiet", "--norc", "--no-history", "--interactive", "--no-line-editing"}
	},
	Boot: func(rt, tag string) string {
		// Without these, core dumps are written on signals and errors can stop at a debug> prompt.
		return `PS1(""); PS2(""); more off; beep_on_error(false); crash_dumps_octave_core(false); ` +
			`sigterm_dumps_octave_core(false); sighup_dumps_octave_core(false); debug_on_error(false); ` +
			`debug_on_warning(false); debug_on_interrupt(false); addpath(` + quote(rt) + `); ` +
			// Headless plotting; toolbox functions only where nothing else defines them.
			`set(0, "defaultfigurevisible", "off"); warning("off", "Octave:gnuplot-graphics"); ` +
			`warning("off", "Octave:shadowed-function"); addpath(` + quote(rt+"/toolbox") + `, "-end"); ` +
			// The bench's protocol functions (bench/) find the workspace's bench where it started.
			`addpath(` + quote(rt+"/bench") + `, "-end"); setenv("LABMATE_WORKSPACE", pwd()); ` +
			`__labmate_loop__(` + quote(tag) + ")\n"
	},
	Frame: func(tag, path string, rehash bool) string {
		return fmt.Sprintf("__labmate_run__(%s, %s, %t)\n", quote(tag), quote(path), rehash)
	},
	Recover:   func(tag string) string { return "__labmate_loop__(" + quote(tag) + ")\n" },
	Rehash:    true,
	SaveState: func(path string) string { return "__labmate_save__(" + quote(path) + ");" },
	LoadState: func(path string) string { return "__labmate_load__(" + quote(path) + ");" },
}

// files are the driver's files at the top of the runtime directory, the toolbox's in
// toolbox/ and the bench's protocol functions in bench/.
func files() map[string]string {
	m := map[string]string{}
	for dir, prefix := range map[string]string{"driver": "", "toolbox": "toolbox/", "bench": "bench/"} {
		entries, _ := driverFS.ReadDir(dir)
		for _, e := range entries {
			b, _ := driverFS.ReadFile(dir + "/" + e.Name())
			m[prefix+e.Name()] = string(b)
		}
	}
	return m
}

// quote is an Octave single-quoted string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Start starts an Octave kernel.
func Start(ctx context.Context, opts *kernel.Options) (kernel.Kernel, error) {
	return engine.Start(ctx, dialect, opts)
}

// Version is the installed Octave's version, e.g. "7.3.0".
func Version(ctx context.Context) (string, error) {
	v, err := engine.Version(ctx, Binary, "--version")
	if err != nil {
		return "", fmt.Errorf("octave: %w (install the Debian package octave)", err)
	}
	return v, nil
}
