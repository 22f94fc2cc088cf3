package benchrun_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/lab/benchrun"
)

// What code in a workspace can put where the bench's journal goes: each is refused, saying
// what it is, at once, and a file outside the workspace is never written.
func TestAttackJournal(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "host-file")
	if err := os.WriteFile(outside, []byte("host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, says string
		plant      func(p string) error
	}{
		{"symlink", "symbolic link", func(p string) error { return os.Symlink(outside, p) }},
		{"fifo", "a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o666) }},
		{"directory", "a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"hardlink", "hard links", func(p string) error { return os.Link(outside, p) }},
		{"huge", "more than", func(p string) error {
			f, err := os.Create(p)
			if err == nil {
				err = f.Truncate(benchrun.MaxJournal + 1)
				f.Close()
			}
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.Mkdir(filepath.Join(ws, benchrun.Dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(filepath.Join(ws, benchrun.Dir, benchrun.Journal)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			begin := time.Now()
			if _, err := benchrun.Open(ctx, ws); err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Open: %v, want an error saying %q", err, c.says)
			}
			s, err := benchrun.Serve(ctx, ws, &benchrun.ServeOptions{Keep: true})
			if err == nil {
				s.Close()
			}
			if c.name != "huge" && (err == nil || !strings.Contains(err.Error(), c.says)) {
				t.Errorf("Serve: %v, want an error saying %q", err, c.says)
			}
			if d := time.Since(begin); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if b, _ := os.ReadFile(outside); string(b) != "host\n" {
				t.Errorf("the file outside: %q", b)
			}
		})
	}
}

// .labmate itself: a symbolic link out of the workspace, a directory anyone can write, or
// one that is not labmate's user's are not used.
func TestAttackLabmateDir(t *testing.T) {
	ctx := context.Background()
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, benchrun.Dir)); err != nil {
		t.Fatal(err)
	}
	if s, err := benchrun.Serve(ctx, ws, &benchrun.ServeOptions{Keep: true}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		if s != nil {
			s.Close()
		}
		t.Errorf("a symlinked .labmate: %v", err)
	}
	if es, _ := os.ReadDir(outside); len(es) != 0 {
		t.Errorf("written through the symlink: %v", es)
	}
	ws = t.TempDir()
	dir := filepath.Join(ws, benchrun.Dir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := benchrun.Open(ctx, ws); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("a .labmate of mode 0777: %v", err)
	}
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := benchrun.Open(ctx, ws); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("a .labmate of another uid: %v", err)
	}
}

// The bench's socket and pipes are reachable by labmate's user, or the sandbox's, alone.
func TestBenchModes(t *testing.T) {
	ws := t.TempDir()
	opts := &benchrun.ServeOptions{}
	if os.Geteuid() == 0 {
		opts.UID, opts.GID = 65534, 65534
	}
	s, err := benchrun.Serve(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{benchrun.Socket, benchrun.FIFOIn, benchrun.FIFOOut} {
		p := filepath.Join(ws, benchrun.Dir, name)
		var fi os.FileInfo
		for i := 0; i < 100; i++ { // the pipes are made by a goroutine
			if fi, err = os.Lstat(p); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %o, want 600", name, perm)
		}
		if st := fi.Sys().(*syscall.Stat_t); opts.UID > 0 && (int(st.Uid) != opts.UID || int(st.Gid) != opts.GID) {
			t.Errorf("%s: owned by %d:%d, want %d:%d", name, st.Uid, st.Gid, opts.UID, opts.GID)
		}
	}
}

// WriteJournal writes a new journal, never through what code left by that name; OpenJournal
// reads it as Open does.
func TestWriteJournalReplacesPlanted(t *testing.T) {
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "host-file")
	if err := os.WriteFile(outside, []byte("host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, benchrun.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, benchrun.Dir, benchrun.Journal)); err != nil {
		t.Fatal(err)
	}
	if _, err := benchrun.OpenJournal(ws); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("OpenJournal of a symlink: %v", err)
	}
	if err := benchrun.WriteJournal(ws, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "host\n" {
		t.Errorf("the file outside: %q", b)
	}
	r, err := benchrun.OpenJournal(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := make([]byte, 10)
	if n, _ := r.Read(b); string(b[:n]) != "{}\n" {
		t.Errorf("the journal: %q", b[:n])
	}
}
