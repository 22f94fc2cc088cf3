package python_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/python"
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
			opts := testutil.KernelOptions(t)
			opts.Workspace = t.TempDir()
			k, err := python.Start(ctx, &opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { k.Close() })
			code := "import labmate, os\ndef _evil(path):\n    " + tc.evil + "\nlabmate._save_state = _evil\nx = 1"
			if r := kerneltest.Exec(ctx, k, &kernel.Cell{Code: code}); r.Err != nil || r.Res.Status != protocol.StatusOK {
				t.Fatalf("%v %+v\n%s", r.Err, r.Res, r.Output())
			}
			done := make(chan error, 1)
			go func() {
				_, err := k.(kernel.Snapshotter).Save(ctx, filepath.Join(opts.Workspace, ".labmate", "state"))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Error("Save took a FIFO for the snapshot's data file")
				}
				t.Logf("Save: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("Save is blocked opening the FIFO the cell left for the data file")
			}
		})
	}
}

// TestAttackRestoreFIFO: a saved snapshot whose data file was replaced by a FIFO (the
// workspace is the cell's) is refused by Restore, which does not block opening it.
func TestAttackRestoreFIFO(t *testing.T) {
	ctx := context.Background()
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	k, err := python.Start(ctx, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	if r := kerneltest.Exec(ctx, k, &kernel.Cell{Code: "x = 1"}); r.Err != nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("%v %+v", r.Err, r.Res)
	}
	dir := filepath.Join(opts.Workspace, ".labmate", "state")
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
	done := make(chan error, 1)
	go func() {
		_, err := k.(kernel.Snapshotter).Restore(ctx, dir)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Restore read a FIFO as the snapshot's data file")
		}
		t.Logf("Restore: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Restore is blocked opening a FIFO planted as the data file")
	}
}

func syscallMkfifo(path string) error { return unix.Mkfifo(path, 0o644) }
