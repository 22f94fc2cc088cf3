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
// Options.Library's octave/ directory comes last on the load path, after the toolbox: the
// lab bench's Opentrons-style functions (lab/bench/client) arrive that way. LABMATE_WORKSPACE
// names the workspace the session started in, for such functions to find what lives there.
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

//go:embed driver/*.m toolbox/*.m
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
			// Options.Library's functions last; they find the workspace where the session started.
			`addpath(` + quote(rt+"/"+engine.LibDir) + `, "-end"); setenv("LABMATE_WORKSPACE", pwd()); ` +
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

// files are the driver's files at the top of the runtime directory and the toolbox's in
// toolbox/.
func files() map[string]string {
	m := map[string]string{}
	for dir, prefix := range map[string]string{"driver": "", "toolbox": "toolbox/"} {
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
