// Package kernel defines a live interpreter session: a Kernel runs code cell by cell, streams
// every line, telemetry sample and event while the code runs, and can be interrupted without
// losing its workspace. Its telemetry is what code logs through the helper injected in every
// kernel (labmate_log, labmate.log), read from a side channel; printed lines are streamed as
// lines, and perception reads telemetry from them (perception.ParseSamples, its profiles). Implementations live in octave/, python/ and shell/; all of them pass
// the shared suite in kerneltest/. The Python and Octave kernels are also Snapshotters: they save
// what their interpreter can serialise of its variables and load it into a later session.
package kernel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labmate/labmate/protocol"
)

// Errors a Kernel returns (wrapped); cell failures are Results, not errors.
var (
	ErrClosed    = errors.New("kernel: closed")
	ErrDead      = errors.New("kernel: interpreter is not running (crashed or killed); Restart it")
	ErrBusy      = errors.New("kernel: a cell is already running")
	ErrBadCell   = errors.New("kernel: bad cell")
	ErrNoSandbox = errors.New("kernel: no sandbox")
)

// Budget overruns a Sandbox reports through Exceeded (wrapped, with the limit and what was
// done about it), e.g. "out of memory: the sandbox's 4.0 GiB budget … ran out and the kernel's
// OOM killer ended 1 process(es)".
var (
	ErrOutOfMemory = errors.New("out of memory")
	ErrQuota       = errors.New("workspace quota exceeded")
)

// Kernel is a live interpreter session. Variables persist between cells.
type Kernel interface {
	// Exec runs one cell. It yields each Observation as it happens and, last, the Result.
	// A Go error means the plumbing broke (closed kernel, busy, bad cell); how the cell
	// ended (ok, error, interrupted, timeout, crashed) is in the Result. Cancelling ctx
	// interrupts the cell. Exec never blocks forever on a dead or wedged interpreter.
	Exec(ctx context.Context, c *Cell) iter.Seq2[*Step, error]
	// Interrupt stops the running cell, keeping the workspace. It is a no-op when idle.
	Interrupt() error
	// Restart replaces the interpreter with a fresh one; the workspace variables are lost.
	Restart(ctx context.Context) error
	// Info describes the kernel.
	Info() Info
	// Close ends the session and its whole process tree.
	Close() error
}

// Step is one item of an Exec stream: exactly one of Observation or Result is set.
type Step struct {
	Observation *protocol.Observation
	Result      *protocol.Result
}

// Cell is one unit of code to run.
type Cell struct {
	Code string
	// Timeout is the wall-clock limit: when it passes the cell is interrupted, then killed.
	// Zero means Options.Timeout.
	Timeout time.Duration
}

// Validate reports a cell that cannot be run: nil, not UTF-8 text, a NUL byte, a negative
// timeout. The error wraps ErrBadCell and says what and where.
func (c *Cell) Validate() error {
	switch {
	case c == nil:
		return fmt.Errorf("%w: nil cell", ErrBadCell)
	case !utf8.ValidString(c.Code):
		i := 0
		for i < len(c.Code) {
			r, n := utf8.DecodeRuneInString(c.Code[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("%w: code is not UTF-8 text (binary data?): invalid byte 0x%02x at offset %d", ErrBadCell, c.Code[i], i)
	case strings.IndexByte(c.Code, 0) >= 0:
		return fmt.Errorf("%w: code contains a NUL byte at offset %d (binary data?)", ErrBadCell, strings.IndexByte(c.Code, 0))
	case c.Timeout < 0:
		return fmt.Errorf("%w: negative timeout %v", ErrBadCell, c.Timeout)
	}
	return nil
}

// Info describes a running kernel.
type Info struct {
	Name      string `json:"name"`      // "octave", "python", "shell"
	Sandbox   string `json:"sandbox"`   // the isolation in use
	Workspace string `json:"workspace"` // the session's writable directory
	PID       int    `json:"pid"`       // the interpreter's pid (host namespace)
}

// Sandbox starts interpreter processes in isolation. sandbox.Sandbox implements it.
type Sandbox interface {
	// Command returns an unstarted command that runs argv with env, isolated so that only
	// workspace is writable; readOnly paths are made visible read-only. When env has no HOME
	// the command gets a private writable one, never the workspace.
	Command(argv, env []string, workspace string, readOnly ...string) (*exec.Cmd, error)
	// Start starts a command of Command's (its own exec.Cmd.Start refuses: the sandbox puts
	// it in its namespaces, cgroups and identity as it forks).
	Start(cmd *exec.Cmd) error
	// Target returns the pid of the interpreter inside a started command: the process
	// that receives SIGINT (never a wrapper such as bwrap).
	Target(cmd *exec.Cmd) (int, error)
	// Kill ends the started command's whole process tree and releases what the sandbox
	// holds for it.
	Kill(cmd *exec.Cmd) error
	// Exceeded lists, oldest first, each time a command ran into the sandbox's budget so far:
	// errors wrapping ErrOutOfMemory or ErrQuota. A kernel interrupts a cell on ErrQuota and
	// reports both in the cell's result. Call it before Kill, which forgets the command.
	Exceeded(cmd *exec.Cmd) []error
	// Describe names the isolation in use, e.g. "bubblewrap (no network, rlimits …)".
	Describe() string
	// MemoryLimit is the address-space limit each interpreter runs under, in bytes; 0: none.
	MemoryLimit() int64
}

// Options configure a kernel. A nil *Options means defaults; Sandbox is required.
type Options struct {
	Sandbox   Sandbox
	Workspace string        // the writable working directory; default: a new temporary directory
	Timeout   time.Duration // default per-cell wall clock limit; 0 means none
	MaxOutput int64         // stdout+stderr bytes kept per cell; default 8 MiB
	// Grace is how long an interrupted cell may take to stop before the interpreter is killed.
	Grace time.Duration // default 2s
	// Library is code every cell may use besides the kernel's own, in each kernel's language:
	// a kernel takes the directory named after it (octave/, python/; nil or missing: none)
	// and puts its files where the interpreter finds them: Octave's load path ends with its
	// top level; Python imports its packages and modules (ahead of site-packages). Client code
	// of what labmate drives from a cell, such as the lab bench's Opentrons-style API
	// (lab/bench/client), comes this way, so a kernel knows nothing of it.
	Library fs.FS
}
