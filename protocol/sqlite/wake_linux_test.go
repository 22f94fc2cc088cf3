package sqlite

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// walWrites wakes Tail when the store's WAL is written — created or modified, by any process
// — and not for other files of the directory.
func TestWALWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "labmate.db")
	wake, stop := walWrites(path)
	defer stop()
	if wake == nil {
		t.Skip("inotify refused here: Tail polls")
	}
	write := func(name string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("x")
		f.Close()
	}
	for _, step := range []string{"create", "modify"} {
		write("labmate.db-wal")
		select {
		case <-wake:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s the WAL: no wake within 5 s", step)
		}
	}
	time.Sleep(50 * time.Millisecond) // the events of the last write, read
	select {
	case <-wake:
	default:
	}
	for _, name := range []string{"labmate.db", "labmate.db-shm", "memory.db-wal", "labmate.db-wal.bak"} {
		write(name)
	}
	select {
	case <-wake:
		t.Error("woken by writes to other files")
	case <-time.After(200 * time.Millisecond):
	}
	stop()
	write("labmate.db-wal")
	select {
	case _, ok := <-wake:
		if ok {
			t.Error("woken after stop")
		}
	case <-time.After(200 * time.Millisecond):
	}
}
