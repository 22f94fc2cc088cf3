package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestSourceChangedHostile: before each Octave cell the host looks for edited function files
// in the workspace, which a cell controls. It used to read the whole top level at once: a
// cell's 300 000 files cost the host that much memory and time before every cell. Now it reads
// at most wsScan entries, in batches, and a FIFO, a symbolic link or a workspace replaced by a
// link is never followed or opened.
func TestSourceChangedHostile(t *testing.T) {
	ws := t.TempDir()
	since := time.Now().Add(-time.Hour)
	if sourceChanged(ws, ".m", since) {
		t.Error("an empty workspace changed")
	}
	target := t.TempDir()
	if err := os.WriteFile(filepath.Join(target, "f.m"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(target, "f.m"), filepath.Join(ws, "link.m")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo.m"), 0o644); err != nil {
		t.Fatal(err)
	}
	if sourceChanged(ws, ".m", since) {
		t.Error("a symbolic link or a FIFO was taken for an edited source file")
	}
	swapped := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(target, swapped); err != nil {
		t.Fatal(err)
	}
	if sourceChanged(swapped, ".m", since) {
		t.Error("a workspace that is a symbolic link was followed")
	}
	for i := range wsScan + 10 {
		if err := os.WriteFile(filepath.Join(ws, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	begin := time.Now()
	if !sourceChanged(ws, ".m", time.Now().Add(time.Hour)) {
		t.Error("past wsScan entries: want true (the interpreter rescans on its own budget)")
	}
	t.Logf("a workspace of %d entries: %v", wsScan+12, time.Since(begin))
}
