// Package python is the Python 3 kernel: a persistent /usr/bin/python3 session (numpy and
// scipy from Debian) whose cells share one namespace, echo a trailing expression like a
// REPL, and have labmate.log(name, value, t=None) for telemetry. Options.Library's python/
// directory is importable (before site-packages): with the lab bench's client
// (lab/bench/client: the Opentrons Protocol API v2, module opentrons), labmate.bench() is the
// session's liquid-handler bench (it listens on WORKSPACE/.labmate/bench.sock).
//
// The kernel is a kernel.Snapshotter: each global is pickled on its own (protocol 5, numpy
// arrays out of band, without a copy), so one that pickle cannot serialise — a lambda, a
// function or class defined in a cell, an open file, a generator — is skipped with its reason;
// modules are recorded by name and imported again; dunder names and labmate's helpers are left
// out. The snapshot is unpickled only by the sandboxed interpreter.
package python

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/internal/engine"
)

// Binary is the interpreter labmate starts: Debian's, which has numpy and scipy.
const Binary = "/usr/bin/python3"

//go:embed driver.py
var driver string

// files are the kernel's files: the driver.
func files() map[string]string {
	return map[string]string{"labmate_driver.py": driver}
}

var dialect = &engine.Dialect{
	Name:  "python",
	Ext:   ".py",
	Files: files(),
	Env:   []string{"PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8"},
	Argv: func(rt string) []string {
		return []string{Binary, "-u", "-s", rt + "/labmate_driver.py"}
	},
	Boot: func(_, tag string) string { return "B " + tag + "\n" },
	Frame: func(tag, path string, _ bool) string {
		return "R " + tag + " " + path + "\n"
	},
	SaveState: func(path string) string { return "__import__('labmate')._save_state(" + quote(path) + ")" },
	LoadState: func(path string) string { return "__import__('labmate')._load_state(" + quote(path) + ")" },
}

// quote is a Python string literal (JSON's escapes are Python's too).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Start starts a Python kernel.
func Start(ctx context.Context, opts *kernel.Options) (kernel.Kernel, error) {
	return engine.Start(ctx, dialect, opts)
}

// Version is the installed Python's version with numpy's and scipy's, e.g.
// "3.11.2 (numpy 1.24.2, scipy 1.10.1)".
func Version(ctx context.Context) (string, error) {
	const probe = `import sys
v = sys.version.split()[0]
mods = []
for m in ("numpy", "scipy"):
    try:
        mods.append(m + " " + __import__(m).__version__)
    except ImportError:
        mods.append(m + " missing")
print(v + " (" + ", ".join(mods) + ")")`
	out, err := exec.CommandContext(ctx, Binary, "-I", "-c", probe).Output()
	if err != nil {
		return "", fmt.Errorf("python: %s: %w (install the Debian package python3)", Binary, err)
	}
	return strings.TrimSpace(string(out)), nil
}
