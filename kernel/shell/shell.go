// Package shell is the bash kernel: a persistent bash session whose cells share variables,
// functions and the working directory, with labmate_log NAME VALUE… [t=T] for telemetry.
// A cell's status is the exit status of its last command.
package shell

import (
	"context"
	_ "embed"
	"os"
	"strings"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/internal/engine"
)

// Binary is the shell labmate starts.
const Binary = "/bin/bash"

//go:embed driver.sh
var driver string

var dialect = &engine.Dialect{
	Name:  "shell",
	Ext:   ".sh",
	Files: map[string]string{"labmate_driver.sh": driver},
	Env:   append([]string{"PS1=", "PS2="}, lineBuffered()...),
	Argv: func(string) []string {
		return []string{Binary, "--norc", "--noprofile", "--noediting", "-i"}
	},
	Boot: func(rt, tag string) string {
		return "source " + quote(rt+"/labmate_driver.sh") + "; __labmate_mark " + tag + " ready 0 ''\n"
	},
	Frame: func(tag, path string, _ bool) string {
		return "__labmate_run " + tag + " " + quote(path) + "\n"
	},
	Recover:    func(tag string) string { return "__labmate_mark " + tag + " ready 0 ''\n" },
	SignalTree: true,
}

// stdbuf are the places of coreutils' libstdbuf, which stdbuf(1) preloads.
var stdbuf = []string{"/usr/libexec/coreutils/libstdbuf.so", "/usr/lib/coreutils/libstdbuf.so"}

// lineBuffered makes the C stdio of the programs a cell runs write their output a line at a
// time, as stdbuf -oL does: a program writing to a pipe (LAMMPS' thermo table, for one)
// otherwise holds its output in 4 KiB blocks, and perception would see nothing until a block
// fills. Programs that set their own buffering, and static binaries, are unaffected.
func lineBuffered() []string {
	for _, p := range stdbuf {
		if _, err := os.Stat(p); err == nil {
			return []string{"LD_PRELOAD=" + p, "_STDBUF_O=L"}
		}
	}
	return nil
}

// quote is a bash single-quoted word.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Start starts a shell kernel.
func Start(ctx context.Context, opts *kernel.Options) (kernel.Kernel, error) {
	return engine.Start(ctx, dialect, opts)
}

// Version is the installed bash's version, e.g. "5.2.15".
func Version(ctx context.Context) (string, error) {
	return engine.Version(ctx, Binary, "--version")
}
