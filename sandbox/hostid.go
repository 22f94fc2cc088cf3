package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// HostUser is the host account whose uid and gid sandboxed code runs as when labmate runs as
// root: a system user that owns nothing else (scripts/deps creates it). Where it does not exist
// the sandbox uses FallbackHostID, which no account may have.
const (
	HostUser       = "labmate-sandbox"
	FallbackHostID = 64999
)

// hostID is the host identity of sandboxed code when labmate runs as root.
type hostID struct {
	uid, gid int
	name     string // the account's name, or "" for FallbackHostID
}

// resolveHostID returns the identity to run sandboxed code as: name (a user name or a number;
// "" means HostUser, falling back to FallbackHostID). It refuses root, and a fallback id that
// an account already has.
func resolveHostID(name string) (hostID, error) {
	lookup := name
	if lookup == "" {
		lookup = HostUser
	}
	var id hostID
	u, err := user.Lookup(lookup)
	if err != nil {
		var unknown user.UnknownUserError
		if _, nerr := strconv.Atoi(lookup); nerr == nil {
			u, err = user.LookupId(lookup)
		}
		switch {
		case err == nil:
		case name == "" && errors.As(err, &unknown):
			if u, err := user.LookupId(strconv.Itoa(FallbackHostID)); err == nil {
				return id, fmt.Errorf("sandbox: no user %s, and the fallback uid %d belongs to %s: create %s (scripts/deps does) or name another with --sandbox-user", HostUser, FallbackHostID, u.Username, HostUser)
			}
			return hostID{uid: FallbackHostID, gid: FallbackHostID}, nil
		default:
			return id, fmt.Errorf("sandbox: sandbox user %q: %w", lookup, err)
		}
	}
	if id.uid, err = strconv.Atoi(u.Uid); err != nil {
		return id, fmt.Errorf("sandbox: sandbox user %q has uid %q: %w", lookup, u.Uid, err)
	}
	if id.gid, err = strconv.Atoi(u.Gid); err != nil {
		return id, fmt.Errorf("sandbox: sandbox user %q has gid %q: %w", lookup, u.Gid, err)
	}
	if id.uid == 0 || id.gid == 0 {
		return id, fmt.Errorf("sandbox: sandbox user %q is root (uid %d, gid %d): it must be an unprivileged account", lookup, id.uid, id.gid)
	}
	id.name = u.Username
	return id, nil
}

// HostIdentity returns the host uid and gid of sandboxed code under the default Policy when
// labmate runs as root (HostUser, or FallbackHostID); ok is false when labmate does not run as
// root (code is then labmate's own uid) or no such identity can be had. Host-side services that
// sandboxed code must reach, such as the bench's socket, are given to it.
func HostIdentity() (uid, gid int, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	id, err := resolveHostID("")
	if err != nil {
		return 0, 0, false
	}
	return id.uid, id.gid, true
}

// String is "labmate-sandbox (uid 999, gid 999)".
func (id hostID) String() string {
	if id.name == "" {
		return fmt.Sprintf("uid %d, gid %d", id.uid, id.gid)
	}
	return fmt.Sprintf("%s (uid %d, gid %d)", id.name, id.uid, id.gid)
}

// bridgeDir is where, when labmate runs as root, the wrapper of each command mounts the
// command's workspace and read-only paths, in a mount namespace of its own, so that bwrap,
// running as the sandbox's uid, reaches them whatever the modes of the directories above them.
// It is an empty directory of root's, mode 0755, and stays empty on the host; its parent holds
// the seccomp profile.
const bridgeDir = "/run/labmate-sandbox/bridge"

// makeBridge creates bridgeDir and its parent, each root's, mode 0755 and not a symlink.
func makeBridge() error {
	for _, d := range []string{filepath.Dir(bridgeDir), bridgeDir} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("sandbox: %w", err)
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(d, &st); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || st.Uid != 0 || st.Mode&0o022 != 0 {
			return fmt.Errorf("sandbox: %s must be a directory of root's that only root can write (mode %o, uid %d)", d, st.Mode, st.Uid)
		}
	}
	return nil
}

// trusted resolves the symbolic links in the absolute path p that the account cannot have made
// or replaced, and refuses one it could: a link the account owns, or in a directory it owns or
// may write to (without the sticky bit). A link above a workspace that the host's administrator
// or labmate put there is part of its path; a link a cell made (a directory of its workspace
// swapped for a link to /) is not.
func (id hostID) trusted(p string) (string, error) {
	parts := strings.Split(strings.Trim(filepath.Clean(p), "/"), "/")
	cur := "/"
	for i, links := 0, 0; i < len(parts); i++ {
		if parts[i] == "" {
			continue
		}
		next := filepath.Join(cur, parts[i])
		var st unix.Stat_t
		if err := unix.Lstat(next, &st); err != nil {
			return "", fmt.Errorf("sandbox: workspace %s: %w", p, &os.PathError{Op: "lstat", Path: next, Err: err})
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			cur = next
			continue
		}
		var dir unix.Stat_t
		if err := unix.Stat(cur, &dir); err != nil {
			return "", fmt.Errorf("sandbox: workspace %s: %w", p, &os.PathError{Op: "stat", Path: cur, Err: err})
		}
		writable := dir.Uid == uint32(id.uid) || dir.Mode&0o002 != 0 && dir.Mode&unix.S_ISVTX == 0 ||
			dir.Mode&0o020 != 0 && dir.Gid == uint32(id.gid)
		if st.Uid == uint32(id.uid) || writable {
			return "", fmt.Errorf("sandbox: workspace %s goes through the symbolic link %s, which sandboxed code (%s) could have made: give the workspace by its own path", p, next, id)
		}
		if links++; links > 40 {
			return "", fmt.Errorf("sandbox: workspace %s: too many symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("sandbox: workspace %s: %w", p, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		parts = append(strings.Split(strings.Trim(filepath.Clean(target), "/"), "/"), parts[i+1:]...)
		cur, i = "/", -1
	}
	return cur, nil
}

// adopt gives the workspace ws to the sandbox's uid, so that sandboxed code can write in it:
// the directory itself and whatever root owns in it — the whole tree the first time (while
// root still owns the directory), then its top-level entries (files the host's side added
// since, such as uploads). Top-level dot-entries stay root's: they are mounted read-only. It
// never follows a symlink, nor leaves ws: not even one above it, since a directory above a
// job's workspace may be the cell's (the job's workspace a/etc inside the session's, whose a a
// process of the cell exchanged with a link to / after the job's own check: the host's /etc
// was given to the account). A path through a link is refused; the caller resolves its own.
func (id hostID) adopt(ws string) error {
	ws, err := id.trusted(ws)
	if err != nil {
		return err
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, ws, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return fmt.Errorf("sandbox: workspace %s: a directory in its path was replaced by a symbolic link while the command was made", ws)
	}
	if err != nil {
		return fmt.Errorf("sandbox: workspace: %w", &os.PathError{Op: "open", Path: ws, Err: err})
	}
	f := os.NewFile(uintptr(fd), ws)
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("sandbox: workspace: %w", err)
	}
	whole := st.Uid == 0
	if whole {
		if err := f.Chown(id.uid, id.gid); err != nil {
			return fmt.Errorf("sandbox: giving the workspace %s to the sandbox's %s: %w", ws, id, err)
		}
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return fmt.Errorf("sandbox: workspace: %w", err)
	}
	defer root.Close()
	walk := func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil // what cannot be read is left as it is
		}
		if !strings.Contains(p, "/") && strings.HasPrefix(p, ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok && sys.Uid == 0 {
				_ = root.Lchown(p, id.uid, id.gid)
			}
		}
		if d.IsDir() && !whole {
			return fs.SkipDir
		}
		return nil
	}
	if whole {
		return fs.WalkDir(root.FS(), ".", walk)
	}
	// Before each cell: the top level only, in batches, and at most adoptScan entries, so that
	// a cell's 300 000 files do not cost the host that many lstat calls and that much memory
	// before every cell.
	for seen := 0; seen < adoptScan; {
		entries, err := f.ReadDir(256)
		for _, e := range entries {
			walk(e.Name(), e, nil)
		}
		seen += len(entries)
		if err != nil {
			break
		}
	}
	return nil
}

// adoptScan is how many top-level entries of a workspace adopt looks at, after the first time.
const adoptScan = 10000

// prlimit sets resource of the processes pids to lim as the account h, and says how many it
// set: how root without CAP_SYS_RESOURCE lowers the limits of the account's processes (the
// kernel lets an account change its own processes' limits, never raise a hard one). The
// identity is changed for one OS thread only (raw setresgid/setresuid act on the calling
// thread, not on the process as Go's own wrappers do), keeping root as the saved id so that the
// thread takes root back after; it takes microseconds, where running prlimit(1) through
// setpriv(1) took milliseconds a process, while the sandbox wrote on. The thread is never
// ended: a child started from it (with Pdeathsig, as every sandboxed command is) would be
// killed with it. One that cannot take root back is parked for good instead.
func (h hostID) prlimit(pids []int, resource int, lim unix.Rlimit) int {
	set := make(chan int)
	go func() {
		runtime.LockOSThread()
		n := 0
		as := func(uid, gid int) bool {
			if uid == 0 { // root first: setting the gid back takes CAP_SETGID
				_, _, e1 := unix.RawSyscall(unix.SYS_SETRESUID, 0, 0, 0)
				_, _, e2 := unix.RawSyscall(unix.SYS_SETRESGID, 0, 0, 0)
				return e1 == 0 && e2 == 0
			}
			_, _, e1 := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), 0)
			_, _, e2 := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), 0)
			return e1 == 0 && e2 == 0
		}
		if as(h.uid, h.gid) {
			for _, pid := range pids {
				if unix.Prlimit(pid, resource, &lim, nil) == nil {
					n++
				}
			}
		}
		restored := as(0, 0)
		set <- n
		if !restored {
			select {} // this thread is not root: it must neither run Go code again nor end
		}
		runtime.UnlockOSThread()
	}()
	return <-set
}

// may says whether the account has the permission bits want (4 read, 2 write, 1 search) on fi,
// from its mode bits alone (the account has no supplementary groups).
func (id hostID) may(fi os.FileInfo, want uint32) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	perm := st.Mode & 0o7
	switch {
	case int(st.Uid) == id.uid:
		perm = st.Mode >> 6 & 0o7
	case int(st.Gid) == id.gid:
		perm = st.Mode >> 3 & 0o7
	}
	return perm&want == want
}

// closedAbove returns the topmost directory above p that the account cannot search; "" when it
// can search them all.
func (id hostID) closedAbove(p string) string {
	dir, rest := "/", strings.Trim(filepath.Dir(p), "/")
	for {
		if fi, err := os.Stat(dir); err != nil || !id.may(fi, 1) {
			return dir
		}
		if rest == "" {
			return ""
		}
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		dir = filepath.Join(dir, part)
	}
}

// closed returns the paths of ps that the account cannot reach by their own path (closedAbove):
// those that sandboxed code reaches only through a bridge.
func (id hostID) closed(ps []string) []string {
	var out []string
	for _, p := range ps {
		if id.closedAbove(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// blocked names what keeps the account from reading p: the topmost directory above it that it
// cannot search, or p itself (read, and search for a directory); "" when nothing does.
func (id hostID) blocked(p string) string {
	if d := id.closedAbove(p); d != "" {
		return d
	}
	fi, err := os.Stat(p)
	if err != nil {
		return p
	}
	want := uint32(4)
	if fi.IsDir() {
		want = 5
	}
	if !id.may(fi, want) {
		return p
	}
	return ""
}
