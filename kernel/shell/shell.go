// Package shell is the bash kernel: a persistent bash session whose cells share variables,
// functions and the working directory, with labmate_log NAME VALUE… [t=T] for telemetry.
// A cell's status is the exit status of its last command.
package shell

import (
	"context"
	_ "embed"
	"fmt"
	"os/exec"
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
	k, err := engine.Start(ctx, dialect, opts)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// Version is the installed bash's version, e.g. "5.2.15".
func Version(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, Binary, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("shell: %s --version: %w", Binary, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if _, v, ok := strings.Cut(first, "version "); ok {
		v, _, _ = strings.Cut(v, "(")
		return v, nil
	}
	return first, nil
}
