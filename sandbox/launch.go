package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Every command starts from one OS thread of labmate's own, the launcher, which prepares where
// the command runs with system calls rather than with programs run before it (each mount(8),
// setpriv(1) and wrapper shell cost a kernel's start milliseconds):
//
//   - its mount namespace: as root, a fresh private copy of the host's for each command whose
//     sources the account cannot reach (a workspace below a directory only root may enter), in
//     which they are bound into bridgeDir; the command is born in it, and the thread goes back
//     to the host's namespace;
//   - its cgroups: the command is born in them (clone3 into its cgroup in v2; in v1 the thread
//     steps into the command's cgroups for the fork and back out), so that everything it ever
//     forks is counted from its first instruction;
//   - its identity: the fork drops root for the sandbox's account (exec.Cmd's Credential)
//     before bwrap runs, with no inheritable capability (the thread has none).
//
// The thread never ends: a command's Pdeathsig fires when the thread that forked it ends, so
// here only when labmate does. The Go runtime starts no thread from a locked one, so nothing
// else ever runs in a command's mount namespace.

// errStartHere is what exec.Cmd.Start returns for a command of Command's: only Sandbox.Start
// puts it where it must run.
var errStartHere = errors.New("sandbox: a sandboxed command is started by Sandbox.Start, not by exec.Cmd's Start or Run")

// plan is how the launcher starts one command.
type plan struct {
	binds []bind   // the command's mount namespace, made from the host's; none: the host's own
	tasks []string // v1: the cgroup "tasks" files the forking thread steps into
	cgDir string   // v2: the cgroup the command is born in
	// seccomp is the profile's file, opened for bwrap on seccompFd; "": none.
	seccomp string
	// ws and dots: as root, the workspace's top-level dot-entries (names in ws) are made
	// read-only here, in the command's mount namespace, each opened without following a symbolic
	// link and mounted by its descriptor, before the workspace is bound anywhere; bwrap's
	// recursive bind of the workspace carries them, locked read-only in its user namespace.
	// bwrap itself binds by path (it calls realpath(3) even on --ro-bind-fd's descriptor), so
	// code in the workspace (a job's, another kernel's) that swapped a dot-entry for a symbolic
	// link between the listing and the bind had it bind the link's target: a relative link
	// climbing out of the workspace put the host's /proc, or any host directory whose path
	// exists in the sandbox, in the sandbox's view.
	ws   string
	dots []string
}

// bind is one step of filling a command's mount namespace, as root.
type bind struct {
	src string // bound (recursively) at dst; "": a small tmpfs is mounted at dst
	dst string
	// dir: dst is made as a directory (mode 0755) with its missing parents; else, when src is
	// not a directory, an empty file.
	dir bool
	// follow: src may be reached through symlinks (a read-only path labmate chose); a
	// workspace never is, so that a planted symlink cannot swap what is bound writable.
	follow bool
}

// launcher is the thread every command is started from.
type launcher struct {
	hostNS int  // the host's mount namespace; -1: unknown
	away   bool // the thread is in a command's mount namespace
	broken bool // it could not go back (to the host's namespace or its cgroup): it serves no more
}

var (
	launchOnce sync.Once
	launches   = make(chan func(*launcher))
)

// onLauncher runs f on the launcher thread and returns once it is done.
func onLauncher(f func(*launcher)) {
	launchOnce.Do(func() { go serveLaunches() })
	done := make(chan struct{})
	launches <- func(l *launcher) {
		defer close(done)
		f(l)
	}
	<-done
}

// serveLaunches runs the launches on a thread of its own until that thread is broken; then a
// new one takes over and the broken one is parked for good (ending it would kill its children).
// The thread is never the main one, whose cgroups are the process's (/proc/self/cgroup).
func serveLaunches() {
	runtime.LockOSThread() // never undone on the launcher thread
	if unix.Gettid() == unix.Getpid() {
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread() // not this one: it is held
			close(locked)
			serveOn()
		}()
		<-locked
		runtime.UnlockOSThread()
		return
	}
	serveOn()
}

// serveOn serves launches on the current thread, locked to its goroutine.
func serveOn() {
	l := &launcher{hostNS: -1}
	// A file system context (root, cwd) of the thread's own, without which setns into a mount
	// namespace is refused to a thread of a multithreaded process.
	if unix.Unshare(unix.CLONE_FS) == nil {
		if fd, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			l.hostNS = fd
		}
	}
	dropInheritable()
	for f := range launches {
		f(l)
		if l.broken {
			go serveLaunches()
			select {}
		}
	}
}

// dropInheritable empties the thread's inheritable capabilities, which a command forked from it
// would keep across the change of identity (as setpriv --inh-caps=-all did).
func dropInheritable() {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil || data[0].Inheritable == 0 && data[1].Inheritable == 0 {
		return
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	_ = unix.Capset(&hdr, &data[0])
}

// launch runs start, which forks the command, on the launcher thread where p says.
func (p *plan) launch(start func() error) error {
	var err error
	onLauncher(func(l *launcher) { err = l.launch(p, start) })
	return err
}

func (l *launcher) launch(p *plan, start func() error) error {
	if len(p.binds) > 0 || len(p.dots) > 0 {
		defer l.home()
		if err := l.enter(p.ws, p.dots, p.binds); err != nil {
			return err
		}
	}
	if len(p.tasks) > 0 {
		tid := []byte(strconv.Itoa(unix.Gettid()))
		var in []string
		defer func() {
			for _, t := range in {
				// Back to labmate's own cgroup, the parent of labmate's parent of the command's.
				if os.WriteFile(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(t))), "tasks"), tid, 0) != nil {
					l.broken = true
				}
			}
		}()
		for _, t := range p.tasks {
			if err := os.WriteFile(t, tid, 0); err != nil {
				return fmt.Errorf("sandbox: joining the cgroup %s: %w", filepath.Dir(t), err)
			}
			in = append(in, t)
		}
	}
	return start()
}

// enter puts the thread in a new mount namespace, a private copy of the host's, makes the
// dot-entries dots of workspace ws read-only there, and fills it with binds.
func (l *launcher) enter(ws string, dots []string, binds []bind) error {
	if l.hostNS < 0 {
		return errors.New("sandbox: cannot make a mount namespace for the command: the host's is unknown (no /proc/thread-self/ns/mnt)")
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("sandbox: a mount namespace for the command: %w", err)
	}
	l.away = true
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("sandbox: making the command's mount namespace private: %w", err)
	}
	if err := readOnlyEntries(ws, dots); err != nil {
		return err
	}
	for _, b := range binds {
		if err := b.do(); err != nil {
			return fmt.Errorf("sandbox: preparing the command's mounts: %w", err)
		}
	}
	return nil
}

// home takes the thread back to the host's mount namespace.
func (l *launcher) home() {
	if l.away {
		if unix.Setns(l.hostNS, unix.CLONE_NEWNS) != nil {
			l.broken = true
			return
		}
		l.away = false
	}
}

func (b bind) do() error {
	if b.src == "" {
		return unix.Mount("labmate-bridge", b.dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64k")
	}
	// The source is opened here, in the new namespace (a bind takes a mount of the current
	// one), and bound by its descriptor: what is bound is what was opened.
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC}
	if !b.follow {
		how.Resolve = unix.RESOLVE_NO_SYMLINKS
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, b.src, &how)
	if errors.Is(err, unix.ENOSYS) { // before Linux 5.6: the last component at least
		fd, err = unix.Open(b.src, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: b.src, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: b.src, Err: err}
	}
	switch {
	case b.dir:
		if err := mkdirs(b.dst); err != nil {
			return err
		}
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		if err := unix.Mkdir(b.dst, 0o755); err != nil {
			return &os.PathError{Op: "mkdir", Path: b.dst, Err: err}
		}
	default:
		f, err := unix.Open(b.dst, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return &os.PathError{Op: "create", Path: b.dst, Err: err}
		}
		unix.Close(f)
	}
	if err := unix.Mount("/proc/thread-self/fd/"+strconv.Itoa(fd), b.dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return &os.PathError{Op: "bind " + b.src + " at", Path: b.dst, Err: err}
	}
	return nil
}

// readOnlyEntries mounts each of names, entries of directory ws, read-only over itself in the
// current mount namespace: opened through ws's descriptor without following a symbolic link,
// cloned, made read-only and moved back onto the same descriptor, so that no path is resolved
// after the open. An entry that is no longer a directory or a regular file (swapped since it
// was listed) is left alone: it is not bound anywhere either.
func readOnlyEntries(ws string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	dir, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: ws, Err: err}
	}
	defer unix.Close(dir)
	for _, name := range names {
		if err := readOnlyEntry(dir, name); err != nil {
			return fmt.Errorf("sandbox: making %s read-only: %w", filepath.Join(ws, name), err)
		}
	}
	return nil
}

func readOnlyEntry(dir int, name string) error {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFDIR && t != unix.S_IFREG {
		return nil
	}
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// mkdirs makes dir and its missing parents, each mode 0755 whatever the umask.
func mkdirs(dir string) error {
	p := "/"
	for _, part := range strings.Split(strings.Trim(dir, "/"), "/") {
		p = filepath.Join(p, part)
		if err := unix.Mkdir(p, 0o755); err == nil {
			if err := unix.Chmod(p, 0o755); err != nil {
				return &os.PathError{Op: "chmod", Path: p, Err: err}
			}
		} else if !errors.Is(err, unix.EEXIST) {
			return &os.PathError{Op: "mkdir", Path: p, Err: err}
		}
	}
	return nil
}

// Start starts cmd, a command of Command's not yet started, from the launcher thread (see
// above): in its mount namespace and cgroups, as the sandbox's account. exec.Cmd's own Start
// and Run refuse such a command.
func (s *Sandbox) Start(cmd *exec.Cmd) error {
	s.mu.Lock()
	c := s.cmds[cmd]
	s.mu.Unlock()
	if c == nil || cmd.Err != errStartHere {
		return errors.New("sandbox: Start: not an unstarted command of this sandbox's (made by Command, not yet started or killed)")
	}
	p := c.plan
	if p.seccomp != "" {
		if n := len(cmd.ExtraFiles); n > seccompFd-3 {
			return fmt.Errorf("sandbox: descriptor %d is the seccomp profile's: a command's extra files end below it (it has %d)", seccompFd, n)
		}
		f, err := os.Open(p.seccomp)
		if err != nil {
			return fmt.Errorf("sandbox: seccomp profile: %w", err)
		}
		defer f.Close()
		extra := cmd.ExtraFiles
		defer func() { cmd.ExtraFiles = extra }()
		cmd.ExtraFiles = append(append(extra, make([]*os.File, seccompFd-3-len(extra))...), f)
	}
	if p.cgDir != "" {
		fd, err := unix.Open(p.cgDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("sandbox: the command's cgroup: %w", &os.PathError{Op: "open", Path: p.cgDir, Err: err})
		}
		defer unix.Close(fd)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	}
	cmd.Err = nil
	return p.launch(cmd.Start)
}

// Detached returns how another process — a job's recorder, which outlives labmate and waits
// for the command — runs cmd as its child: the argv of a shell that joins cmd's cgroups, drops
// root for the sandbox's account and execs cmd with its seccomp profile; start that process
// with StartWith. cmd itself is never started.
func (s *Sandbox) Detached(cmd *exec.Cmd) ([]string, error) {
	s.mu.Lock()
	c := s.cmds[cmd]
	s.mu.Unlock()
	if c == nil || cmd.Err != errStartHere {
		return nil, errors.New("sandbox: Detached: not an unstarted command of this sandbox's")
	}
	w := wrapper{seccomp: c.plan.seccomp}
	if c.cg != nil {
		w.join = c.cg.procsFiles()
	}
	if cred := cmd.SysProcAttr.Credential; cred != nil {
		w.setpriv = s.setprivArgs()
	}
	return append([]string{"/bin/sh", "-c", w.script(), wrapperName}, cmd.Args...), nil
}

// StartWith starts other, which runs cmd later (see Detached), in cmd's mount namespace.
func (s *Sandbox) StartWith(cmd, other *exec.Cmd) error {
	s.mu.Lock()
	c := s.cmds[cmd]
	s.mu.Unlock()
	if c == nil {
		return errors.New("sandbox: StartWith: not a command of this sandbox's")
	}
	return (&plan{binds: c.plan.binds, ws: c.plan.ws, dots: c.plan.dots}).launch(other.Start)
}
