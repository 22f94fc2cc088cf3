package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// pin is a job's workspace as Submit found it: its path with no symbolic link left in it, and
// the directory's device and inode. A cell may replace the workspace, or a directory above
// it, with a symbolic link while the job waits in the queue; start opens the path again
// without following any link and refuses a directory that is not the one submitted, and the
// job's first instruction in the sandbox checks the directory mounted there once more.
type pin struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
}

// openDir opens the directory path without following a symbolic link anywhere in it
// (RESOLVE_NO_SYMLINKS), and without blocking.
func openDir(path string) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// pinWorkspace records the directory ws is, opened without following a symbolic link
// anywhere in its path: a path that goes through one is refused, not resolved. Resolving here
// would be a second look after the caller's: a confined submit_job checks that the directory
// it names lies inside the session's workspace, and a cell exchanging that directory with a
// link to /etc between the two looks had the job pinned to /etc, which labmate as root then
// gave to the sandbox's account and ran the job in. A caller resolves the path once, checks
// that, and submits the resolved path (the CLI resolves its user's).
func pinWorkspace(ws string) (*pin, error) {
	if !filepath.IsAbs(ws) {
		return nil, fmt.Errorf("%q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	fd, err := openDir(ws)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return nil, fmt.Errorf("%s goes through a symbolic link: name the directory by its own path, with no link in it", ws)
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	return &pin{Path: ws, Dev: st.Dev, Ino: st.Ino}, nil
}

// errReplaced says that a job's workspace is no longer the directory submitted.
var errReplaced = errors.New("is not the directory the job was submitted with: it, or a directory above it, was replaced (by a symbolic link or another directory) since; the job is not started there")

// check opens p's path again as Submit did and returns the open directory when it is still
// the one submitted. The caller closes it.
func (p *pin) check() (int, error) {
	fd, err := openDir(p.Path)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
			return -1, fmt.Errorf("job workspace %s %w", p.Path, errReplaced)
		}
		return -1, fmt.Errorf("job workspace: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("job workspace: %w", err)
	}
	if st.Dev != p.Dev || st.Ino != p.Ino {
		unix.Close(fd)
		return -1, fmt.Errorf("job workspace %s %w", p.Path, errReplaced)
	}
	return fd, nil
}

// labmateDir makes the directory .labmate in the open workspace dir, unless it is there: a
// top-level dot-entry that exists when the sandbox starts is mounted read-only inside it, so
// the job cannot make it (and plant what labmate's host side later reads there, the bench's
// journal). Something else by that name (a file, a symbolic link) is left alone: the bench
// refuses to use it.
func labmateDir(dir int) {
	_ = unix.Mkdirat(dir, ".labmate", 0o755)
}

// preamble is the script that starts a job inside the sandbox: it checks that the directory
// mounted at the workspace ($1) is the one submitted (device:inode $2), exports the job's own
// environment (the NAME=value words up to --), and execs the command. The job's environment
// is so set inside the sandbox only, never on a process of the host (the recorder, the
// sandbox's wrappers), and a workspace replaced between start's check and the sandbox's mount
// runs nothing.
const preamble = `ws=$1 want=$2; shift 2
got=$(stat -c %d:%i -- "$ws") || exit 125
if [ "$got" != "$want" ]; then echo "labmate: the job's workspace $ws is not the directory it was submitted with (replaced since): not running the job" >&2; exit 125; fi
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do export "$1"; shift; done; shift
exec "$@"`

// preambled is argv behind the preamble, with env (NAME=value words) exported.
func preambled(p *pin, env, argv []string) []string {
	out := []string{"/bin/sh", "-c", preamble, "labmate-job", p.Path, strconv.FormatUint(p.Dev, 10) + ":" + strconv.FormatUint(p.Ino, 10)}
	out = append(append(out, env...), "--")
	return append(out, argv...)
}
