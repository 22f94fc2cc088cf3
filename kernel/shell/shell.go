// Package shell is the bash kernel: a persistent bash session whose cells share variables,
// functions and the working directory, with labmate_log NAME VALUE… [t=T] for telemetry.
// A cell's status is the exit status of its last command.
package shell

import (
	"context"
	_ "embed"
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
	Env:   []string{"PS1=", "PS2="},
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
