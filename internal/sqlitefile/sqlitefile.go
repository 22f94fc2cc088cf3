// Package sqlitefile opens labmate's SQLite files the same way everywhere: the pure-Go
// modernc.org/sqlite driver, WAL journal, a busy timeout, and a schema version kept in
// PRAGMA user_version; and retires a file whose content moved to another store (Adopt, Retire).
package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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

// Adopt takes the SQLite file at path, with its journal, aside for a one-time import into
// another store: renamed to path+".importing" while this process holds a lock on its
// directory, so that of several processes one imports it; a file an import cut short left
// there is taken up again. taken is "" when there is nothing to import; release drops the
// lock (after Retire).
func Adopt(path string) (taken string, release func(), err error) {
	taken = path + ".importing"
	if !exists(path) && !exists(taken) {
		return "", func() {}, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	release = func() { dir.Close() } // closing the directory drops its lock
	if err := syscall.Flock(int(dir.Fd()), syscall.LOCK_EX); err != nil {
		release()
		return "", nil, fmt.Errorf("locking %s to import %s: %w", dir.Name(), path, err)
	}
	for _, sfx := range []string{"-wal", ""} { // the journal first: the file is complete with it
		if err := os.Rename(path+sfx, taken+sfx); err != nil && !errors.Is(err, fs.ErrNotExist) {
			release()
			return "", nil, fmt.Errorf("taking %s aside to import it: %w", path, err)
		}
	}
	os.Remove(path + "-shm")
	if !exists(taken) { // another process imported it meanwhile
		release()
		return "", func() {}, nil
	}
	return taken, release, nil
}

// Retire puts a file Adopt took aside, once imported, at path+".imported" with note in
// path+".imported.txt" beside it: kept for reference, never read again.
func Retire(taken, path, note string) error {
	for _, sfx := range []string{"-wal", "-shm"} {
		os.Remove(taken + sfx) // a closed database has folded its journal in
	}
	if err := os.WriteFile(path+".imported.txt", []byte(note), 0o600); err != nil {
		return fmt.Errorf("retiring %s: %w", path, err)
	}
	if err := os.Rename(taken, path+".imported"); err != nil {
		return fmt.Errorf("retiring %s: %w", path, err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
