// Package engine runs an interpreter as a kernel.Kernel: it starts the interpreter in a
// sandbox with a small driver, frames each cell, turns the interpreter's stdout, stderr and
// telemetry side channel into Observations as they are written, and handles interrupts,
// timeouts, output caps and crashes. A Dialect says how one language does the framing.
//
// Framing: the driver ends every cell by printing a per-cell tag on its own line on stdout
// and stderr, and an end record ("E\ttag\tstatus\tline\tmessage") on the side channel
// (fd 3). A cell is finished when the tag has arrived on all three.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/labmate/labmate/internal/procfs"
	"github.com/labmate/labmate/kernel"
	"golang.org/x/sys/unix"
)

// Dialect is what differs between interpreters.
type Dialect struct {
	Name string
	Ext  string // cell file extension, e.g. ".m"
	// CellFile, when set, is the one file name every cell is written to (see octave);
	// otherwise cell N goes to "cell_N"+Ext.
	CellFile string
	// Argv is the interpreter's command line; rt is the runtime directory holding Files.
	Argv func(rt string) []string
	// Files are driver files written into the runtime directory before start, by their
	// slash-separated paths relative to it ("toolbox/stepinfo.m").
	Files map[string]string
	// Env is added to the kernel's base environment.
	Env []string
	// Boot is written to stdin after start; it must make the driver emit tag's markers
	// with status "ready".
	Boot func(rt, tag string) string
	// Frame is written to stdin to run the cell file at path and then emit tag's markers.
	// rehash asks the driver to refresh its view of changed source files first.
	Frame func(tag, path string, rehash bool) string
	// Recover, when set, is written to stdin after an interrupt: the interpreter has
	// returned to its prompt and Recover must restart the driver loop and emit tag's
	// markers (Octave, bash). When nil the driver itself ends the interrupted cell (Python).
	Recover func(tag string) string
	// SignalTree sends SIGINT to every descendant of the interpreter too, not only to the
	// interpreter (a shell waits for its foreground child).
	SignalTree bool
	// Rehash reports whether source files in the workspace changed since the last cell
	// must be announced to the interpreter (Octave caches functions between prompts).
	Rehash bool
	// SaveState and LoadState, when set, make the kernel a kernel.Snapshotter: each is a cell
	// that saves the interpreter's variables into the file at path, or loads them from it,
	// and prints one report line per name (see snapshot.go).
	SaveState, LoadState func(path string) string
}

const (
	defaultMaxOutput = 8 << 20
	defaultGrace     = 2 * time.Second
	bootTimeout      = 30 * time.Second
	resendEvery      = 250 * time.Millisecond
	resourceEvery    = 500 * time.Millisecond
	budgetEvery      = 50 * time.Millisecond // how often a cell asks the sandbox about its budget
)

// Kernel is a kernel.Kernel running one interpreter process at a time.
type Kernel struct {
	d    *Dialect
	opts kernel.Options
	rt   string // runtime directory: driver files and cell files
	ws   string
	own  bool // ws was created by us and is removed on Close
	tags string

	busy      atomic.Bool
	interrupt chan struct{}
	n         atomic.Int64 // tag counter

	mu        sync.Mutex
	p         *proc
	closed    bool
	lastCell  time.Time
	cellCount int
}

var _ kernel.Kernel = (*Kernel)(nil)

// Start starts a kernel of dialect d.
func Start(ctx context.Context, d *Dialect, opts *kernel.Options) (kernel.Kernel, error) {
	k, err := start(ctx, d, opts)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	if d.SaveState != nil {
		return &snapshotter{k}, nil
	}
	return k, nil
}

// Version runs argv (an interpreter's --version) and returns the version number that follows
// "version " on the first line of its output, e.g. "7.3.0" or "5.2.15".
func Version(ctx context.Context, argv ...string) (string, error) {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	_, v, ok := strings.Cut(first, "version ")
	if !ok {
		return strings.TrimSpace(first), nil
	}
	if i := strings.IndexAny(v, " ("); i >= 0 {
		v = v[:i]
	}
	return v, nil
}

func start(ctx context.Context, d *Dialect, opts *kernel.Options) (*Kernel, error) {
	k := &Kernel{d: d, interrupt: make(chan struct{}, 1)}
	if opts != nil {
		k.opts = *opts
	}
	if k.opts.Sandbox == nil {
		return nil, fmt.Errorf("%w: starting %s: Options.Sandbox is nil", kernel.ErrNoSandbox, d.Name)
	}
	if k.opts.MaxOutput <= 0 {
		k.opts.MaxOutput = defaultMaxOutput
	}
	if k.opts.Grace <= 0 {
		k.opts.Grace = defaultGrace
	}
	k.tags = "__labmate_" + randomHex() + "_"
	var err error
	if k.rt, err = os.MkdirTemp("", "labmate-"+d.Name+"-rt-"); err != nil {
		return nil, fmt.Errorf("%s kernel: runtime directory: %w", d.Name, err)
	}
	// The sandbox's account, which owns nothing of the host's, reads the driver here (Octave
	// lists its directories), and the cells by name only: other local users cannot list them.
	// Cells go to their own directory, off Octave's load path: a new file in a directory on
	// the path makes Octave rescan it (≈3 ms a cell).
	if err := os.Chmod(k.rt, 0o755); err != nil {
		os.RemoveAll(k.rt)
		return nil, fmt.Errorf("%s kernel: runtime directory: %w", d.Name, err)
	}
	if err := os.Mkdir(filepath.Join(k.rt, "cells"), 0o711); err != nil {
		os.RemoveAll(k.rt)
		return nil, fmt.Errorf("%s kernel: runtime directory: %w", d.Name, err)
	}
	for name, body := range d.Files {
		if dir := filepath.Dir(name); dir != "." {
			if err := os.MkdirAll(filepath.Join(k.rt, dir), 0o755); err != nil {
				os.RemoveAll(k.rt)
				return nil, fmt.Errorf("%s kernel: writing driver %s: %w", d.Name, name, err)
			}
		}
		if err := os.WriteFile(filepath.Join(k.rt, name), []byte(body), 0o644); err != nil {
			os.RemoveAll(k.rt)
			return nil, fmt.Errorf("%s kernel: writing driver %s: %w", d.Name, name, err)
		}
	}
	if err := writeLibrary(k.rt, d.Name, k.opts.Library); err != nil {
		os.RemoveAll(k.rt)
		return nil, fmt.Errorf("%s kernel: %w", d.Name, err)
	}
	k.ws = k.opts.Workspace
	if k.ws == "" {
		if k.ws, err = os.MkdirTemp("", "labmate-"+d.Name+"-ws-"); err != nil {
			os.RemoveAll(k.rt)
			return nil, fmt.Errorf("%s kernel: workspace: %w", d.Name, err)
		}
		k.own = true
	} else if fi, err := os.Stat(k.ws); err != nil || !fi.IsDir() {
		os.RemoveAll(k.rt)
		return nil, fmt.Errorf("%s kernel: workspace %q is not a directory: %w", d.Name, k.ws, errors.Join(err, os.ErrNotExist))
	}
	if k.ws, err = filepath.Abs(k.ws); err != nil {
		return nil, fmt.Errorf("%s kernel: workspace: %w", d.Name, err)
	}
	if err := k.Restart(ctx); err != nil {
		k.cleanup()
		return nil, err
	}
	return k, nil
}

// LibDir is the runtime directory's folder that holds the kernel's part of Options.Library
// (the directory named after the kernel); it exists, empty without one.
const LibDir = "lib"

// writeLibrary copies lib's directory name into rt's LibDir.
func writeLibrary(rt, name string, lib fs.FS) error {
	dst := filepath.Join(rt, LibDir)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("library: %w", err)
	}
	if lib == nil {
		return nil
	}
	if _, err := fs.Stat(lib, name); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	err := fs.WalkDir(lib, name, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		to := filepath.Join(dst, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(p, name), "/")))
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		b, err := fs.ReadFile(lib, p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("library: %w", err)
	}
	return nil
}

func (k *Kernel) tag() string { return k.tags + strconv.FormatInt(k.n.Add(1), 10) }

func (k *Kernel) env() []string {
	env := []string{
		// No HOME: the sandbox gives each interpreter a private one, so that what tools keep in
		// ~/.cache and ~/.config never lands in the workspace.
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"TMPDIR=/tmp",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"OPENBLAS_NUM_THREADS=1",
		"OMP_NUM_THREADS=1",
		"MKL_NUM_THREADS=1",
		// Open MPI's mpirun: code runs as uid 0 only without bubblewrap (as root with
		// --no-sandbox), where mpirun would refuse without --allow-run-as-root; and -np larger
		// than the cores is allowed (slower, not an error). Nothing else is needed in the
		// sandbox: the shared-memory transport and its single-copy (CMA) work there.
		"OMPI_ALLOW_RUN_AS_ROOT=1",
		"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1",
	}
	// Some processors need these for OpenBLAS to compute correctly; pass them through.
	for _, v := range []string{"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"} {
		if s, ok := os.LookupEnv(v); ok {
			env = append(env, v+"="+s)
		}
	}
	return append(env, k.d.Env...)
}

// Restart kills the current interpreter, if any, and starts a fresh one.
func (k *Kernel) Restart(ctx context.Context) error {
	if k.busy.Load() {
		return fmt.Errorf("%s kernel: restart: %w", k.d.Name, kernel.ErrBusy)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return fmt.Errorf("%s kernel: restart: %w", k.d.Name, kernel.ErrClosed)
	}
	if k.p != nil {
		k.p.kill()
		k.p = nil
	}
	p, err := k.spawn(ctx)
	if err != nil {
		return err
	}
	k.p = p
	return nil
}

func (k *Kernel) spawn(ctx context.Context) (*proc, error) {
	labmateDir(k.ws)
	cmd, err := k.opts.Sandbox.Command(k.d.Argv(k.rt), k.env(), k.ws, k.rt)
	if err != nil {
		return nil, fmt.Errorf("%s kernel: %w", k.d.Name, err)
	}
	p, err := startProc(cmd, k.opts.Sandbox, k.tags)
	if err != nil {
		return nil, fmt.Errorf("%s kernel: starting %s: %w", k.d.Name, cmd.Args[0], err)
	}
	tag := k.tag()
	ctx, cancel := context.WithTimeout(ctx, bootTimeout)
	defer cancel()
	p.active.Store(true)
	defer p.active.Store(false)
	if _, err := p.stdin.WriteString(k.d.Boot(k.rt, tag)); err != nil {
		p.kill()
		return nil, fmt.Errorf("%s kernel: booting: %w", k.d.Name, err)
	}
	var seen int
	var out []string
	for seen != allStreams {
		select {
		case it := <-p.items:
			switch {
			case it.mark != nil && it.mark.tag == tag:
				seen |= it.mark.stream
			case it.obs != nil && it.obs.Line != "" && len(out) < 20:
				out = append(out, it.obs.Line)
			}
		case <-p.exited:
			drain(p, &out)
			return nil, fmt.Errorf("%s kernel: interpreter exited while starting (%s): %s", k.d.Name, p.exitDetail(), strings.Join(out, " | "))
		case <-ctx.Done():
			p.kill()
			return nil, fmt.Errorf("%s kernel: interpreter did not start: %w; output: %s", k.d.Name, ctx.Err(), strings.Join(out, " | "))
		}
	}
	return p, nil
}

// drain collects what the readers still deliver after the process exited.
func drain(p *proc, out *[]string) {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case it := <-p.items:
			if it.obs != nil && it.obs.Line != "" && len(*out) < 20 {
				*out = append(*out, it.obs.Line)
			}
		case <-t.C:
			return
		}
	}
}

// Info describes the kernel.
func (k *Kernel) Info() kernel.Info {
	k.mu.Lock()
	defer k.mu.Unlock()
	info := kernel.Info{Name: k.d.Name, Sandbox: k.opts.Sandbox.Describe(), Workspace: k.ws}
	if k.p != nil {
		info.PID = k.p.pid
	}
	return info
}

// Interrupt stops the running cell; the workspace is kept. A no-op when idle.
func (k *Kernel) Interrupt() error {
	if !k.busy.Load() {
		return nil
	}
	select {
	case k.interrupt <- struct{}{}:
	default:
	}
	return nil
}

// Close kills the interpreter's process tree and removes the runtime directory (and the
// workspace when the kernel created it).
func (k *Kernel) Close() error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	p := k.p
	k.p = nil
	k.mu.Unlock()
	if p != nil {
		p.kill()
	}
	k.cleanup()
	return nil
}

// labmateDir makes the directory .labmate in the workspace ws unless something by that name
// is there: labmate's own files of a workspace live there (the bench's socket, pipes and
// journal, kernels' snapshots), and a top-level dot-entry that exists when the sandbox starts
// is mounted read-only inside it, so code cannot make it, or plant there what labmate's host
// side reads. Made through a descriptor of ws, so a symbolic link cannot lead it elsewhere.
func labmateDir(ws string) {
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	_ = unix.Mkdirat(fd, ".labmate", 0o755)
}

func (k *Kernel) cleanup() {
	os.RemoveAll(k.rt)
	if k.own {
		os.RemoveAll(k.ws)
	}
}

// wsScan is how many entries of the workspace wsChanged looks at before a cell, at most: a
// workspace a cell filled with 300 000 files costs the host no more than one of 10 000.
const wsScan = 10000

// wsChanged reports whether a source file in the workspace was modified since the last cell.
// It reads the workspace's top level in batches (no symbolic link followed, FIFOs never
// opened), and answers true past wsScan entries: the interpreter then rescans, on the
// sandbox's budget.
func (k *Kernel) wsChanged(since time.Time) bool {
	return sourceChanged(k.ws, k.d.Ext, since)
}

func sourceChanged(ws, ext string, since time.Time) bool {
	f, err := os.OpenFile(ws, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	for seen := 0; seen < wsScan; {
		entries, err := f.ReadDir(256)
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ext) {
				if fi, err := e.Info(); err == nil && !fi.ModTime().Before(since) {
					return true
				}
			}
		}
		seen += len(entries)
		if err != nil {
			return false
		}
	}
	return true
}

// signal sends SIGINT to the interpreter (and, for shells, its descendants).
func (k *Kernel) signal(p *proc) {
	if k.d.SignalTree {
		for _, pid := range procfs.Descendants(p.pid) {
			syscall.Kill(pid, syscall.SIGINT)
		}
	}
	syscall.Kill(p.pid, syscall.SIGINT)
}

func exitStatus(p *proc) *int {
	if p.cmd.ProcessState == nil {
		return nil
	}
	c := p.cmd.ProcessState.ExitCode()
	return &c
}
