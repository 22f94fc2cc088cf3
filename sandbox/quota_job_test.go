package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
)

// WatchQuota, for a process that outlives the command's Sandbox: growth past the limit since
// the base is reported once, as kernel.ErrQuota naming the workspace; what the workspace held
// before (the base) and its read-only dot-entries do not count.
func TestWatchQuota(t *testing.T) {
	ws := t.TempDir()
	fill := func(name string, mib int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), make([]byte, mib<<20), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fill("before.dat", 4)
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil { // there at the start: read-only in the sandbox
		t.Fatal(err)
	}
	base, ok := WorkspaceBytes(ws, 0)
	if !ok || base < 4<<20 {
		t.Fatalf("WorkspaceBytes %d, %v: want at least the 4 MiB written", base, ok)
	}
	breaches := make(chan error, 4)
	stop := WatchQuota(&QuotaWatch{Workspace: ws, Limit: 2 << 20, Base: base, Breach: func(err error) { breaches <- err }})
	defer stop()
	fill(".git/objects.dat", 3) // not counted: the sandbox cannot write there
	fill("small.dat", 1)
	select {
	case err := <-breaches:
		t.Fatalf("a breach within the quota: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	fill("big.dat", 2)
	select {
	case err := <-breaches:
		if !errors.Is(err, kernel.ErrQuota) || !strings.Contains(err.Error(), "3 MiB of 2 MiB written to the workspace "+ws) {
			t.Errorf("breach: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no breach 10 s after the workspace grew 3 MiB past a 2 MiB quota")
	}
	fill("more.dat", 2)
	select {
	case err := <-breaches:
		t.Errorf("a second breach reported: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}
