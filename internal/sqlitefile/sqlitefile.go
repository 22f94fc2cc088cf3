// Package sqlitefile opens labmate's SQLite files the same way everywhere: the pure-Go
// modernc.org/sqlite driver, WAL journal, a busy timeout, and a schema version kept in
// PRAGMA user_version.
package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// ErrNewerSchema is returned by Migrate for a file written by a newer labmate.
var ErrNewerSchema = errors.New("the file has a newer schema than this labmate knows")

// Open opens the SQLite file at path (created when missing; its directory must exist) in WAL
// mode with synchronous=NORMAL and a 10 s busy timeout. params are extra DSN parameters such as
// "_pragma=foreign_keys(1)" or "_txlock=immediate".
func Open(path string, params ...string) (*sql.DB, error) {
	q := append([]string{"_pragma=busy_timeout(10000)", "_pragma=journal_mode(WAL)", "_pragma=synchronous(NORMAL)"}, params...)
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+strings.Join(q, "&"))
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return db, nil
}

// Migrate creates schema and stamps it with version in one transaction when the file is new,
// does nothing when the file already has version, and refuses a newer one.
func Migrate(ctx context.Context, db *sql.DB, schema string, version int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	switch {
	case v == version:
		return nil
	case v > version:
		return fmt.Errorf("%w (version %d; this labmate knows %d)", ErrNewerSchema, v, version)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("creating the schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
		return err
	}
	return tx.Commit()
}
