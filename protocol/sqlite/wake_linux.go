package sqlite

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
)

// walWrites returns a channel that gets a value soon after any process writes the WAL of the
// store file at path (a commit writes it), and a func that stops watching: Tail looks at once
// instead of at its next poll. The channel is nil when the directory cannot be watched (inotify
// refused: too many watches); Tail then polls alone, as it does anyway between writes.
func walWrites(path string) (<-chan struct{}, func()) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, func() {}
	}
	// The directory, not the file: the WAL is created by the first writer, and removed by the
	// last connection to close.
	if _, err := syscall.InotifyAddWatch(fd, filepath.Dir(path), syscall.IN_MODIFY|syscall.IN_CREATE); err != nil {
		syscall.Close(fd)
		return nil, func() {}
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: Read waits in the poller, Close ends it
	wal := []byte(filepath.Base(path) + "-wal")
	ch := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
		for {
			n, err := f.Read(buf)
			if err != nil {
				return
			}
			if walIn(buf[:n], wal) {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	return ch, func() { f.Close() }
}

// walIn reports whether the inotify events in b name the file wal.
func walIn(b, wal []byte) bool {
	for len(b) >= syscall.SizeofInotifyEvent {
		n := int(binary.NativeEndian.Uint32(b[12:16])) // struct inotify_event's len
		if len(b) < syscall.SizeofInotifyEvent+n {
			return false
		}
		name := bytes.TrimRight(b[syscall.SizeofInotifyEvent:syscall.SizeofInotifyEvent+n], "\x00")
		if bytes.Equal(name, wal) {
			return true
		}
		b = b[syscall.SizeofInotifyEvent+n:]
	}
	return false
}
