package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/labmate/labmate/internal/procfs"
	"github.com/labmate/labmate/kernel"
)

// Mode is an isolation mechanism.
type Mode string

// The modes, best first.
const (
	ModeBubblewrap Mode = "bubblewrap" // bwrap(1): namespaces, minimal read-only host, writable workspace
	ModeNamespaces Mode = "namespaces" // namespaces only: no network, but the filesystem is writable
	ModeNone       Mode = "none"       // a plain process with limits: no isolation at all
)

// ErrUnavailable means that a mode cannot run on this machine; the wrapping error names what is
// missing.
var ErrUnavailable = errors.New("sandbox mode unavailable")

// ErrUnenforced means that a limit of the Policy cannot be enforced here for the sandbox as a
// whole; the wrapping error names the limit, why, and what would enforce it.
var ErrUnenforced = errors.New("sandbox limit not enforced")

// Defaults for a zero Policy field, and the least memory an interpreter can start in.
const (
	DefaultMemoryBytes  int64 = 4 << 30
	DefaultMaxProcs           = 256
	DefaultMaxFileBytes int64 = 1 << 30
	DefaultDiskBytes    int64 = 10 << 30
	DefaultTmpBytes     int64 = 1 << 30 // at most; and at most a quarter of the memory budget
	MinMemoryBytes      int64 = 64 << 20
)

// Policy sets what sandboxed code may do. The zero value (or a nil *Policy) means defaults.
type Policy struct {
	Network bool // allow network; default false (a new, empty network namespace)
	// MemoryBytes is the memory budget of the whole sandbox — every process, and the pages of
	// its /tmp and /dev/shm — enforced by a cgroup, and the address-space limit (RLIMIT_AS) of
	// each process, which turns one oversized allocation into a recoverable error.
	// 0 = DefaultMemoryBytes; <0 = no limit.
	MemoryBytes int64
	MaxProcs    int     // processes and threads of the whole sandbox; 0 = DefaultMaxProcs; <0 = no limit
	CPUs        float64 // CPU time, in cores (a cgroup CPU quota); 0 = all of the machine's; <0 = no limit
	// MaxFileBytes is the largest file a process may write (RLIMIT_FSIZE, also capped by
	// DiskBytes); 0 = DefaultMaxFileBytes; <0 = no limit.
	MaxFileBytes int64
	// DiskBytes is the workspace quota: how much the workspace may grow while one command (one
	// interpreter, until it is restarted) runs; 0 = DefaultDiskBytes; <0 = no quota.
	DiskBytes int64
	// TmpBytes is the size of the private /tmp of ModeBubblewrap (which holds $HOME); 0 = a
	// quarter of MemoryBytes, at most DefaultTmpBytes.
	TmpBytes int64
	// Hide lists host paths that must never be visible inside, even where they lie in the
	// workspace or in a read-only path (labmate's data and configuration directories; in
	// ModeBubblewrap, the only mode that can hide anything).
	Hide []string
	// HostUser is the host account (a name or a uid) that sandboxed code runs as in
	// ModeBubblewrap when labmate runs as root; "" means the account HostUser, or
	// FallbackHostID where it does not exist. It is never root. When labmate runs as an
	// ordinary user, code runs as that user.
	HostUser string
}

// Sandbox starts commands in one Mode under one Policy. It implements kernel.Sandbox and is safe
// for concurrent use.
type Sandbox struct {
	mode     Mode
	policy   Policy // zero fields resolved to defaults
	version  string // "bubblewrap 0.8.0"
	bwrap    string
	prlimit  string
	features bwrapFeatures
	host     []string // bwrap options for the host's part of the sandbox's root, but /etc
	proc     []string // bwrap options for /proc
	cg       *cgroupTree
	hide     []string // Policy.Hide, absolute

	bwrapFile, prlimitFile, envFile, setprivFile os.FileInfo // to recognise wrappers in /proc/<pid>/exe

	// As root, in every mode: the host identity of sandboxed code, and the program that drops
	// root before prlimit starts outside ModeBubblewrap (and before bwrap in a Detached command).
	drop      *hostID
	setpriv   string
	pdeathsig bool   // setpriv has --pdeathsig
	seccomp   string // the profile's file, opened for bwrap's --seccomp at each start; "": none
	envCmd    string // env(1), which sets a command's environment outside ModeBubblewrap

	mu   sync.Mutex
	cmds map[*exec.Cmd]*command // the commands not yet Killed
}

// command is what a Sandbox keeps of one command until Kill.
type command struct {
	plan     *plan     // how the launcher starts it
	cg       *cgroup   // nil: no cgroup
	home     string    // a private HOME to remove (outside ModeBubblewrap)
	quota    *watchdog // nil: no quota
	oom      int64     // OOM kills already reported
	exceeded []error
}

// wrapperName is argv[0] of the /bin/sh that moves a Detached command into its cgroups and
// execs it.
const wrapperName = "labmate-sandbox"

// How long Detect and New wait for a probe, Target for the interpreter, and Kill for the tree.
const (
	probeTimeout = 10 * time.Second
	findTimeout  = 15 * time.Second // the wrappers exec at once, unless the machine is overloaded (12 parallel starts under CI took over 2 s)
	killTimeout  = 2 * time.Second
)

// Detect returns the best mode usable here: ModeBubblewrap if bwrap exists and a probe sandbox
// runs, else ModeNamespaces if a probe clone works, else ModeNone with an error that wraps
// ErrUnavailable and explains why isolation is impossible.
func Detect() (Mode, error) {
	var errs []error
	for _, m := range []Mode{ModeBubblewrap, ModeNamespaces} {
		err := probeMode(m)
		if err == nil {
			return m, nil
		}
		errs = append(errs, err)
	}
	return ModeNone, fmt.Errorf("sandbox: no isolation possible here, only mode none (--no-sandbox) remains: %w",
		errors.Join(errs...))
}

// probeMode checks that mode works here, without the cgroups of a full New.
func probeMode(mode Mode) error {
	s, err := prepare(mode, &Policy{MemoryBytes: -1, MaxProcs: -1, CPUs: -1, DiskBytes: -1})
	if err != nil {
		return err
	}
	return s.probe()
}

// New returns a sandbox of the given mode after checking that it works here; the error wraps
// ErrUnavailable when it does not. A nil p means defaults; a Policy that makes no sense (less
// memory than an interpreter needs, more than the machine has) is an error. ModeNone is never
// chosen for the caller: it must be asked for. The limits a Policy sets are enforced as far as
// this machine allows: Limits says how, CheckLimits whether anything important is missing.
func New(mode Mode, p *Policy) (*Sandbox, error) {
	s, err := prepare(mode, p)
	if err != nil {
		return nil, err
	}
	var want []string
	if s.policy.MemoryBytes > 0 {
		want = append(want, ctlMemory)
	}
	if s.policy.MaxProcs > 0 {
		want = append(want, ctlPids)
	}
	if s.policy.CPUs > 0 {
		want = append(want, ctlCPU)
	}
	if len(want) > 0 || s.policy.DiskBytes > 0 {
		want = append(want, ctlAcct) // the quota watchdog walks only when the sandbox used CPU
		s.cg = findCgroups(want)
	}
	if err := s.probe(); err != nil {
		return nil, err
	}
	return s, nil
}

func prepare(mode Mode, p *Policy) (*Sandbox, error) {
	switch mode {
	case ModeBubblewrap, ModeNamespaces, ModeNone:
	default:
		return nil, fmt.Errorf("sandbox: unknown mode %q (want %s, %s or %s)", mode, ModeBubblewrap, ModeNamespaces, ModeNone)
	}
	pol, err := resolve(p)
	if err != nil {
		return nil, err
	}
	s := &Sandbox{mode: mode, policy: pol, cmds: make(map[*exec.Cmd]*command)}
	inheritNoFds()
	for _, h := range pol.Hide {
		abs, err := filepath.Abs(h)
		if err != nil {
			return nil, fmt.Errorf("sandbox: hidden path %s: %w", h, err)
		}
		s.hide = append(s.hide, abs)
	}
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
	if mode == ModeBubblewrap {
		out, err := exec.Command(s.bwrap, "--version").Output()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s --version: %w", ErrUnavailable, mode, s.bwrap, err)
		}
		s.version = strings.TrimSpace(string(out))
		help, _ := exec.Command(s.bwrap, "--help").CombinedOutput()
		for _, opt := range []string{"--perms", "--remount-ro"} {
			if !strings.Contains(string(help), opt+" ") {
				return nil, fmt.Errorf("%w: %s: %s has no %s option (bubblewrap 0.8 or newer is needed)", ErrUnavailable, mode, s.version, opt)
			}
		}
		s.features = bwrapFeatures{
			size:          strings.Contains(string(help), "--size "),
			disableUserns: strings.Contains(string(help), "--disable-userns "),
		}
		s.host = hostLayout()
		s.proc = procLayout()
		if err := s.prepareIdentity(pol.HostUser, strings.Contains(string(help), "--seccomp ")); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, mode, err)
		}
	} else {
		if s.envCmd, err = exec.LookPath("env"); err != nil {
			return nil, fmt.Errorf("%w: %s: env not found in PATH (it is part of coreutils): %w", ErrUnavailable, mode, err)
		}
		if s.envFile, err = os.Stat(s.envCmd); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, mode, err)
		}
		if os.Geteuid() == 0 {
			// Root never runs code, whatever the mode: the mode is refused when the account
			// cannot be had.
			if err := s.prepareDrop(pol.HostUser); err != nil {
				return nil, fmt.Errorf("%w: %s: as root, code runs only as the sandbox's unprivileged account: %w", ErrUnavailable, mode, err)
			}
		} else if pol.HostUser != "" {
			return nil, fmt.Errorf("sandbox: a sandbox user (%s) can only be chosen when labmate runs as root", pol.HostUser)
		}
	}
	return s, nil
}

// prepareDrop sets up, as root, who sandboxed code is on the host: the sandbox's own
// unprivileged account (hostUser, or HostUser), which the launcher's fork becomes (setpriv(1)
// outside ModeBubblewrap and in a Detached command).
func (s *Sandbox) prepareDrop(hostUser string) error {
	id, err := resolveHostID(hostUser)
	if err != nil {
		return err
	}
	if s.setpriv, err = exec.LookPath("setpriv"); err != nil {
		return fmt.Errorf("setpriv not found in PATH (it is part of util-linux), needed to run code as %s: %w", id, err)
	}
	if s.setprivFile, err = os.Stat(s.setpriv); err != nil {
		return fmt.Errorf("setpriv: %w", err)
	}
	help, _ := exec.Command(s.setpriv, "--help").Output()
	s.pdeathsig = strings.Contains(string(help), "--pdeathsig")
	if err := makeBridge(); err != nil {
		return err
	}
	s.drop = &id
	return nil
}

// setprivArgs is setpriv(1) with the options that drop root for the sandbox's account; outside
// ModeBubblewrap (whose bwrap sets these itself) also no new privileges (a set-user-ID program
// of the host gains nothing) and death with the parent, which the change of identity cleared.
func (s *Sandbox) setprivArgs() []string {
	args := []string{s.setpriv, "--reuid=" + strconv.Itoa(s.drop.uid), "--regid=" + strconv.Itoa(s.drop.gid), "--clear-groups", "--inh-caps=-all"}
	if s.mode != ModeBubblewrap {
		args = append(args, "--no-new-privs")
		if s.pdeathsig {
			args = append(args, "--pdeathsig=KILL")
		}
	}
	return append(args, "--")
}

// prepareIdentity sets up, for ModeBubblewrap, who sandboxed code is on the host — as root,
// the sandbox's own unprivileged account, reached through mount(8) and setpriv(1) — and the
// seccomp profile's file when bwrap takes one.
func (s *Sandbox) prepareIdentity(hostUser string, seccomp bool) error {
	dir := ""
	if os.Geteuid() == 0 {
		if err := s.prepareDrop(hostUser); err != nil {
			return err
		}
		dir = filepath.Dir(bridgeDir)
	} else if hostUser != "" {
		return fmt.Errorf("a sandbox user (%s) can only be chosen when labmate runs as root", hostUser)
	}
	if !seccomp || auditArch == 0 {
		return nil
	}
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("seccomp profile: %w", err)
		}
		dir = filepath.Join(cache, "labmate")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("seccomp profile: %w", err)
		}
	}
	var err error
	s.seccomp, err = seccompFile(dir)
	return err
}

// inheritNoFds marks every file descriptor above 2 close-on-exec. Go opens its own that way,
// but not the ones this process inherited (a leaky parent's pipes or sockets), which every
// command would otherwise inherit in turn, through bwrap, into the sandbox.
func inheritNoFds() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
			if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
				syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, flags|syscall.FD_CLOEXEC)
			}
		}
	}
}

// probe runs `true` in the sandbox, through everything a command goes through.
func (s *Sandbox) probe() error {
	ws, err := os.MkdirTemp("", "labmate-probe-")
	if err != nil {
		return fmt.Errorf("%w: %s: probe workspace: %w", ErrUnavailable, s.mode, err)
	}
	defer os.RemoveAll(ws)
	cmd, err := s.Command([]string{"true"}, []string{"PATH=/usr/bin:/bin"}, ws)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, s.mode, err)
	}
	defer s.Kill(cmd)
	timer := time.AfterFunc(probeTimeout, func() { s.Kill(cmd) })
	defer timer.Stop()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = s.Start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		what := "probe sandbox `true`"
		if s.mode == ModeNamespaces {
			what = "probe clone into new user, mount, pid, net, ipc and uts namespaces"
		}
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%w: %s: %s failed: %w: %s", ErrUnavailable, s.mode, what, err, msg)
		}
		return fmt.Errorf("%w: %s: %s failed: %w", ErrUnavailable, s.mode, what, err)
	}
	return nil
}

func resolve(p *Policy) (Policy, error) {
	var r Policy
	if p != nil {
		r = *p
		r.Hide = slices.Clone(p.Hide)
	}
	if r.MemoryBytes == 0 {
		r.MemoryBytes = DefaultMemoryBytes
	}
	if r.MaxProcs == 0 {
		r.MaxProcs = DefaultMaxProcs
	}
	if r.CPUs == 0 {
		r.CPUs = float64(runtime.NumCPU())
	}
	if r.MaxFileBytes == 0 {
		r.MaxFileBytes = DefaultMaxFileBytes
	}
	if r.DiskBytes == 0 {
		r.DiskBytes = DefaultDiskBytes
	}
	if r.TmpBytes <= 0 {
		r.TmpBytes = DefaultTmpBytes
		if r.MemoryBytes > 0 {
			r.TmpBytes = min(r.TmpBytes, r.MemoryBytes/4)
		}
	}
	if err := CheckMemory(r.MemoryBytes); err != nil {
		return r, fmt.Errorf("sandbox: %w", err)
	}
	if r.CPUs > 0 && r.CPUs < 0.01 {
		return r, fmt.Errorf("sandbox: a CPU budget of %g cores is too small (at least 0.01)", r.CPUs)
	}
	if r.DiskBytes > 0 && r.DiskBytes < 1<<20 {
		return r, fmt.Errorf("sandbox: a workspace quota of %s is too small (at least 1 MiB)", FormatSize(r.DiskBytes))
	}
	return r, nil
}

// CheckMemory says what is wrong with a memory budget of n bytes (n ≤ 0: none): less than an
// interpreter needs to start, or more than this machine has.
func CheckMemory(n int64) error {
	if n <= 0 {
		return nil
	}
	if n < MinMemoryBytes {
		return fmt.Errorf("a memory budget of %s is below the minimum of %s (an interpreter needs more to start)", FormatSize(n), FormatSize(MinMemoryBytes))
	}
	if host, err := HostMemory(); err == nil && n > host {
		return fmt.Errorf("a memory budget of %s is more than this machine's %s of RAM", FormatSize(n), FormatSize(host))
	}
	return nil
}

// Mode returns the isolation mode in use.
func (s *Sandbox) Mode() Mode { return s.mode }

// MemoryLimit is the address-space limit (RLIMIT_AS) of every command, in bytes; 0: none. The
// cgroup budget of the whole sandbox, when enforced, is the same number.
func (s *Sandbox) MemoryLimit() int64 { return max(s.policy.MemoryBytes, 0) }

// Policy returns the policy in force, defaults filled in.
func (s *Sandbox) Policy() Policy {
	p := s.policy
	p.Hide = slices.Clone(p.Hide)
	return p
}

// Limit is one limit of the policy and how this sandbox enforces it.
type Limit struct {
	Name     string `json:"name"`     // "memory", "address space", "processes", "cpu", "disk", "file size", "/tmp"
	Value    string `json:"value"`    // "4.0 GiB", "256", "2 CPUs", "unlimited"
	Enforced bool   `json:"enforced"` // false: the limit is set but nothing enforces it here
	How      string `json:"how"`      // the mechanism, or why there is none
}

// Limits lists every limit, what enforces it (cgroup v1 or v2, an rlimit, the quota watchdog,
// the tmpfs size) or why nothing does.
func (s *Sandbox) Limits() []Limit {
	p := s.policy
	var out []Limit
	mem := Limit{Name: "memory", Value: "unlimited", Enforced: true, How: "no limit asked for"}
	if p.MemoryBytes > 0 {
		mem.Value = FormatSize(p.MemoryBytes)
		switch how := s.cg.how(ctlMemory); {
		case how != "" && s.cg.version == 1:
			mem.How = how + " (memory.limit_in_bytes, memory.memsw.limit_in_bytes): every process of the sandbox with its /tmp and /dev/shm pages"
		case how != "":
			mem.How = how + " (memory.max, memory.swap.max 0): every process of the sandbox with its /tmp and /dev/shm pages"
		default:
			mem.Enforced = false
			mem.How = "NOT enforced for the sandbox as a whole (each process still has RLIMIT_AS): no memory cgroup: " + s.cg.why(ctlMemory)
		}
	}
	as := Limit{Name: "address space", Value: "unlimited", Enforced: true, How: "no limit asked for"}
	if p.MemoryBytes > 0 {
		as.Value = FormatSize(p.MemoryBytes) + " per process"
		as.How = "RLIMIT_AS (prlimit): an oversized allocation fails recoverably (MemoryError, out of memory)"
	}
	procs := Limit{Name: "processes", Value: "unlimited", Enforced: true, How: "no limit asked for"}
	if p.MaxProcs > 0 {
		procs.Value = strconv.Itoa(p.MaxProcs)
		switch how := s.cg.how(ctlPids); {
		case how != "":
			procs.How = how + " (pids.max): processes and threads of the whole sandbox"
		case s.mode != ModeNone && os.Geteuid() != 0:
			procs.How = "RLIMIT_NPROC in the sandbox's user namespace"
		default:
			procs.Enforced = false
			procs.How = "NOT enforced: no pids cgroup (RLIMIT_NPROC never binds root): " + s.cg.why(ctlPids)
		}
	}
	cpu := Limit{Name: "cpu", Value: "unlimited", Enforced: true, How: "no limit asked for"}
	if p.CPUs > 0 {
		cpu.Value = strconv.FormatFloat(p.CPUs, 'g', 4, 64) + " CPUs"
		switch how := s.cg.how(ctlCPU); {
		case how != "" && s.cg.version == 1:
			cpu.How = how + " (cpu.cfs_quota_us per cpu.cfs_period_us)"
		case how != "":
			cpu.How = how + " (cpu.max)"
		default:
			cpu.Enforced = false
			cpu.How = "NOT enforced: no cpu cgroup: " + s.cg.why(ctlCPU)
		}
	}
	disk := Limit{Name: "disk", Value: "unlimited", Enforced: true, How: "no quota asked for"}
	if p.DiskBytes > 0 {
		disk.Value = FormatSize(p.DiskBytes) + " of workspace growth per command"
		disk.How = fmt.Sprintf("watchdog: the workspace's allocated blocks and %s for each file or directory, measured every %v–%v while the sandbox uses CPU (at most 1/%d of a core; a tree too big for that is measured by du inside the sandbox's cgroup, on its budget), and at once, the sandbox stopped meanwhile, when its unwritten page cache or kernel memory could pass the quota; on a breach every write to a file fails (file-size limit 0) until the workspace is back within it, the kernel interrupts the cell, and a command still growing the workspace (files, directories) is killed; fallocate is refused (seccomp)", FormatSize(InodeBytes), quotaMin, quotaMax, quotaCost)
		if s.cg == nil || len(s.cg.parents) == 0 {
			disk.Enforced = false
			disk.How += " (NOT stopped here: without a cgroup the sandbox's processes cannot be found)"
		}
	}
	file := Limit{Name: "file size", Value: "unlimited", Enforced: true, How: "no limit asked for"}
	if f := s.fileLimit(); f > 0 {
		file.Value = FormatSize(f)
		file.How = "RLIMIT_FSIZE (prlimit): the per-file cap, at most the disk quota"
	}
	tmp := Limit{Name: "/tmp", Value: "host's", Enforced: false, How: "NOT private: the host's /tmp (only bubblewrap gives the sandbox its own)"}
	if s.mode == ModeBubblewrap {
		tmp.Value = FormatSize(p.TmpBytes) + " (and " + FormatSize(shmBytes) + " /dev/shm)"
		tmp.Enforced = s.features.size
		tmp.How = "a private tmpfs with a size, holding $HOME; its pages count in the memory budget"
		if !s.features.size {
			tmp.How = "NOT capped: this bwrap has no --size (bubblewrap 0.8 has); its pages still count in the memory budget"
		}
	}
	return append(out, s.identity(), s.syscalls(), mem, as, procs, cpu, disk, file, tmp)
}

// identity is the Limit that says who sandboxed code is on the host.
func (s *Sandbox) identity() Limit {
	switch {
	case s.drop != nil && s.mode == ModeBubblewrap:
		return Limit{Name: "uid", Value: s.drop.String(), Enforced: true,
			How: fmt.Sprintf("a user namespace maps the sandbox's uid %d to this unprivileged host account, which owns nothing else: what code writes is its, and a set-ID bit could only ever give its identity", UID)}
	case s.drop != nil:
		return Limit{Name: "uid", Value: s.drop.String(), Enforced: true,
			How: "setpriv drops root for this unprivileged host account, which owns nothing else, with no new privileges (a set-user-ID program gains nothing): what code writes is its"}
	case s.mode == ModeBubblewrap:
		return Limit{Name: "uid", Value: fmt.Sprintf("uid %d (labmate's own)", os.Geteuid()), Enforced: true,
			How: fmt.Sprintf("a user namespace maps the sandbox's uid %d to the uid labmate runs as", UID)}
	case os.Geteuid() == 0:
		// Not reached: as root every mode drops root (prepare refuses a mode that cannot).
		return Limit{Name: "uid", Value: "root", Enforced: false, How: "NOT dropped: code runs as root"}
	}
	return Limit{Name: "uid", Value: fmt.Sprintf("uid %d (labmate's own)", os.Geteuid()), Enforced: true, How: "the uid labmate runs as"}
}

// syscalls is the Limit that names the seccomp profile in force.
func (s *Sandbox) syscalls() Limit {
	if s.seccomp == "" {
		why := "NOT filtered: only bubblewrap applies a seccomp profile"
		switch {
		case s.mode == ModeBubblewrap && auditArch == 0:
			why = "NOT filtered: no profile for this architecture"
		case s.mode == ModeBubblewrap:
			why = "NOT filtered: this bwrap has no --seccomp"
		}
		return Limit{Name: "seccomp", Value: "none", Enforced: false, How: why}
	}
	return Limit{Name: "seccomp", Value: seccompProfile, Enforced: true,
		How: "refuses kernel administration, mount and namespace calls, bpf, perf_event_open, userfaultfd, io_uring, fallocate (the quota cannot see it), and set-user-ID or set-group-ID bits on any file"}
}

// CheckLimits returns an error wrapping ErrUnenforced when the memory budget or the process
// limit of the policy cannot be enforced for the sandbox as a whole; nil when they are (or
// when none was asked for).
func (s *Sandbox) CheckLimits() error {
	var bad []string
	for _, l := range s.Limits() {
		if !l.Enforced && (l.Name == "memory" || l.Name == "processes") {
			bad = append(bad, fmt.Sprintf("%s %s: %s", l.Name, l.Value, l.How))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnenforced, strings.Join(bad, "; "))
}

// fileLimit is RLIMIT_FSIZE: the per-file cap, at most the quota; 0: none.
func (s *Sandbox) fileLimit() int64 {
	f, d := s.policy.MaxFileBytes, s.policy.DiskBytes
	switch {
	case f > 0 && d > 0:
		return min(f, d)
	case f > 0:
		return f
	case d > 0:
		return d
	}
	return 0
}

// Describe names the mode and the limits really in force, in one line, e.g. "bubblewrap 0.8.0:
// no network, read-only /usr and minimal /etc, uid 1000, private 1.0 GiB /tmp, writable
// workspace (dot-entries read-only); 4.0 GiB memory (cgroup v1), 256 processes (cgroup v1), …".
func (s *Sandbox) Describe() string {
	net := "no network"
	if s.policy.Network || s.mode == ModeNone {
		net = "network allowed"
	}
	switch s.mode {
	case ModeBubblewrap:
		return fmt.Sprintf("%s: %s, read-only host /usr and minimal /etc (no /home, /root, /run, /var), uid %d (on the host: %s), seccomp %s, private %s /tmp, writable workspace (dot-entries read-only); %s",
			s.version, net, UID, s.identity().Value, s.syscalls().Value, FormatSize(s.policy.TmpBytes), s.limits())
	case ModeNamespaces:
		return fmt.Sprintf("namespaces: %s, pid/ipc isolation, %s; filesystem NOT protected — install bubblewrap; %s", net, s.identity().Value, s.limits())
	default:
		return fmt.Sprintf("none — NOT isolated: host filesystem, network and processes open, %s; %s", s.identity().Value, s.limits())
	}
}

func (s *Sandbox) limits() string {
	var parts []string
	for _, l := range s.Limits() {
		var part string
		switch l.Name {
		case "memory":
			part = l.Value + " memory"
		case "processes":
			part = l.Value + " processes"
		case "cpu":
			part = l.Value
			if l.Value == "unlimited" {
				part = "unlimited CPU"
			}
		case "disk":
			part = strings.TrimSuffix(l.Value, " of workspace growth per command") + " disk quota"
			if l.Value == "unlimited" {
				part = "no disk quota"
			}
		case "file size":
			part = l.Value + " files"
			if l.Value == "unlimited" {
				part = "unlimited file size"
			}
		default:
			continue
		}
		switch how := l.How; {
		case !l.Enforced:
			part += " (NOT enforced)"
		case strings.HasPrefix(how, "cgroup v"):
			part += " (" + how[:len("cgroup v1")] + ")"
		case strings.HasPrefix(how, "RLIMIT_NPROC"):
			part += " (RLIMIT_NPROC)"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// Command returns an unstarted command that runs argv in workspace, the only writable directory,
// with env: nil means an empty environment, the host's is never inherited. When env sets no
// HOME the command gets a private, writable, empty one — never the workspace: Home in
// ModeBubblewrap, elsewhere a new directory that Kill removes. In ModeBubblewrap bwrap also
// sets PWD to the workspace. argv[0] is looked up in env's PATH.
//
// In ModeBubblewrap the readOnly paths (which, like workspace, may lie under /tmp) are the host
// paths made visible inside; the other modes see the whole host anyway. Every top-level entry
// of the workspace whose name starts with a dot (.git, .vscode, .envrc, …) is mounted read-only
// over itself, so that code cannot plant a git hook or edit an editor's configuration; this
// does not cover dot-entries the code creates, symlinked ones, or deeper ones (sub/.git).
//
// Every variable name in env must be a shell identifier. The command runs in its own process
// group and is SIGKILLed if the thread that starts it dies. Call Kill when done with the
// command, even after it has exited by itself: that releases its cgroup and stops its quota
// watchdog.
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
	if slices.Contains(s.hide, ws) {
		return nil, fmt.Errorf("sandbox: workspace %s is hidden from sandboxed code (Policy.Hide)", ws)
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

	c := &command{}
	env = slices.Clone(env)
	if env == nil {
		env = []string{}
	}
	if _, ok := lookupEnv(env, "HOME"); !ok {
		home := Home
		if s.mode != ModeBubblewrap {
			if home, err = os.MkdirTemp("", "labmate-home-"); err != nil {
				return nil, fmt.Errorf("sandbox: private HOME: %w", err)
			}
			c.home = home
		}
		env = append(env, "HOME="+home)
	}
	skip := map[string]bool{}
	for _, p := range ro {
		skip[p] = true
	}
	p := &plan{}
	var args []string
	var cred *syscall.Credential
	if s.mode == ModeBubblewrap {
		etc, err := stagedEtc(s.policy.Network)
		if err != nil {
			return nil, err
		}
		mounts := []mount{{path: ws, kind: mountWritable}}
		for _, p := range ro {
			mounts = append(mounts, mount{path: p, kind: mountReadOnly})
		}
		for _, d := range dotEntries(ws) {
			if skip[d] {
				continue
			}
			skip[d] = true
			if s.drop != nil {
				// As root the launcher mounts it read-only by its descriptor (plan.dots).
				p.ws = ws
				p.dots = append(p.dots, filepath.Base(d))
				continue
			}
			// As an ordinary user only bwrap can mount, by path: see "Rough edges".
			mounts = append(mounts, mount{path: d, kind: mountReadOnly})
		}
		for _, h := range s.hide {
			fi, err := os.Stat(h)
			if err != nil {
				continue
			}
			visible := within(h, ws)
			for _, p := range ro {
				visible = visible || within(h, p)
			}
			if visible {
				mounts = append(mounts, mount{path: h, kind: mountHidden, dir: fi.IsDir()})
				skip[h] = true
			}
		}
		if s.drop != nil {
			if err := s.drop.adopt(ws); err != nil {
				return nil, err
			}
			real, err := s.drop.trusted(ws)
			if err != nil {
				return nil, err
			}
			p.bridge(ws, real, s.drop.closed(append([]string{ws}, ro...)), mounts)
			cred = &syscall.Credential{Uid: uint32(s.drop.uid), Gid: uint32(s.drop.gid), Groups: []uint32{}}
		}
		p.seccomp = s.seccomp
		args = append(append([]string{s.bwrap}, s.bwrapArgs(etc, ws, env, mounts)...), s.limited(argv)...)
	} else {
		// env(1) sets the environment as the last step, so that no wrapper runs in it.
		args = s.limited(append(append([]string{s.envCmd, "-i"}, env...), argv...))
		if s.drop != nil {
			if err := s.dropChecks(ws, ro, c.home); err != nil {
				if c.home != "" {
					os.RemoveAll(c.home)
				}
				return nil, err
			}
			p.reveal(ws, *s.drop)
			args = append(s.setprivArgs(), args...)
		}
	}
	cmd := &exec.Cmd{
		Path:        args[0],
		Args:        args,
		Env:         []string{"PATH=" + hostPath}, // the host's side never runs in the command's environment
		Dir:         ws,
		SysProcAttr: s.sysProcAttr(),
		Err:         errStartHere,
	}
	if cred != nil {
		// The fork changes directory as the account, which may not reach ws by its own path
		// (bwrap changes to it inside, through the bridge).
		cmd.SysProcAttr.Credential, cmd.Dir = cred, "/"
	}
	fail := func(err error) (*exec.Cmd, error) {
		if c.cg != nil {
			c.cg.remove()
		}
		if c.home != "" {
			os.RemoveAll(c.home)
		}
		return nil, err
	}
	if s.cg != nil && len(s.cg.parents) > 0 {
		if c.cg, err = s.cg.create(s.policy); err != nil {
			return fail(err)
		}
		if c.cg.version == 2 {
			p.cgDir = c.cg.dirs[0]
		} else {
			for _, d := range c.cg.dirs {
				p.tasks = append(p.tasks, filepath.Join(d, "tasks"))
			}
		}
	}
	c.plan = p
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmds[cmd] = c
	if d := s.policy.DiskBytes; d > 0 {
		w := &watchdog{root: ws, skip: skip, limit: d,
			cpu: func() (int64, bool) { return 0, false }, dirty: func() (int64, bool) { return 0, false }}
		if cg := c.cg; cg != nil {
			w.cpu, w.dirty = cg.cpuTime, cg.dirty
			w.limitFiles = func(stop bool) bool { return s.limitFiles(cg, stop) }
			w.measure = func() (int64, bool) { return measureIn(cg, ws, skip) }
			w.kill = func() { killCgroup(cg) }
			w.pause, w.kmem = cg.pause, cg.kmem
		}
		w.breach = func(used int64, killed bool) { s.breach(cmd, ws, used, killed) } // waits for s.mu
		c.quota = startWatchdog(w)
	}
	return cmd, nil
}

// dropChecks prepares, as root outside ModeBubblewrap, the paths of a command for the account
// it runs as: the workspace and the private home become the account's, and every read-only
// path must be reachable by it.
func (s *Sandbox) dropChecks(ws string, ro []string, home string) error {
	if err := s.drop.adopt(ws); err != nil {
		return err
	}
	for _, p := range ro {
		if blocked := s.drop.blocked(p); blocked != "" {
			return fmt.Errorf("sandbox: %s: code runs as %s, which cannot read the read-only path %s (%s is closed to it)", s.mode, s.drop, p, blocked)
		}
	}
	if home != "" {
		if err := os.Lchown(home, s.drop.uid, s.drop.gid); err != nil {
			return fmt.Errorf("sandbox: private HOME: %w", err)
		}
	}
	return nil
}

// reveal makes the workspace ws reachable by its own path for the account id when a directory
// above it is closed to the account (a workspace under /root, or in a 0700 temporary
// directory): in the command's mount namespace ws is bound into bridgeDir, a small tmpfs
// replaces the topmost closed directory — which the account could not look into anyway — with
// just the path down to ws, and ws is bound back there. The command starts in ws either way.
func (p *plan) reveal(ws string, id hostID) {
	top := id.closedAbove(ws)
	if top == "" {
		return
	}
	via := filepath.Join(bridgeDir, "0")
	real, err := id.trusted(ws)
	if err != nil {
		real = ws // adopt refused it already; bound with no link followed, it fails to start
	}
	p.binds = []bind{{dst: bridgeDir}, {src: real, dst: via}, {dst: top}, {src: via, dst: ws, dir: true}}
}

// Adopt gives workspace to the host account sandboxed code runs as, when labmate runs as root
// in ModeBubblewrap (see hostID.adopt): the directory, and the top-level entries root put there
// since the last time (the whole tree the first time). Otherwise it does nothing. A kernel
// calls it before each cell, so that what labmate's host side added between cells (an upload,
// a folder) is writable by the cell.
func (s *Sandbox) Adopt(workspace string) error {
	if s.drop == nil {
		return nil
	}
	return s.drop.adopt(workspace)
}

// limitFiles sets the file-size limit (RLIMIT_FSIZE, soft and hard) of every process in cg to 0
// (stop: every write to a file fails) or back to the policy's, going over the list again while
// new processes appear, and says whether it set any. Without CAP_SYS_RESOURCE (which a
// container's root may lack) the limits of the sandbox's account are lowered as that account
// (hostID.prlimit), and cannot be raised again.
func (s *Sandbox) limitFiles(cg *cgroup, stop bool) bool {
	lim := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if f := s.fileLimit(); stop || f > 0 {
		lim.Cur = uint64(max(f, 0))
		if stop {
			lim.Cur = 0
		}
		lim.Max = lim.Cur
	}
	done, any := map[int]bool{}, false
	var denied []int
	for range 8 {
		fresh := false
		for _, pid := range cg.procs() {
			if done[pid] {
				continue
			}
			done[pid], fresh = true, true
			if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &lim, nil); err == nil {
				any = true
			} else if errors.Is(err, unix.EPERM) && stop && s.drop != nil {
				denied = append(denied, pid)
			}
		}
		if len(denied) > 0 {
			any = s.drop.prlimit(denied, unix.RLIMIT_FSIZE, lim) > 0 || any
			denied = denied[:0]
		}
		if !fresh {
			break
		}
	}
	return any
}

// measureIn measures what allocated does — the blocks under ws, each inode once, no symlink
// followed, the subtrees in skip left out, and InodeBytes an inode — with du(1) run in cg, so
// that the sandbox's CPU and memory budget pays for a tree it made big. ok is false when du
// could not say.
func measureIn(cg *cgroup, ws string, skip map[string]bool) (int64, bool) {
	var script strings.Builder
	for _, f := range cg.procsFiles() {
		fmt.Fprintf(&script, "echo 0 >%s || exit 126; ", shellQuote(f))
	}
	script.WriteString(`du -s -x -P -B1 "$@" && exec du -s -x -P --inodes "$@"`)
	args := []string{"-c", script.String(), "labmate-quota"}
	for p := range skip {
		args = append(args, "--exclude="+globEscape.Replace(p))
	}
	cmd := exec.Command("/bin/sh", append(args, "--", ws)...)
	cmd.Env = []string{"PATH=" + hostPath, "LC_ALL=C"}
	out, err := cmd.Output()
	if err != nil {
		return 0, false
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return 0, false
	}
	var n [2]int64
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			return 0, false
		}
		if n[i], err = strconv.ParseInt(f[0], 10, 64); err != nil {
			return 0, false
		}
	}
	return n[0] + n[1]*InodeBytes, true
}

// globEscape makes a path a pattern of du's --exclude that matches only itself.
var globEscape = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)

// breach records that cmd's workspace grew past its quota.
func (s *Sandbox) breach(cmd *exec.Cmd, ws string, used int64, killed bool) {
	err := quotaError(used, s.policy.DiskBytes, ws, killed)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cmds[cmd]; c != nil {
		c.exceeded = append(c.exceeded, err)
	}
}

// quotaError says that workspace ws grew by used bytes, past its quota of limit.
func quotaError(used, limit int64, ws string, killed bool) error {
	err := fmt.Errorf("%w: %d MiB of %s written to the workspace %s", kernel.ErrQuota, (used+1<<20-1)>>20, FormatSize(limit), ws)
	if killed {
		err = fmt.Errorf("%w, and the sandbox still grew it once writes were stopped (files, directories, a shared mapping): it was killed", err)
	}
	return err
}

// Exceeded returns, oldest first, each time cmd ran into the sandbox's budget: errors wrapping
// kernel.ErrOutOfMemory (the memory budget ran out and the kernel's OOM killer ended
// processes) or kernel.ErrQuota (the workspace grew past its quota). It is nil for a command
// that stayed within its budget, and after Kill.
func (s *Sandbox) Exceeded(cmd *exec.Cmd) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cmds[cmd]
	if c == nil {
		return nil
	}
	if c.cg != nil {
		if n, ok := c.cg.oomKills(); ok && n > c.oom {
			c.exceeded = append(c.exceeded, fmt.Errorf("%w: the sandbox's %s budget (its processes, /tmp and /dev/shm together) ran out and the kernel's OOM killer ended %d process(es)",
				kernel.ErrOutOfMemory, FormatSize(s.policy.MemoryBytes), n-c.oom))
			c.oom = n
		}
	}
	return slices.Clone(c.exceeded)
}

// limited prefixes argv with prlimit, which sets the rlimits and execs argv (found in the PATH
// of env), so the interpreter keeps prlimit's pid.
func (s *Sandbox) limited(argv []string) []string {
	var flags []string
	if m := s.policy.MemoryBytes; m > 0 {
		flags = append(flags, fmt.Sprintf("--as=%d", m))
	}
	if f := s.fileLimit(); f > 0 {
		flags = append(flags, fmt.Sprintf("--fsize=%d", f))
	}
	// RLIMIT_NPROC never binds root; for other users it binds per user namespace (kernel ≥ 5.14),
	// which ModeNone does not have: there it would count all the user's processes on the host.
	// As root outside ModeBubblewrap the account's processes are in no user namespace of their
	// own, where the limit would count every sandbox's together: the pids cgroup binds there.
	if n := s.policy.MaxProcs; n > 0 && (s.mode == ModeBubblewrap || s.mode == ModeNamespaces && s.drop == nil) {
		flags = append(flags, fmt.Sprintf("--nproc=%d", n))
	}
	out := append([]string{s.prlimit}, flags...)
	return append(append(out, "--"), argv...)
}

func (s *Sandbox) sysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.mode == ModeNamespaces && s.drop != nil {
		// As root, root makes the namespaces and setpriv drops root for the account, which
		// cannot setns back into the host's (that takes CAP_SYS_ADMIN).
		a.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC
		if !s.policy.Network {
			a.Cloneflags |= syscall.CLONE_NEWNET
		}
	} else if s.mode == ModeNamespaces {
		// A user namespace: the code is uid 0 in it, the caller outside.
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

// hostPath is the PATH of the processes labmate runs on the host side of a command: the
// wrapper shell, setpriv, bwrap, env and prlimit.
const hostPath = "/usr/sbin:/usr/bin:/sbin:/bin"

// wrapper is the /bin/sh -c script that starts a command from a process that outlives labmate
// (Detached): it joins the command's cgroups, so that everything the command ever forks is
// counted from its first instruction, with no race; as root it drops root with setpriv; and it
// opens the seccomp profile for bwrap on fd seccompFd. Then it execs "$@" in place.
type wrapper struct {
	join    []string // cgroup.procs files
	setpriv []string // setpriv and its options, ending with "--"
	seccomp string   // the profile's file
}

// seccompFd is the descriptor on which bwrap reads the seccomp profile.
const seccompFd = 9

// bridge plans the mounts of srcs (the workspace ws and the read-only paths the account cannot
// reach, hostID.closed) into bridgeDir and points every mount under them at its bridged
// source. None: the command runs in the host's mount namespace.
func (p *plan) bridge(ws, real string, srcs []string, mounts []mount) {
	if len(srcs) == 0 {
		return
	}
	p.binds = []bind{{dst: bridgeDir}}
	for i, src := range srcs {
		b := bind{src: src, dst: filepath.Join(bridgeDir, strconv.Itoa(i)), follow: true}
		if src == ws {
			b.src, b.follow = real, false // its links resolved by hostID.trusted, none followed now
		}
		p.binds = append(p.binds, b)
	}
	for i := range mounts {
		m := &mounts[i]
		for j, src := range srcs {
			if m.path == src || within(m.path, src) {
				m.src = filepath.Join(bridgeDir, strconv.Itoa(j)) + strings.TrimPrefix(m.path, src)
				break
			}
		}
	}
}

// script returns the wrapper's script.
func (w *wrapper) script() string {
	var b strings.Builder
	for _, f := range w.join {
		fmt.Fprintf(&b, "echo 0 >%s || exit 126; ", shellQuote(f))
	}
	b.WriteString("exec")
	for _, a := range w.setpriv {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString(` "$@"`)
	if w.seccomp != "" {
		fmt.Fprintf(&b, " %d<%s", seccompFd, shellQuote(w.seccomp))
	}
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
// receive SIGINT. It waits up to 15 s for the wrappers (setpriv, bwrap, prlimit) to exec it. In
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
			// "as the interpreter" means it was caught mid-exec into bwrap
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

// classify says what pid is now: "exited" (or a zombie), "exec-ing", "bwrap", "the wrapper
// shell", "setpriv", "prlimit", "env" or "interpreter".
func (s *Sandbox) classify(pid int) string {
	if st, ok := procfs.ReadStat(pid); !ok || st.State == 'Z' || st.State == 'X' {
		return "exited"
	}
	exe, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return "exited"
	}
	// An exec changes exe and cmdline at different moments, so a wrapper caught mid-exec can
	// show its own exe with its successor's cmdline: read exe again after cmdline and call the
	// process what it is only when the two reads agree.
	cmdline, cmdErr := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if again, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid)); err != nil {
		return "exited"
	} else if !os.SameFile(exe, again) {
		return "exec-ing"
	}
	switch {
	case s.bwrapFile != nil && os.SameFile(exe, s.bwrapFile):
		return "bwrap"
	case os.SameFile(exe, s.prlimitFile):
		return "prlimit"
	case s.setprivFile != nil && os.SameFile(exe, s.setprivFile):
		return "setpriv"
	case s.envFile != nil && os.SameFile(exe, s.envFile):
		return "env"
	}
	if cmdErr != nil {
		return "exited"
	}
	switch arg0, _, _ := strings.Cut(string(cmdline), "\x00"); arg0 {
	case wrapperName:
		return "the wrapper shell"
	case "":
		return "exec-ing" // the new image has not set up its arguments yet
	}
	return "interpreter"
}

// Kill ends the started command's whole process tree with SIGKILL: its process group, every
// descendant (in ModeBubblewrap and ModeNamespaces killing the pid namespace's init ends all
// of the namespace) and everything in its cgroup, which it then removes; it stops the quota
// watchdog and removes the private HOME. It waits up to 2 s for the processes to die. Kill is
// safe to call twice, on an exited command and on one that was never started; it does not reap
// cmd: call cmd.Wait.
func (s *Sandbox) Kill(cmd *exec.Cmd) error {
	if cmd == nil {
		return nil
	}
	s.mu.Lock()
	c := s.cmds[cmd]
	delete(s.cmds, cmd)
	s.mu.Unlock()
	if c == nil {
		c = &command{}
	}
	if c.quota != nil {
		c.quota.close()
	}
	cg := c.cg
	if cg != nil {
		cg.freeze()
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
		if cg != nil {
			left += killProcs(cg.procs())
		}
		for _, p := range procs {
			if p.alive() {
				left++
			}
		}
		if left == 0 && (cg == nil || cg.remove() == nil) {
			if c.home != "" {
				os.RemoveAll(c.home)
			}
			return nil
		}
		if time.Now().After(deadline) {
			if left == 0 {
				return fmt.Errorf("sandbox: kill: removing cgroup %s: %w", cg.dirs, cg.remove())
			}
			return fmt.Errorf("sandbox: kill: %d processes still alive after %v", left, killTimeout)
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// killProcs SIGKILLs the live processes among pids and says how many there were.
func killProcs(pids []int) int {
	n := 0
	for _, pid := range pids {
		if st, ok := procfs.ReadStat(pid); ok && st.State != 'Z' {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

// killCgroup kills everything in cg and waits (bounded) for it to be gone, leaving cg itself.
func killCgroup(cg *cgroup) {
	cg.freeze()
	for deadline := time.Now().Add(killTimeout); killProcs(cg.procs()) > 0 && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}
}

// Cgroups are the files of a command's cgroups, for a process that outlives the Sandbox and
// must account for the command by itself (a background job's recorder).
type Cgroups struct {
	Dirs  []string `json:"dirs,omitempty"`  // the command's cgroup directories, to remove once it has ended
	Procs string   `json:"procs,omitempty"` // a cgroup.procs file that lists every process of the command
	// OOM is the file whose "oom_kill N" line counts the processes the kernel's OOM killer
	// ended (memory.events, or memory.oom_control in v1); "" when it is not counted.
	OOM string `json:"oom,omitempty"`
}

// Cgroups returns the cgroup files of cmd, a command of s not yet Killed; zero when it has no
// cgroup.
func (s *Sandbox) Cgroups(cmd *exec.Cmd) Cgroups {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cmds[cmd]
	if c == nil || c.cg == nil || len(c.cg.dirs) == 0 {
		return Cgroups{}
	}
	out := Cgroups{Dirs: slices.Clone(c.cg.dirs), Procs: filepath.Join(c.cg.dirs[0], "cgroup.procs")}
	if d := c.cg.by[ctlMemory]; d != "" {
		out.OOM = filepath.Join(d, "memory.events")
		if c.cg.version == 1 {
			out.OOM = filepath.Join(d, "memory.oom_control")
		}
	}
	return out
}
