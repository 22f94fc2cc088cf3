package kerneltest

import (
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// SnapLang is the code the snapshot suite runs.
type SnapLang struct {
	Lang
	// Set defines variables: Saved are the names it defines that must be saved, Skipped the
	// ones that cannot be (each reported with a reason containing its Skipped entry).
	Set     string
	Saved   []string
	Skipped map[string]string
	// Check prints "OK" alone on a line when the Saved variables hold the values Set gave them.
	Check string
}

// Snapshots is the suite of a kernel.Snapshotter: variables survive the end of the session
// and come back in a new one, what cannot be saved is reported, a truncated, corrupt or
// unreadable snapshot is a clear error that leaves the session working, and a save never
// leaves more than one snapshot behind.
func Snapshots(t *testing.T, l SnapLang, opts kernel.Options) {
	ctx := context.Background()
	start := func(t *testing.T, ws string) (kernel.Kernel, kernel.Snapshotter) {
		t.Helper()
		o := opts
		o.Workspace = ws
		k, err := l.Start(ctx, &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Close() })
		s, ok := k.(kernel.Snapshotter)
		if !ok {
			t.Fatalf("%T is not a kernel.Snapshotter", k)
		}
		return k, s
	}
	run := func(t *testing.T, k kernel.Kernel, code string) *Result {
		t.Helper()
		r := Exec(ctx, k, &kernel.Cell{Code: code})
		if r.Err != nil || r.Res == nil || r.Res.Status != protocol.StatusOK {
			t.Fatalf("cell %q: %v %+v\n%s", code, r.Err, r.Res, r.Output())
		}
		return r
	}
	// saved starts a session in a new workspace, runs Set and saves it in ws/.labmate/state.
	saved := func(t *testing.T) (ws, dir string, snap *kernel.Snapshot) {
		t.Helper()
		ws = t.TempDir()
		dir = filepath.Join(ws, ".labmate", "state")
		k, s := start(t, ws)
		run(t, k, l.Set)
		snap, err := s.Save(ctx, dir)
		if err != nil {
			t.Fatalf("Save: %v", err)
		}
		k.Close()
		return ws, dir, snap
	}
	check := func(t *testing.T, snap *kernel.Snapshot) {
		t.Helper()
		for _, name := range l.Saved {
			if !slices.Contains(snap.Saved, name) {
				t.Errorf("%s is not among the saved %q", name, snap.Saved)
			}
		}
		got := map[string]string{}
		for _, s := range snap.Skipped {
			got[s.Name] = s.Reason
		}
		for name, want := range l.Skipped {
			if !strings.Contains(got[name], want) {
				t.Errorf("%s skipped for %q, want a reason with %q (skipped: %+v)", name, got[name], want, snap.Skipped)
			}
			if slices.Contains(snap.Saved, name) {
				t.Errorf("%s is both saved and skipped", name)
			}
		}
	}

	t.Run("SurvivesANewSession", func(t *testing.T) {
		ws, dir, snap := saved(t)
		check(t, snap)
		k, s := start(t, ws) // the snapshot directory is now read-only inside the sandbox
		back, err := s.Restore(ctx, dir)
		if err != nil {
			t.Fatalf("Restore: %v", err)
		}
		check(t, back)
		if r := run(t, k, l.Check); !slices.Contains(r.Stdout, "OK") {
			t.Errorf("the restored variables are wrong:\n%s", r.Output())
		}
		// The new session saves again, over the old snapshot: one data file, no leftovers.
		if _, err := s.Save(ctx, dir); err != nil {
			t.Fatalf("second Save: %v", err)
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if len(names) != 2 || !slices.Contains(names, "snapshot.json") {
			t.Errorf("the snapshot directory holds %q, want snapshot.json and one data file", names)
		}
		top, _ := os.ReadDir(ws) // the interpreter's temporary file was moved away
		for _, e := range top {
			if strings.HasPrefix(e.Name(), "labmate-snapshot") {
				t.Errorf("%s was left in the workspace", e.Name())
			}
		}
	})

	damaged := []struct {
		name, want string
		damage     func(t *testing.T, dir string)
	}{
		{"Truncated", "is truncated", func(t *testing.T, dir string) {
			p, m := dataFile(t, dir)
			if err := os.Truncate(p, m.Size/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"Corrupt", "is corrupt", func(t *testing.T, dir string) {
			p, m := dataFile(t, dir)
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("garbage"), m.Size/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"Unreadable", "could not load it", func(t *testing.T, dir string) {
			// Garbage with a matching checksum: only the interpreter can tell.
			p, _ := dataFile(t, dir)
			if err := os.WriteFile(p, []byte(strings.Repeat("not a snapshot ", 100)), 0o644); err != nil {
				t.Fatal(err)
			}
			m := &kernel.Snapshot{}
			b, _ := os.ReadFile(filepath.Join(dir, "snapshot.json"))
			json.Unmarshal(b, m)
			m.Size, m.CRC32C = crcOf(t, p)
			b, _ = json.Marshal(m)
			if err := os.WriteFile(filepath.Join(dir, "snapshot.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"BadManifest", "snapshot.json", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "snapshot.json"), []byte("{\"kernel\": "), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, d := range damaged {
		t.Run(d.name, func(t *testing.T) {
			ws, dir, _ := saved(t)
			d.damage(t, dir)
			k, s := start(t, ws)
			run(t, k, l.SetA)
			_, err := s.Restore(ctx, dir)
			if !errors.Is(err, kernel.ErrBadSnapshot) || !strings.Contains(err.Error(), d.want) {
				t.Fatalf("Restore: %v; want ErrBadSnapshot saying %q", err, d.want)
			}
			if r := run(t, k, l.PrintA); !slices.Contains(r.Stdout, "42") {
				t.Errorf("the session did not survive the bad snapshot:\n%s", r.Output())
			}
			t.Log(err)
		})
	}

	// The code can plant symlinks in the workspace: the host must never follow one out of it,
	// neither to write a snapshot (a file of the code's bytes in /etc/cron.d) nor to read one.
	t.Run("SymlinkOutOfTheWorkspace", func(t *testing.T) {
		_, outDir, _ := saved(t) // a real snapshot, outside the next workspace
		ws, outside := t.TempDir(), filepath.Dir(outDir)
		if err := os.Symlink(outside, filepath.Join(ws, ".labmate")); err != nil {
			t.Fatal(err)
		}
		_, s := start(t, ws)
		if _, err := s.Restore(ctx, filepath.Join(ws, ".labmate", "state")); err == nil {
			t.Error("Restore read a snapshot through a symlink out of the workspace")
		}
		before, _ := os.ReadDir(outDir)
		if _, err := s.Save(ctx, filepath.Join(ws, ".labmate", "other")); err == nil {
			t.Error("Save wrote through a symlink out of the workspace")
		}
		if _, err := s.Save(ctx, filepath.Join(ws, ".labmate", "state")); err == nil {
			t.Error("Save wrote through a symlink out of the workspace")
		}
		after, _ := os.ReadDir(outDir)
		if entries, _ := os.ReadDir(outside); len(entries) != 1 || len(after) != len(before) {
			t.Errorf("the directory outside the workspace changed: %v, %v → %v", entries, before, after)
		}
	})

	t.Run("NoSnapshot", func(t *testing.T) {
		ws := t.TempDir()
		_, s := start(t, ws)
		if _, err := s.Restore(ctx, filepath.Join(ws, ".labmate", "state")); !errors.Is(err, kernel.ErrNoSnapshot) {
			t.Errorf("Restore of nothing: %v; want ErrNoSnapshot", err)
		}
		if _, err := s.Save(ctx, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not inside the workspace") {
			t.Errorf("Save outside the workspace: %v", err)
		}
	})
}

// dataFile is the snapshot's data file in dir and its manifest.
func dataFile(t *testing.T, dir string) (string, *kernel.Snapshot) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := &kernel.Snapshot{}
	if err := json.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, m.File), m
}

// crcOf is the length and CRC-32C of the file at p.
func crcOf(t *testing.T, p string) (int64, uint32) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(b)), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
}
