package python_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/protocol"
	"golang.org/x/sys/unix"
)

// TestAttackSnapshotFIFO: a cell replaces the function labmate's save cell calls, so that the
// save leaves a FIFO (or a symlink to one) where the host expects the data file. The host,
// which checksums that file after the cell, must not block in open(2) — no context could end
// that wait, and the agent saves after every operation — but refuse it, in either form, and
// restore nothing from a FIFO planted in a saved snapshot either.
func TestAttackSnapshotFIFO(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, evil string }{
		{"FIFO", `os.mkfifo(path)`},
		{"SymlinkToFIFO", `os.mkfifo("pipe"); os.symlink("pipe", path)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, ws := startKernel(t)
			code := "import labmate, os\ndef _evil(path):\n    " + tc.evil + "\nlabmate._save_state = _evil\nx = 1"
			if r := kerneltest.Exec(ctx, k, &kernel.Cell{Code: code}); r.Err != nil || r.Res.Status != protocol.StatusOK {
				t.Fatalf("%v %+v\n%s", r.Err, r.Res, r.Output())
			}
			noBlock(t, "Save", "a FIFO for the snapshot's data file", func() error {
				_, err := k.(kernel.Snapshotter).Save(ctx, filepath.Join(ws, ".labmate", "state"))
				return err
			})
		})
	}
}

// TestAttackRestoreFIFO: a saved snapshot whose data file was replaced by a FIFO (the
// workspace is the cell's) is refused by Restore, which does not block opening it.
func TestAttackRestoreFIFO(t *testing.T) {
	ctx := context.Background()
	k, ws := startKernel(t)
	if r := kerneltest.Exec(ctx, k, &kernel.Cell{Code: "x = 1"}); r.Err != nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("%v %+v", r.Err, r.Res)
	}
	dir := filepath.Join(ws, ".labmate", "state")
	snap, err := k.(kernel.Snapshotter).Save(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, snap.File)
	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	if err := syscallMkfifo(data); err != nil {
		t.Fatal(err)
	}
	noBlock(t, "Restore", "a FIFO planted as the snapshot's data file", func() error {
		_, err := k.(kernel.Snapshotter).Restore(ctx, dir)
		return err
	})
}

func syscallMkfifo(path string) error { return unix.Mkfifo(path, 0o644) }

// noBlock fails the test unless f (what, given evil) returns an error within 30 s.
func noBlock(t *testing.T, what, evil string, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("%s took %s", what, evil)
		}
		t.Logf("%s: %v", what, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s is blocked opening %s", what, evil)
	}
}
