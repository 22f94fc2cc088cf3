package operation_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/labmate/labmate/operation"
)

// A workspace replaced by a symbolic link (to a directory outside), or reached through one, is
// not opened; the directory itself is, and the root stays in it.
func TestOpenRootNoLinks(t *testing.T) {
	parent, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := operation.OpenRootNoLinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Open("link"); err == nil {
		t.Error("the root followed a symlink out of it")
	}
	r.Close()
	if err := os.Rename(ws, ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, ws); err != nil {
		t.Fatal(err)
	}
	if r, err := operation.OpenRootNoLinks(ws); err == nil {
		r.Close()
		t.Error("a workspace swapped for a symlink was opened")
	}
	if err := os.Symlink(parent, filepath.Join(outside, "up")); err != nil {
		t.Fatal(err)
	}
	if r, err := operation.OpenRootNoLinks(filepath.Join(outside, "up", "ws.old")); err == nil {
		r.Close()
		t.Error("a workspace reached through a symlink was opened")
	}
}
