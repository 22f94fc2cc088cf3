package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/protocol/storetest"
)

func TestMain(m *testing.M) {
	if role, path, ok := strings.Cut(os.Getenv(crashEnv), ":"); ok {
		crashChild(role, path) // does not return
	}
	os.Exit(m.Run())
}

func open(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) protocol.Store {
		return open(t, filepath.Join(t.TempDir(), "store.db"))
	})
}

// TestStoreReopened runs the suite on a store that closes and reopens its file before every
// read: what a restarted server finds is everything that was appended.
func TestStoreReopened(t *testing.T) {
	storetest.Run(t, func(t *testing.T) protocol.Store {
		path := filepath.Join(t.TempDir(), "store.db")
		return &reopening{path: path, s: open(t, path)}
	})
}

// reopening is a protocol.Store that reopens its file before every read.
type reopening struct {
	path string

	mu     sync.RWMutex // held for reading by appends and reads, for writing by reopen
	s      *sqlite.Store
	closed bool
}

// reopen closes and reopens the file, unless the store was closed, and returns the store locked
// for reading.
func (r *reopening) reopen() (*sqlite.Store, error) {
	r.mu.Lock()
	if !r.closed {
		if err := r.s.Close(); err != nil {
			r.mu.Unlock()
			return nil, err
		}
		s, err := sqlite.Open(r.path)
		if err != nil {
			r.closed = true
			r.mu.Unlock()
			return nil, err
		}
		r.s = s
	}
	r.mu.Unlock()
	r.mu.RLock()
	return r.s, nil
}

func (r *reopening) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.s.Append(ctx, m)
}

func (r *reopening) read(seq func(s *sqlite.Store) iter.Seq2[*protocol.EnhancedMessage, error]) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		s, err := r.reopen()
		if err != nil {
			yield(nil, err)
			return
		}
		defer r.mu.RUnlock()
		for m, err := range seq(s) {
			if !yield(m, err) {
				return
			}
		}
	}
}

func (r *reopening) After(ctx context.Context, sessionID string, after int64) iter.Seq2[*protocol.EnhancedMessage, error] {
	return r.read(func(s *sqlite.Store) iter.Seq2[*protocol.EnhancedMessage, error] {
		return s.After(ctx, sessionID, after)
	})
}

func (r *reopening) Operation(ctx context.Context, sessionID, operationID string) iter.Seq2[*protocol.EnhancedMessage, error] {
	return r.read(func(s *sqlite.Store) iter.Seq2[*protocol.EnhancedMessage, error] {
		return s.Operation(ctx, sessionID, operationID)
	})
}

func (r *reopening) Sessions(ctx context.Context) ([]protocol.SessionInfo, error) {
	s, err := r.reopen()
	if err != nil {
		return nil, err
	}
	defer r.mu.RUnlock()
	return s.Sessions(ctx)
}

func (r *reopening) Operations(ctx context.Context, sessionID string) ([]protocol.OperationInfo, error) {
	s, err := r.reopen()
	if err != nil {
		return nil, err
	}
	defer r.mu.RUnlock()
	return s.Operations(ctx, sessionID)
}

func (r *reopening) Recover(ctx context.Context, keep func(sessionID, operationID string) bool) ([]string, error) {
	s, err := r.reopen()
	if err != nil {
		return nil, err
	}
	defer r.mu.RUnlock()
	return s.Recover(ctx, keep)
}

func (r *reopening) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.s.Close()
}

func TestOpenBadInput(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database\n", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	newer := filepath.Join(dir, "newer.db")
	for path, stmt := range map[string]string{
		foreign: "CREATE TABLE t (x)",
		newer:   "PRAGMA user_version = 99",
	} {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}

	tests := []struct {
		name string
		path string
		is   error  // when not nil, the error wraps it
		want string // and says this
	}{
		{"missing directory", filepath.Join(dir, "missing", "store.db"), fs.ErrNotExist, "no such file or directory"},
		{"not SQLite", notDB, nil, "not a database"},
		{"a directory", dir, nil, "is a directory"},
		{"another SQLite database", foreign, nil, "not a labmate store"},
		{"newer schema", newer, sqlite.ErrNewerSchema, "version 99"},
	}
	for _, tt := range tests {
		s, err := sqlite.Open(tt.path)
		if err == nil {
			s.Close()
			t.Errorf("%s: Open(%s) succeeded", tt.name, tt.path)
			continue
		}
		if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) ||
			(tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("%s: Open error %q does not name the file, say %q or wrap %v", tt.name, err, tt.want, tt.is)
		}
	}
	if s, err := sqlite.OpenReadOnly(dir); err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "is a directory") {
		if s != nil {
			s.Close()
		}
		t.Errorf("OpenReadOnly of a directory: %v, want an error naming it and saying it is a directory", err)
	}
}

// TestOpenReadOnlyDirectory opens a store, new and existing, in a directory nobody may write to.
func TestOpenReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	writeOne(t, existing)
	readOnly(t, dir)

	for _, path := range []string{filepath.Join(dir, "new.db"), existing} {
		s, err := sqlite.Open(path)
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) in a read-only directory succeeded", path)
			continue
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("Open error %q does not name the file", err)
		}
		t.Logf("Open(%s): %v", filepath.Base(path), err)
	}
}

// readOnly makes dir (a directory or a file) read-only for this process until the test ends. Permissions do not bind
// root, so root makes it immutable.
func readOnly(t *testing.T, dir string) {
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot make a directory read-only for root: chattr +i: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("chattr", "-i", dir).CombinedOutput(); err != nil {
			t.Errorf("chattr -i %s: %v: %s", dir, err, out)
		}
	})
}

// TestWriteFailure breaks the file under the store: the terminal append that cannot be
// committed fails, and so does every append after it, since seqs were handed out for what is lost.
func TestWriteFailure(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path)
	appendMsg := func(op string, typ protocol.Type) error {
		_, err := s.Append(ctx, &protocol.EnhancedMessage{Type: typ, SessionID: "s1", OperationID: op, Payload: json.RawMessage(`{}`)})
		return err
	}
	for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart} {
		if err := appendMsg("a", typ); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Operations(ctx, "s1"); err != nil { // commits them
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP TABLE messages"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	if err := appendMsg("a", protocol.TypeComplete); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("terminal Append on a broken file = %v, want an error naming the file", err)
	}
	if err := appendMsg("b", protocol.TypeRequest); err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Errorf("Append after a failed write = %v, want the write error", err)
	}
	if err := s.Close(); err == nil {
		t.Error("Close after a failed write = nil, want the write error")
	}
}

// A reader beside the writer sees what the writer committed and can write nothing.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	if _, err := sqlite.OpenReadOnly(path); err == nil {
		t.Error("OpenReadOnly of no file worked")
	}
	w := open(t, path)
	defer w.Close()
	for _, typ := range []protocol.Type{protocol.TypeRunEvent, protocol.TypeRunEvent, protocol.TypeRunEnd} {
		m, _ := protocol.NewMessage(typ, "s", "r", map[string]any{"reason": "error"})
		if _, err := w.Append(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	r, err := sqlite.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for _, err := range r.After(ctx, "s", 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Errorf("the reader read %d messages, want 3", n)
	}
	if ops, err := r.Operations(ctx, "s"); err != nil || len(ops) != 1 || ops[0].State != protocol.Ended {
		t.Errorf("the reader's Operations: %+v, %v", ops, err)
	}
	m, _ := protocol.NewMessage(protocol.TypeRunEvent, "s2", "r", map[string]any{})
	if _, err := r.Append(ctx, m); !errors.Is(err, sqlite.ErrReadOnly) {
		t.Errorf("Append of the reader: %v, want ErrReadOnly", err)
	}
	if _, err := r.Recover(ctx, nil); !errors.Is(err, sqlite.ErrReadOnly) {
		t.Errorf("Recover of the reader: %v, want ErrReadOnly", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close of the reader: %v", err)
	}
}

// A store file this process may not write is refused by Open, naming it (SQLite opened it
// read-only, silently, and the first append failed), and read by OpenReadOnly.
func TestOpenReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "labmate.db")
	writeOne(t, path)
	readOnly(t, path)
	if s, err := sqlite.Open(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "may not write") {
		if s != nil {
			s.Close()
		}
		t.Errorf("Open of a read-only store: %v, want an error naming it and saying it cannot be written", err)
	}
	r, err := sqlite.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ss, err := r.Sessions(context.Background()); err != nil || len(ss) != 1 {
		t.Errorf("OpenReadOnly of a read-only store: %v %v", ss, err)
	}
}

// writeOne makes a store at path holding one operation_request (session s1, operation a).
func writeOne(t *testing.T, path string) {
	t.Helper()
	s := open(t, path)
	if _, err := s.Append(context.Background(), &protocol.EnhancedMessage{
		Type: protocol.TypeRequest, SessionID: "s1", OperationID: "a", Payload: json.RawMessage(`{"kind":"exec"}`),
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
