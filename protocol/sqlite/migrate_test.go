package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/labmate/labmate/protocol/storetest"
)

// Many writers (two labmate runs and a server over one file, each killed in turn) are tested
// in package runner: TestManyWriters.

// A file of schema version 1 (one writer, no writer column) is brought to version 2 on Open,
// its messages kept: its streams have no writer, and Recover closes them.
func TestMigrateVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "labmate.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE operations (session_id TEXT NOT NULL, operation_id TEXT NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL,
			created REAL NOT NULL, updated REAL NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,
			PRIMARY KEY (session_id, operation_id))`,
		`CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, type TEXT NOT NULL,
			operation_id TEXT NOT NULL, timestamp REAL NOT NULL, payload BLOB NOT NULL, PRIMARY KEY (session_id, seq),
			FOREIGN KEY (session_id, operation_id) REFERENCES operations)`,
		`INSERT INTO operations VALUES ('s', 'op', 'exec', 'ACKNOWLEDGED', 1, 2, 1, 2)`,
		`INSERT INTO messages VALUES ('s', 1, 'm1', 'operation_request', 'op', 1, '{"kind":"exec"}')`,
		`INSERT INTO messages VALUES ('s', 2, 'm2', 'operation_ack', 'op', 2, '{"state":"ACKNOWLEDGED"}')`,
		`PRAGMA user_version = 1`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := open(t, path)
	defer s.Close()
	if _, ok := s.Writer(ctx, "s", "op"); ok {
		t.Error("a stream of a version 1 file has a writer")
	}
	if ids, err := s.Recover(ctx, nil); err != nil || len(ids) != 1 {
		t.Fatalf("Recover = %v, %v; want op closed", ids, err)
	}
	if n, err := storetest.Consistent(ctx, s); err != nil || n != 3 {
		t.Errorf("Consistent = %d, %v; want 3 messages", n, err)
	}
}
