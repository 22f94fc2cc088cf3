package benchrun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// MaxJournal is the largest journal Open replays (64 MiB, some 300 000 commands): a larger
// one is an error rather than minutes of replay.
const MaxJournal = 64 << 20

// benchDir is a workspace's .labmate, open: everything labmate reads and writes there goes
// through this descriptor, never through a path a cell could have turned into a symbolic
// link. Sandboxed code runs in the workspace and can make any name there a symbolic link, a
// FIFO, a directory or a huge file, and labmate's host side often runs as root.
type benchDir struct {
	fd   int
	path string // for messages
}

// errNoDir is openBenchDir's answer when .labmate is not there and create is false.
var errNoDir = errors.New("no .labmate directory")

// openBenchDir opens ws/.labmate, making it first with create. It must be a directory (not a
// symbolic link), owned by labmate's user and writable by nobody else: one that sandboxed
// code made (owned by the sandbox's user) is refused, as what it holds is the code's.
func openBenchDir(ws string, create bool) (*benchDir, error) {
	path := filepath.Join(ws, Dir)
	wsfd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("the workspace %s: %w", ws, err)
	}
	defer unix.Close(wsfd)
	if create {
		if err := unix.Mkdirat(wsfd, Dir, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	fd, err := unix.Openat(wsfd, Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, errNoDir
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return nil, fmt.Errorf("%s is not a directory (a symbolic link or another file, which code in the workspace put there): labmate does not use it", path)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int(st.Uid) != os.Geteuid() {
		unix.Close(fd)
		return nil, fmt.Errorf("%s belongs to uid %d, not to labmate's uid %d: code in the workspace made it, and labmate does not use it (remove it)", path, st.Uid, os.Geteuid())
	}
	if st.Mode&0o022 != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("%s is writable by others (mode %o): labmate does not use it", path, st.Mode&0o7777)
	}
	return &benchDir{fd: fd, path: path}, nil
}

func (d *benchDir) close() { unix.Close(d.fd) }

// proc is the name's path through the open directory (/proc/self/fd/N/name): short, whatever
// the workspace's path, and resolved through the directory labmate checked.
func (d *benchDir) proc(name string) string {
	return "/proc/self/fd/" + strconv.Itoa(d.fd) + "/" + name
}

// remove removes name from the directory, unless it is a directory.
func (d *benchDir) remove(name string) { _ = unix.Unlinkat(d.fd, name, 0) }

// openFile opens name in the directory without following a symbolic link and without
// blocking (a FIFO cannot hang the open), and insists on a regular file with one link (not a
// hard link to a file elsewhere). flags are O_RDONLY, or O_WRONLY|O_APPEND|O_CREAT.
func (d *benchDir) openFile(name string, flags int) (*os.File, error) {
	path := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0o644)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link, which code in the workspace put there: labmate does not follow it", path)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("%s is not a regular file (%s), which code in the workspace put there: labmate does not use it", path, fileType(st.Mode))
	}
	if st.Nlink > 1 {
		unix.Close(fd)
		return nil, fmt.Errorf("%s has %d hard links: labmate does not use it", path, st.Nlink)
	}
	// Back to blocking: a regular file never blocks, and os.File then reads it plainly.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// readJournal opens the journal for replay: nil when there is none; an error when it is not
// a regular file or larger than MaxJournal.
func (d *benchDir) readJournal() (io.ReadCloser, error) {
	f, err := d.openFile(Journal, unix.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the bench's journal: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the bench's journal: %w", err)
	}
	if fi.Size() > MaxJournal {
		f.Close()
		return nil, fmt.Errorf("the bench's journal %s: %d bytes, more than the %d labmate replays", f.Name(), fi.Size(), MaxJournal)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(f, MaxJournal), f}, nil
}

func fileType(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return "not a regular file"
}

// givePath makes name in dir mode 0600, owned by uid and gid when uid is not -1.
func givePath(dir *benchDir, name string, uid, gid int) error {
	if uid != -1 {
		if err := unix.Fchownat(dir.fd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &os.PathError{Op: "chown", Path: filepath.Join(dir.path, name), Err: err}
		}
	}
	if err := unix.Fchmodat(dir.fd, name, 0o600, 0); err != nil {
		return &os.PathError{Op: "chmod", Path: filepath.Join(dir.path, name), Err: err}
	}
	return nil
}

// OpenJournal opens the journal of workspace ws for reading, as Open does (a regular file in a
// .labmate labmate made, at most MaxJournal bytes, no link followed, no FIFO waited on); an
// error wrapping os.ErrNotExist when there is none. The caller closes it.
func OpenJournal(ws string) (io.ReadCloser, error) {
	dir, err := openBenchDir(ws, false)
	if errors.Is(err, errNoDir) {
		return nil, fmt.Errorf("the bench's journal: %w", os.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("the bench: %w", err)
	}
	defer dir.close()
	r, err := dir.readJournal()
	if err == nil && r == nil {
		err = fmt.Errorf("the bench's journal: %w", os.ErrNotExist)
	}
	return r, err
}

// WriteJournal makes the journal of workspace ws anew with data (making .labmate first): the
// name is removed and created again exclusively, so nothing that code left there is written
// through.
func WriteJournal(ws string, data []byte) error {
	dir, err := openBenchDir(ws, true)
	if err != nil {
		return fmt.Errorf("the bench: %w", err)
	}
	defer dir.close()
	dir.remove(Journal)
	f, err := dir.openFile(Journal, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return fmt.Errorf("the bench's journal: %w", err)
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
