package harvest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
)

// Sandbox isolates the interpreters a harvest runs; *sandbox.Sandbox implements it. Help is
// harvested from the installed software only: the interpreter starts in an empty directory of
// its own, so nothing a cell left in a workspace or the current directory (an Octave pkg.m, a
// Python numpy.py) is on its path, and whatever it runs cannot write outside that directory.
type Sandbox interface {
	// Command returns an unstarted command that runs argv with exactly env in workspace, the
	// only writable directory.
	Command(argv, env []string, workspace string, readOnly ...string) (*exec.Cmd, error)
	// Start starts a command of Command's.
	Start(cmd *exec.Cmd) error
	// Kill ends a started command's whole process tree and releases what it held.
	Kill(cmd *exec.Cmd) error
}

// errSandbox is returned when no Sandbox was given: harvesting never runs unisolated.
var errSandbox = errors.New("no sandbox given (harvesting runs sandboxed)")

// path is the PATH the interpreters are looked up in: the system's, never the caller's.
const path = "/usr/local/bin:/usr/bin:/bin"

// installed reports whether bin is an executable file, looked up in path unless it has a slash.
func installed(bin string) bool {
	if strings.Contains(bin, "/") {
		fi, err := os.Stat(bin)
		return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
	}
	for _, dir := range filepath.SplitList(path) {
		if installed(filepath.Join(dir, bin)) {
			return true
		}
	}
	return false
}

// run runs argv sandboxed in a fresh empty directory, for at most timeout, and returns its
// standard output and error. what names the harvest in errors; install names the Debian package
// that provides argv[0].
func run(ctx context.Context, sb Sandbox, what, install string, argv []string, timeout time.Duration) (stdout, stderr *bytes.Buffer, err error) {
	if sb == nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", knowledge.ErrBadSource, what, errSandbox)
	}
	dir, err := os.MkdirTemp("", "labmate-harvest-")
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", knowledge.ErrBadSource, what, err)
	}
	defer os.RemoveAll(dir)
	if !installed(argv[0]) {
		return nil, nil, fmt.Errorf("%w: %s: %s not found in %s (install the Debian package %s)", knowledge.ErrBadSource, what, argv[0], path, install)
	}
	// No HOME: the sandbox gives the interpreter a private, empty one.
	env := []string{"PATH=" + path, "TMPDIR=/tmp", "LANG=C.UTF-8", "TERM=dumb",
		"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"}
	cmd, err := sb.Command(argv, env, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", knowledge.ErrBadSource, what, err)
	}
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := sb.Start(cmd); err != nil {
		sb.Kill(cmd)
		return nil, nil, fmt.Errorf("%w: %s: %w", knowledge.ErrBadSource, what, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err = <-done:
		sb.Kill(cmd) // anything the interpreter left running, and its cgroup
	case <-timer.C:
		sb.Kill(cmd)
		<-done
		return nil, nil, fmt.Errorf("%w: %s: no answer within %s", knowledge.ErrBadSource, what, timeout)
	case <-ctx.Done():
		sb.Kill(cmd)
		<-done
		return nil, nil, fmt.Errorf("%w: %s: %w", knowledge.ErrBadSource, what, ctx.Err())
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w: %s", knowledge.ErrBadSource, what, err, tail(stderr.String()))
	}
	return stdout, stderr, nil
}
