package locallog

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labmate/labmate/protocol"
)

// A run another open log is writing is refused, naming its pid; once that log is closed
// (its process died) the run is taken, ended as process_died and resumed; a server (Open(data, "serve"))
// beside the run appends to and reads the same file all the while, and Runs.Owner tells it who runs
// the run.
func TestOwnRun(t *testing.T) {
	data := t.TempDir()
	ctx := context.Background()
	srv, err := Open(data, "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	owner := Runs{Log: srv}.Owner
	if _, found, live := owner("r"); found || live {
		t.Errorf("a run nobody started: found %v, live %v", found, live)
	}

	first, release, err := OwnRun(data, "r", "labmate run --resume r", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := protocol.NewMessage(protocol.TypeRunEvent, "r", "r", map[string]any{"type": "run_start"})
	if m, err := first.log.Append(ctx, ev); err != nil || m.Seq != 1 {
		t.Fatalf("Append: %v, %v", m, err)
	}
	if err := first.log.Sync(ctx); err != nil { // committed within a millisecond anyway
		t.Fatal(err)
	}
	if pid, found, live := owner("r"); !found || !live || pid != os.Getpid() {
		t.Errorf("a run being run: pid %d, found %v, live %v; want %d, true, true", pid, found, live, os.Getpid())
	}
	if _, _, err := OwnRun(data, "r", "", io.Discard); err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("running a run another process runs: %v, want a refusal naming its pid", err)
	}
	// The server appends to a session of its own meanwhile.
	req, _ := protocol.NewMessage(protocol.TypeRequest, "s", "op", protocol.Request{Kind: "exec"})
	if m, err := srv.Append(ctx, req); err != nil || m.Seq != 1 {
		t.Fatalf("the server's Append: %v, %v", m, err)
	}
	release() // as a kill -9 would: the lock goes

	if pid, found, live := owner("r"); !found || live || pid != os.Getpid() {
		t.Errorf("a run whose process stopped: pid %d, found %v, live %v; want %d, true, false", pid, found, live, os.Getpid())
	}
	second, release, err := OwnRun(data, "r", "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if next, err := Resumed(ctx, second.log, "r", "test"); err != nil || next != 4 {
		t.Fatalf("Resumed: %d, %v; want 4", next, err)
	}
	if err := second.log.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	var types []protocol.Type
	for m, err := range srv.After(ctx, "r", 0) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, m.Type)
	}
	if want := []protocol.Type{protocol.TypeRunEvent, protocol.TypeRunEnd, protocol.TypeRunResume}; !slices.Equal(types, want) {
		t.Errorf("the stream: %v, want %v", types, want)
	}
	if _, err := Resumed(ctx, second.log, "new", "test"); err != nil {
		t.Errorf("resuming a run the log does not have: %v", err)
	}
}

// A data directory whose log is missing or still empty (a writer is creating it) has had
// nothing run there yet, and its reader says so; a file that is not a log is refused naming it.
func TestOpenReadOnlyNothingYet(t *testing.T) {
	data := t.TempDir()
	for _, content := range []string{"", "-", "not a database, some text"} {
		if content != "-" {
			if err := os.WriteFile(filepath.Join(data, File), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, err := OpenReadOnly(data)
		nothing := err != nil && strings.Contains(err.Error(), "nothing ran there yet") && errors.Is(err, fs.ErrNotExist)
		if want := content != "not a database, some text"; nothing != want || err == nil || !strings.Contains(err.Error(), data) {
			t.Errorf("log %q: %v; want an error naming %s, nothing ran there yet: %v", content, err, data, want)
		}
		os.Remove(filepath.Join(data, File))
	}
}
