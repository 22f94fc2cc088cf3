package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labmate/labmate/internal/procfs"
)

// Mode is an isolation mechanism.
type Mode string

// The modes, best first.
const (
	ModeBubblewrap Mode = "bubblewrap" // bwrap(1): namespaces, read-only host, writable workspace
	ModeNamespaces Mode = "namespaces" // namespaces only: no network, but the filesystem is writable
	ModeNone       Mode = "none"       // a plain process with rlimits: no isolation at all
)

// ErrUnavailable means that a mode cannot run on this machine; the wrapping error names what is
// missing.
var ErrUnavailable = errors.New("sandbox mode unavailable")

// Defaults for a zero Policy field.
const (
	DefaultMemoryBytes  int64 = 4 << 30
	DefaultMaxProcs           = 256
	DefaultMaxFileBytes int64 = 1 << 30
)

// Policy sets what sandboxed code may do. The zero value (or a nil *Policy) means defaults.
type Policy struct {
	Network      bool  // allow network; default false (a new, empty network namespace)
	MemoryBytes  int64 // RLIMIT_AS of the interpreter; 0 = DefaultMemoryBytes; <0 = no limit
	MaxProcs     int   // processes and threads of the whole sandbox; 0 = DefaultMaxProcs; <0 = no limit
	MaxFileBytes int64 // RLIMIT_FSIZE; 0 = DefaultMaxFileBytes; <0 = no limit
}

// Sandbox starts commands in one Mode under one Policy. It implements kernel.Sandbox and is safe
// for concurrent use.
type Sandbox struct {
	mode    Mode
	policy  Policy // zero fields resolved to defaults
	version string // "bubblewrap 0.8.0"
	bwrap   string
	prlimit string
	pids    string // the parent pids cgroup of our commands; "" if there is none

	bwrapFile, prlimitFile os.FileInfo // to recognise wrappers in /proc/<pid>/exe

	mu      sync.Mutex
	cgroups map[*exec.Cmd]string // the pids cgroup of each command not yet Killed
}

// wrapperName is argv[0] of the /bin/sh that moves a command into its pids cgroup and execs it.
const wrapperName = "labmate-sandbox"

// How long Detect and New wait for a probe, Target for the interpreter, and Kill for the tree.
const (
	probeTimeout = 10 * time.Second
	findTimeout  = 2 * time.Second
	killTimeout  = 2 * time.Second
)

// Detect returns the best mode usable here: ModeBubblewrap if bwrap exists and a probe sandbox
// runs, else ModeNamespaces if a probe clone works, else ModeNone with an error that wraps
// ErrUnavailable and explains why isolation is impossible.
func Detect() (Mode, error) {
	var errs []error
	for _, m := range []Mode{ModeBubblewrap, ModeNamespaces} {
		s, err := New(m, nil)
		if err == nil {
			return s.Mode(), nil
		}
		errs = append(errs, err)
	}
	return ModeNone, fmt.Errorf("sandbox: no isolation possible here, only mode none (--no-sandbox) remains: %w",
		errors.Join(errs...))
}

// New returns a sandbox of the given mode after checking that it works here; the error wraps
// ErrUnavailable when it does not. A nil p means defaults. ModeNone is never chosen for the caller:
// it must be asked for.
func New(mode Mode, p *Policy) (*Sandbox, error) {
	s := &Sandbox{mode: mode, policy: resolve(p), cgroups: make(map[*exec.Cmd]string)}
	switch mode {
	case ModeBubblewrap, ModeNamespaces, ModeNone:
	default:
		return nil, fmt.Errorf("sandbox: unknown mode %q (want %s, %s or %s)", mode, ModeBubblewrap, ModeNamespaces, ModeNone)
	}
	var err error
	if mode == ModeBubblewrap {
		if s.bwrap, err = exec.LookPath("bwrap"); err != nil {
			return nil, fmt.Errorf("%w: %s: bwrap not found in PATH (install bubblewrap): %w", ErrUnavailable, mode, err)
		}
		if s.bwrapFile, err = os.Stat(s.bwrap); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, mode, err)
		}
	}
	if s.prlimit, err = exec.LookPath("prlimit"); err != nil {
		return nil, fmt.Errorf("%w: %s: prlimit not found in PATH (it is part of util-linux): %w", ErrUnavailable, mode, err)
	}
	if s.prlimitFile, err = os.Stat(s.prlimit); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, mode, err)
	}
	switch mode {
	case ModeBubblewrap:
		out, err := exec.Command(s.bwrap, "--version").Output()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s --version: %w", ErrUnavailable, mode, s.bwrap, err)
		}
		s.version = strings.TrimSpace(string(out))
		probe := append([]string{s.bwrap}, s.bwrapArgs("", nil)...)
		if err := runProbe(probe, nil); err != nil {
			return nil, fmt.Errorf("%w: %s: probe sandbox `%s true` failed: %w", ErrUnavailable, mode, strings.Join(probe, " "), err)
		}
	case ModeNamespaces:
		if err := runProbe(nil, s.sysProcAttr()); err != nil {
			return nil, fmt.Errorf("%w: %s: probe clone into new user, mount, pid, net, ipc and uts namespaces failed: %w", ErrUnavailable, mode, err)
		}
	}
	if s.policy.MaxProcs > 0 {
		// Best effort: without a pids cgroup Describe says which process limit remains.
		s.pids, _ = pidsParent()
	}
	return s, nil
}

// runProbe runs `prefix... true` with attr and reports how it failed.
func runProbe(prefix []string, attr *syscall.SysProcAttr) error {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	argv := append(prefix, "true")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = attr
	if out, err := cmd.CombinedOutput(); err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

func resolve(p *Policy) Policy {
	var r Policy
	if p != nil {
		r = *p
	}
	if r.MemoryBytes == 0 {
		r.MemoryBytes = DefaultMemoryBytes
	}
	if r.MaxProcs == 0 {
		r.MaxProcs = DefaultMaxProcs
	}
	if r.MaxFileBytes == 0 {
		r.MaxFileBytes = DefaultMaxFileBytes
	}
	return r
}

// Mode returns the isolation mode in use.
func (s *Sandbox) Mode() Mode { return s.mode }

// MemoryLimit is the address-space limit (RLIMIT_AS) of every command, in bytes; 0: none.
func (s *Sandbox) MemoryLimit() int64 { return max(s.policy.MemoryBytes, 0) }

// Describe names the mode and the limits really in force, in one line, e.g.
// "bubblewrap 0.8.0: no network, read-only host, private /tmp, writable workspace, 4.0 GiB memory,
// 256 processes, 1.0 GiB files".
func (s *Sandbox) Describe() string {
	net := "no network"
	if s.policy.Network || s.mode == ModeNone {
		net = "network allowed"
	}
	switch s.mode {
	case ModeBubblewrap:
		return fmt.Sprintf("%s: %s, read-only host, private /tmp, writable workspace, %s", s.version, net, s.limits())
	case ModeNamespaces:
		return fmt.Sprintf("namespaces: %s, pid/ipc isolation, %s; filesystem NOT protected — install bubblewrap", net, s.limits())
	default:
		return fmt.Sprintf("none — NOT isolated: host filesystem, network and processes open; %s", s.limits())
	}
}

func (s *Sandbox) limits() string {
	mem, files := "unlimited memory", "unlimited file size"
	if m := s.policy.MemoryBytes; m > 0 {
		mem = formatBytes(m) + " memory"
	}
	if f := s.policy.MaxFileBytes; f > 0 {
		files = formatBytes(f) + " files"
	}
	procs := "unlimited processes"
	if n := s.policy.MaxProcs; n > 0 {
		switch {
		case s.pids != "":
			procs = fmt.Sprintf("%d processes", n)
		case s.mode != ModeNone && os.Geteuid() != 0:
			// In the sandbox's own user namespace RLIMIT_NPROC counts only the sandbox.
			procs = fmt.Sprintf("%d processes (RLIMIT_NPROC)", n)
		default:
			procs = "process limit NOT enforced (no writable pids cgroup)"
		}
	}
	return mem + ", " + procs + ", " + files
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// Command returns an unstarted command that runs argv in workspace, the only writable directory,
// with exactly env: nil means an empty environment, the host's is never inherited, and in
// ModeBubblewrap bwrap itself also sets PWD to the workspace. argv[0] is looked up in env's PATH.
// In ModeBubblewrap the readOnly paths (which, like workspace, may lie under /tmp) are the host
// paths made visible inside; the other modes see the whole host anyway.
//
// Every variable name in env must be a shell identifier. The command runs in its own process
// group and is SIGKILLed if the thread that starts it dies. Call Kill when done with the command,
// even after it has exited by itself: that releases its cgroup.
func (s *Sandbox) Command(argv, env []string, workspace string, readOnly ...string) (*exec.Cmd, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("sandbox: empty argv")
	}
	if err := checkEnv(env); err != nil {
		return nil, err
	}
	ws, err := existingPath("workspace", workspace, true)
	if err != nil {
		return nil, err
	}
	if ws == "/" {
		return nil, errors.New("sandbox: workspace / would make the whole host writable")
	}
	var ro []string
	for _, p := range readOnly {
		p, err := existingPath("read-only path", p, false)
		if err != nil {
			return nil, err
		}
		if p == ws {
			return nil, fmt.Errorf("sandbox: %s is both the workspace and read-only", p)
		}
		ro = append(ro, p)
	}

	args := s.limited(argv)
	if s.mode == ModeBubblewrap {
		args = append(append([]string{s.bwrap}, s.bwrapArgs(ws, ro)...), args...)
	}
	cmd := &exec.Cmd{
		Path:        args[0],
		Args:        args,
		Env:         append([]string{}, env...),
		Dir:         ws,
		SysProcAttr: s.sysProcAttr(),
	}
	if s.pids != "" {
		cg, err := newCgroup(s.pids, s.policy.MaxProcs)
		if err != nil {
			return nil, err
		}
		// The shell joins the cgroup, then execs the command in place: everything the command
		// ever forks is counted from its first instruction, with no race.
		cmd.Path = "/bin/sh"
		cmd.Args = append([]string{wrapperName, "-c", wrapperScript(env), filepath.Join(cg, "cgroup.procs")}, args...)
		s.mu.Lock()
		s.cgroups[cmd] = cg
		s.mu.Unlock()
	}
	return cmd, nil
}

// limited prefixes argv with prlimit, which sets the rlimits and execs argv (found in the PATH
// of env), so the interpreter keeps prlimit's pid.
func (s *Sandbox) limited(argv []string) []string {
	var flags []string
	if m := s.policy.MemoryBytes; m > 0 {
		flags = append(flags, fmt.Sprintf("--as=%d", m))
	}
	if f := s.policy.MaxFileBytes; f > 0 {
		flags = append(flags, fmt.Sprintf("--fsize=%d", f))
	}
	// RLIMIT_NPROC never binds root; for other users it binds per user namespace (kernel ≥ 5.14),
	// which ModeNone does not have: there it would count all the user's processes on the host.
	if n := s.policy.MaxProcs; n > 0 && s.mode != ModeNone {
		flags = append(flags, fmt.Sprintf("--nproc=%d", n))
	}
	out := append([]string{s.prlimit}, flags...)
	return append(append(out, "--"), argv...)
}

// bwrapArgs returns bwrap's options, ending with "--". The mounts that come after --tmpfs /tmp
// may lie under /tmp; they are sorted so that a parent is mounted before what lies inside it.
func (s *Sandbox) bwrapArgs(workspace string, readOnly []string) []string {
	a := []string{"--unshare-all"}
	if s.policy.Network {
		a = append(a, "--share-net")
	}
	a = append(a,
		// As root bwrap keeps every capability inside its user namespace, enough to remount
		// the read-only host read-write: drop them all.
		"--cap-drop", "ALL",
		"--die-with-parent",
		// No controlling terminal, so no TIOCSTI injection into the caller's terminal. Signals
		// are unaffected: Target signals the interpreter itself, Kill the bwrap processes.
		"--new-session",
		"--ro-bind", "/", "/",
		"--tmpfs", "/tmp",
		"--dev", "/dev",
		"--proc", "/proc",
	)
	type mount struct {
		path     string
		writable bool
	}
	var mounts []mount
	for _, p := range readOnly {
		mounts = append(mounts, mount{p, false})
	}
	if workspace != "" {
		mounts = append(mounts, mount{workspace, true})
	}
	slices.SortStableFunc(mounts, func(x, y mount) int {
		return strings.Count(x.path, "/") - strings.Count(y.path, "/")
	})
	for _, m := range mounts {
		if m.writable {
			a = append(a, "--bind", m.path, m.path)
		} else {
			a = append(a, "--ro-bind", m.path, m.path)
		}
	}
	if workspace != "" {
		a = append(a, "--chdir", workspace)
	}
	return append(a, "--")
}

func (s *Sandbox) sysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.mode == ModeNamespaces {
		// A user namespace even for root: without it a root process could open the host's
		// /proc/<pid>/ns/net and setns back into the host network.
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC
		if !s.policy.Network {
			a.Cloneflags |= syscall.CLONE_NEWNET
		}
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

func existingPath(what, p string, mustBeDir bool) (string, error) {
	if p == "" {
		return "", fmt.Errorf("sandbox: empty %s", what)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s %s: %w", what, p, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s: %w", what, err)
	}
	if mustBeDir && !fi.IsDir() {
		return "", fmt.Errorf("sandbox: %s %s is not a directory", what, abs)
	}
	return abs, nil
}

// checkEnv accepts NAME=value entries whose NAME is a shell identifier: /bin/sh, which starts
// the command when a cgroup is used, silently drops the others.
func checkEnv(env []string) error {
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !isIdentifier(name) {
			return fmt.Errorf("sandbox: env entry %q is not NAME=value with NAME a shell identifier", kv)
		}
	}
	return nil
}

func isIdentifier(s string) bool {
	for i, c := range s {
		if c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && (i == 0 || !('0' <= c && c <= '9')) {
			return false
		}
	}
	return s != ""
}

// wrapperScript is the /bin/sh -c script that joins the cgroup whose cgroup.procs is $0 and execs
// "$@". dash rewrites IFS, OPTIND, PPID and PWD at startup (and exports PWD): restore them so the
// command sees exactly env.
func wrapperScript(env []string) string {
	var b strings.Builder
	b.WriteString(`echo 0 >"$0" || exit 126`)
	for _, name := range []string{"IFS", "OPTIND", "PPID", "PWD"} {
		if v, ok := lookupEnv(env, name); ok {
			fmt.Fprintf(&b, "; %s=%s", name, shellQuote(v))
		} else if name == "PWD" {
			b.WriteString("; unset PWD")
		}
	}
	b.WriteString(`; exec "$@"`)
	return b.String()
}

// lookupEnv returns the value of name in env; the last entry wins, as in exec.Cmd.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Target returns the pid of the interpreter of a started command: the process that should
// receive SIGINT. It waits up to 2 s for the wrappers (sh, bwrap, prlimit) to exec it. In
// ModeBubblewrap the chain is bwrap → bwrap (pid namespace init) → interpreter; in the other
// modes the interpreter has cmd.Process.Pid once the wrappers have exec'd.
func (s *Sandbox) Target(cmd *exec.Cmd) (int, error) {
	if cmd == nil || cmd.Process == nil {
		return 0, errors.New("sandbox: command not started")
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(findTimeout)
	for {
		what := s.classify(pid)
		switch what {
		case "interpreter":
			// Under bubblewrap the interpreter is never the started process itself: seeing it
			// "as the interpreter" means it was caught mid-exec from the wrapper shell to bwrap
			// (exe and cmdline change at different moments). Signalling it would kill bwrap.
			if s.mode != ModeBubblewrap || pid != cmd.Process.Pid {
				return pid, nil
			}
		case "exited":
			return 0, fmt.Errorf("sandbox: process %d (started as %d) exited before its interpreter could be found", pid, cmd.Process.Pid)
		case "bwrap":
			if kids := procfs.Children(pid); len(kids) > 0 {
				pid = kids[0] // the oldest: bwrap forks one child
				continue
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("sandbox: no interpreter under pid %d after %v: pid %d is still %s", cmd.Process.Pid, findTimeout, pid, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// classify says what pid is now: "exited" (or a zombie), "bwrap", "the wrapper shell",
// "prlimit" or "interpreter".
func (s *Sandbox) classify(pid int) string {
	if st, ok := procfs.ReadStat(pid); !ok || st.State == 'Z' || st.State == 'X' {
		return "exited"
	}
	exe, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return "exited"
	}
	switch {
	case s.bwrapFile != nil && os.SameFile(exe, s.bwrapFile):
		return "bwrap"
	case os.SameFile(exe, s.prlimitFile):
		return "prlimit"
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		if arg0, _, _ := strings.Cut(string(cmdline), "\x00"); arg0 == wrapperName {
			return "the wrapper shell"
		}
	}
	return "interpreter"
}

// Kill ends the started command's whole process tree with SIGKILL: its process group, every
// descendant (in ModeBubblewrap and ModeNamespaces killing the pid namespace's init ends all
// of the namespace) and everything in its pids cgroup, which it then removes. It waits up to 2 s
// for the processes to die. Kill is safe to call twice, on an exited command and on one that was
// never started; it does not reap cmd: call cmd.Wait.
func (s *Sandbox) Kill(cmd *exec.Cmd) error {
	if cmd == nil {
		return nil
	}
	s.mu.Lock()
	cg := s.cgroups[cmd]
	delete(s.cgroups, cmd)
	s.mu.Unlock()

	if cg != "" {
		// Forbid new processes first, so that a fork bomb cannot outrun the killing.
		_ = os.WriteFile(filepath.Join(cg, "pids.max"), []byte("0"), 0)
	}
	var procs []procID
	if cmd.Process != nil {
		pid := cmd.Process.Pid
		procs = tree(pid)
		_ = cmd.Process.Kill() // by pidfd: never hits a reused pid
		// The group outlives its leader only while members hold it, so its id cannot be reused
		// before it is empty.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		for _, p := range procs {
			if p.alive() {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	}

	deadline := time.Now().Add(killTimeout)
	for {
		left := 0
		if cg != "" {
			for _, pid := range cgroupProcs(cg) {
				if st, ok := procfs.ReadStat(pid); ok && st.State != 'Z' {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					left++
				}
			}
		}
		for _, p := range procs {
			if p.alive() {
				left++
			}
		}
		if left == 0 && (cg == "" || removeCgroup(cg) == nil) {
			return nil
		}
		if time.Now().After(deadline) {
			if left == 0 {
				return fmt.Errorf("sandbox: kill: removing cgroup %s: %w", cg, removeCgroup(cg))
			}
			return fmt.Errorf("sandbox: kill: %d processes still alive after %v", left, killTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
