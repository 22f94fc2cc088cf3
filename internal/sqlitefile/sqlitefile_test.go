package sqlitefile

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, "_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q, %v; want wal", mode, err)
	}
	const schema = `CREATE TABLE t (x INTEGER);`
	for range 2 { // the second run finds version 1 and leaves the file alone
		if err := Migrate(ctx, db, schema, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, db, schema, 0); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Migrate to an older version = %v; want ErrNewerSchema", err)
	}
	if err := Migrate(ctx, db, `CREATE TABLE t (x INTEGER);`, 2); err == nil {
		t.Fatal("a failing schema was stamped")
	}
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != 1 {
		t.Fatalf("after a failed migration the version is %d (%v); want 1", v, err)
	}
}
