package operation

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// OpenRootNoLinks opens the directory dir as an os.Root, refusing a path with a symbolic link
// anywhere in it (openat2 with RESOLVE_NO_SYMLINKS): a directory that code replaced, or whose
// parent it replaced, with a symbolic link since it was made is not opened. Inside the root,
// os.Root keeps every open beneath it.
func OpenRootNoLinks(dir string) (*os.Root, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	return os.OpenRoot("/proc/self/fd/" + strconv.Itoa(fd))
}
