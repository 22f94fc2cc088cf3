// Package sqlite is the embedded, durable protocol.Store: every session's message log in one
// SQLite file (modernc.org/sqlite, pure Go), so that clients can resume after a restart and
// operations cut short by a crash can be closed.
//
// # Many writers
//
// Several processes may append to one file at once (labmate serve, labmate run, labmate exec,
// …): sequence numbers are assigned inside the write transaction (BEGIN IMMEDIATE, WAL, a busy
// timeout), from what the file holds then, and each message is validated there against its
// operation's state in the file. A Store keeps one write transaction open while appends keep
// coming (group commit: see Append), so another process waits for the write lock at most
// maxHold; writers take turns for it (PATH.writers/turn, an flock: see takeTurn), so that one
// that writes all the time does not keep another out. What this Store knows of a session (its last seq, its operations' states) is kept
// between transactions while PRAGMA data_version says no other process committed, and read
// again from the file when one did.
//
// A process with a writing Store open that is stopped with Ctrl-Z (SIGTSTP) commits first and
// stops between transactions (stop_unix.go), so that its stop keeps no other writer waiting.
//
// Tail follows, from any process, what the others append: every message committed after the call
// by another Store, in commit order (rowid order: rowids are handed out under the write lock).
//
// Each writing Store holds an flock on a file of its own, PATH.writers/ROLE-PID-RANDOM.lock, for as
// long as it is open; an operation records the last Store that appended to it. A stream whose
// writer's lock is held is live in another process (Writer): Recover leaves it alone, and the
// kernel releases the lock when that process dies, even of kill -9.
//
// # Durability
//
// The file is in WAL mode with synchronous=NORMAL: a committed transaction survives a crash of
// the process, but not necessarily a power loss or an OS crash, which may take the last
// transactions back (never corrupt the file). Append of a terminal message (complete, failed,
// run_end) returns once it is committed, with everything appended before it; other messages are
// committed within milliseconds (Sync commits them at once; Committed says when the group
// commit has), always in seq order, so a crash loses at most a tail of a session, never a
// message in the middle, and Close commits everything. That tail is what nobody has seen: a
// process shows a message — prints it, sends it to a subscriber, tells a client — only once
// its Commit is done (or after Sync), so a kill -9 loses nothing it showed. Other
// processes see a message once it is committed. A failed write (a full disk) is final: the
// store refuses further appends, and the next Open goes on from what was committed.
//
// # Schema (version 2, kept in PRAGMA user_version)
//
//	messages(session_id, seq, id, type, operation_id, timestamp, payload BLOB,
//	         PRIMARY KEY(session_id, seq))
//	operations(session_id, operation_id, kind, state, created, updated, first_seq, last_seq, writer,
//	           PRIMARY KEY(session_id, operation_id))
//
// An operation row is an operation or an agent run (kind agent_run), written with its first
// message. A message references its operation, which is written in the same transaction.
// timestamp, created and updated are Unix seconds (REAL); state is a protocol.State; first_seq
// and last_seq bound the operation's messages in its session, so reading one operation's
// history needs no index of its own (each index costs every append); writer names the lock file
// of the Store that appended its last message, an operation_interrupt aside (another process
// appends one to ask the operation's writer to stop it: the writer stays the operation's). Version 1 files get the writer column on Open. A
// file with a newer schema version is refused with ErrNewerSchema.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/internal/sqlitefile"
	"github.com/labmate/labmate/protocol"
)

const schemaVersion = 2

const schema = `
CREATE TABLE operations (
	session_id   TEXT NOT NULL,
	operation_id TEXT NOT NULL,
	kind         TEXT NOT NULL,
	state        TEXT NOT NULL,
	created      REAL NOT NULL,
	updated      REAL NOT NULL,
	first_seq    INTEGER NOT NULL,
	last_seq     INTEGER NOT NULL,
	writer       TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (session_id, operation_id)
);
CREATE TABLE messages (
	session_id   TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	id           TEXT NOT NULL,
	type         TEXT NOT NULL,
	operation_id TEXT NOT NULL,
	timestamp    REAL NOT NULL,
	payload      BLOB NOT NULL,
	PRIMARY KEY (session_id, seq),
	FOREIGN KEY (session_id, operation_id) REFERENCES operations
);
`

// migrations[v] brings a file of version v to v+1.
var migrations = map[int]string{
	1: "ALTER TABLE operations ADD COLUMN writer TEXT NOT NULL DEFAULT '';",
}

// lastSeq is the query of a session's last seq.
const lastSeq = "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?"

// ErrNewerSchema is wrapped by Open for a file written by a newer labmate.
var ErrNewerSchema = errors.New("sqlite: the store has a newer schema than this labmate knows")

// ErrReadOnly is wrapped by Append and Recover of a store opened with OpenReadOnly.
var ErrReadOnly = errors.New("sqlite: the store is open read-only")

const (
	maxBatch = 1024 // messages per transaction
	rowBatch = 64   // messages per INSERT statement
	msgCols  = 7    // the columns of a message's row
	// A transaction is committed once no message has come for linger, and at the latest
	// maxHold after it began (other processes wait for the write lock meanwhile). Under a
	// steady stream every message waits up to maxHold for its commit, the largest fixed part
	// of the time from an append to a subscriber; a commit costs about half a millisecond.
	linger  = time.Millisecond
	maxHold = 5 * time.Millisecond
	// checkpointEvery is how often a Store that committed copies the WAL into the file.
	checkpointEvery = 100 * time.Millisecond
	readChunk       = 256 // rows per read query, so a slow reader holds no transaction open
	readBytes       = 4 << 20
	// TailPoll is how often Tail looks whether another process committed, besides when one
	// writes the file (walWrites).
	TailPoll = 20 * time.Millisecond
	tailGap  = 2 * time.Millisecond  // the least time between two looks of Tail woken by writes
	ownGap   = 10 * time.Millisecond // the same, after a look that found only this Store's commits
	// tailRetry is how long Tail tries again a file it cannot read before it ends with the error.
	tailRetry = 10 * time.Second
)

// Store is a protocol.Store in one SQLite file. Create it with Open.
type Store struct {
	path string
	role string
	db   *sql.DB   // readers
	w    *sql.Conn // the writer's own connection (nil: read-only)
	lock *os.File  // this Store's writer lock (nil: read-only)
	// The writers' turn: turn is held (flock) from BEGIN IMMEDIATE to COMMIT, waiting (shared)
	// by the writers waiting for turn (see takeTurn).
	turn, waiting *os.File
	// Open while a wait for turn (waiting) that took too long goes on (flockWait).
	turnStuck, waitingStuck chan struct{}
	writer                  string // its name, recorded in the operations it appends to
	// The writer's statements; insertMsgs inserts rowBatch messages at once.
	insertOp, updateOp, insertMsg, insertMsgs, opState *sql.Stmt

	closeMu sync.RWMutex // held for reading by appends and flushes
	closed  bool
	kick    chan struct{} // a transaction began: the committer watches it
	quit    chan struct{} // closed by Close: the committer returns
	stopped chan struct{} // closed when the committer has returned

	// Held by the appender writing (wmu): what it knows of the sessions, valid while no other
	// process has committed since (version, the writer connection's data_version); whether a
	// transaction is open, when it began, its messages, when the last came, the rowids it added.
	wmu               sync.Mutex
	began, lastInsert time.Time
	n                 int
	known             map[string]*known
	version           int64
	inTx              bool
	first, last       int64
	updates           map[[2]string]update // operation → its last message in the transaction
	rows              []any                // numbered messages not yet inserted: msgCols values each

	dirty   atomic.Bool            // a transaction holds messages not yet committed
	failed  atomic.Pointer[error]  // a failed transaction: appends are refused
	tx      atomic.Pointer[Commit] // the open transaction's; nil when none is open
	commits atomic.Int64           // transactions committed, for the checkpointer

	tailMu  sync.Mutex // held by the writer across COMMIT and by a tailer reading max(rowid)
	tailers map[*tailer]struct{}
}

var _ protocol.Store = (*Store)(nil)

// known is what the writer knows of one session from the file.
type known struct {
	last int64                     // its last seq; -1: not read yet
	ops  map[string]protocol.State // states read or written, by operation
}

// update is an operation's row to update at the commit.
type update struct {
	m     *protocol.EnhancedMessage
	state protocol.State
	// request: the operation's messages in the transaction are operation_interrupts, which ask
	// the operation's writer to stop it (another process may append them): the writer stays.
	request bool
}

// write is one message to insert.
type write struct {
	m    *protocol.EnhancedMessage
	kind string // the kind of the stream m opens (protocol.Check)
}

// Open opens the store in the SQLite file at path, creating the file if needed, to append and
// read beside any other process that has it open, as a server does (OpenAs role "serve"). Its
// directory must exist.
func Open(path string) (*Store, error) { return OpenAs(path, "serve") }

// OpenAs is Open for a process that says what it is (role: "serve", "run", "exec", …; letters
// and digits), as Writer tells other processes.
func OpenAs(path, role string) (*Store, error) {
	if role == "" || strings.ContainsFunc(role, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') }) {
		return nil, fmt.Errorf("sqlite: opening %s: role %q: want lower-case letters and digits", path, role)
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	if err := notDir(path); err != nil {
		return nil, err
	}
	// SQLite opens a file it may not write read-only, silently, and fails the first append.
	// (Access, not a descriptor: closing one would drop this process's SQLite locks on it.)
	if err := syscall.Access(path, 2 /* W_OK */); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sqlite: opening %s: this process may not write it (%w): a store it cannot append to", path, err)
	}
	// temp_store(memory): a statement that inserts many rows keeps a statement journal (the
	// pages it changed, to undo it alone), which SQLite otherwise spills to a temporary file
	// past 64 KiB — a write system call per page, on every multi-row INSERT (insertRows).
	db, err := sqlitefile.Open(path, "_pragma=foreign_keys(1)", "_pragma=temp_store(memory)")
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db.SetMaxOpenConns(8)
	s := &Store{
		path:    path,
		role:    role,
		db:      db,
		kick:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
		known:   make(map[string]*known),
		updates: make(map[[2]string]update),
		tailers: make(map[*tailer]struct{}),
	}
	if err := s.init(context.Background()); err != nil {
		s.release()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	go s.committer()
	stopsCleanly(s)
	return s, nil
}

// OpenReadOnly opens the store in the existing SQLite file at path for reading only: After,
// Operation, Sessions, Operations and Tail read what the writing processes committed; Append
// and Recover return an error wrapping ErrReadOnly.
func OpenReadOnly(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	if err := notDir(path); err != nil {
		return nil, err
	}
	db, err := sqlitefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	var version, tables int
	err = db.QueryRow("PRAGMA user_version").Scan(&version)
	if err == nil && version == 0 {
		err = db.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&tables)
	}
	if err != nil || version < 1 || version > schemaVersion {
		db.Close()
		switch {
		case err == nil && version == 0 && tables == 0: // a writer is creating it, or it was cut short
			return nil, fmt.Errorf("sqlite: opening %s: an empty file, no store yet: %w", path, fs.ErrNotExist)
		case err == nil:
			err = fmt.Errorf("schema version %d, this labmate knows up to %d", version, schemaVersion)
		}
		return nil, fmt.Errorf("sqlite: opening %s: not a labmate store it can read: %w", path, err)
	}
	s := &Store{path: path, db: db, stopped: make(chan struct{}), tailers: make(map[*tailer]struct{})}
	close(s.stopped)
	return s, nil
}

// notDir refuses a store path that is a directory, which SQLite calls only "unable to open
// database file".
func notDir(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("sqlite: opening %s: it is a directory, not a store file (move it away)", path)
	}
	return nil
}

// writersDir is the directory of the writer locks of the store file at path.
func writersDir(path string) string { return path + ".writers" }

// init takes the writer's connection and lock, creates or migrates the schema and prepares the
// writer's statements.
func (s *Store) init(ctx context.Context) error {
	var err error
	if s.w, err = s.db.Conn(ctx); err != nil {
		return err
	}
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode is %q, not wal", mode)
	}
	if _, err := s.w.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil { // see checkpointer
		return err
	}
	if err := s.takeLock(); err != nil {
		return err
	}
	// The migration's write transaction waits for the writers' turn like any other: SQLite's
	// busy handler alone loses the write lock, for ever, to a writer that appends all the time.
	if err := s.takeTurn(); err != nil {
		return err
	}
	err = s.migrateInTx(ctx)
	s.endTurn()
	if err != nil {
		return err
	}
	if s.version, err = dataVersion(ctx, s.w); err != nil {
		return err
	}
	for stmt, query := range map[**sql.Stmt]string{
		&s.insertOp:   "INSERT INTO operations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		&s.updateOp:   "UPDATE operations SET state = ?, updated = ?, last_seq = ?, writer = coalesce(?, writer) WHERE session_id = ? AND operation_id = ?",
		&s.insertMsg:  "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)",
		&s.insertMsgs: "INSERT INTO messages VALUES " + strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", rowBatch-1) + "(?, ?, ?, ?, ?, ?, ?)",
		&s.opState:    "SELECT state FROM operations WHERE session_id = ? AND operation_id = ?",
	} {
		if *stmt, err = s.w.PrepareContext(ctx, query); err != nil {
			return fmt.Errorf("preparing %q: %w", query, err)
		}
	}
	return nil
}

// migrateInTx creates or migrates the schema in a write transaction of its own.
func (s *Store) migrateInTx(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err := migrate(ctx, s.w); err != nil {
		s.w.ExecContext(ctx, "ROLLBACK")
		return err
	}
	_, err := s.w.ExecContext(ctx, "COMMIT")
	return err
}

// takeLock creates and locks this Store's writer lock file, and removes those of writers that
// died.
func (s *Store) takeLock() error {
	dir := writersDir(s.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// A lock file is created and locked while create is held shared, and the files of dead
	// writers are removed while it is held exclusive: one created and not locked yet looked
	// like a dead writer's, and was removed under its Store (which then looked dead to all).
	create, err := os.OpenFile(filepath.Join(dir, "create"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	defer create.Close() // and with it the lock
	if err := flock(create, syscall.LOCK_SH); err != nil {
		return fmt.Errorf("locking %s: %w", create.Name(), err)
	}
	s.writer = s.role + "-" + strconv.Itoa(os.Getpid()) + "-" + uuid.NewString()[:8]
	f, err := os.OpenFile(filepath.Join(dir, s.writer+".lock"), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	s.lock = f
	syscall.Flock(int(create.Fd()), syscall.LOCK_UN)
	for _, t := range []struct {
		f    **os.File
		name string
	}{{&s.turn, "turn"}, {&s.waiting, "waiting"}} {
		if *t.f, err = os.OpenFile(filepath.Join(dir, t.name), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644); err != nil {
			return err
		}
	}
	if err := flock(create, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", create.Name(), err)
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			name := strings.TrimSuffix(e.Name(), ".lock")
			if name != s.writer && strings.HasSuffix(e.Name(), ".lock") {
				if !writerOf(s.path, name).Live {
					os.Remove(filepath.Join(dir, e.Name()))
				}
			}
		}
	}
	return nil
}

// writerOf describes the Store named writer of the file at path: its role and pid, and whether
// it is open (its lock is held).
func writerOf(path, writer string) Writer {
	var w Writer
	parts := strings.Split(writer, "-")
	if len(parts) != 3 {
		return w
	}
	w.Role = parts[0]
	w.Pid, _ = strconv.Atoi(parts[1])
	f, err := os.OpenFile(filepath.Join(writersDir(path), writer+".lock"), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return w
	}
	defer f.Close() // and with it the shared lock
	w.Live = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil
	return w
}

func dataVersion(ctx context.Context, c interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int64, error) {
	var v int64
	err := c.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
	return v, err
}

// migrate creates the schema in a new file, brings an older one up to date and refuses one it
// does not know.
func migrate(ctx context.Context, c *sql.Conn) error {
	var version, tables int
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	switch {
	case version > schemaVersion:
		return fmt.Errorf("%w: version %d, this labmate knows up to %d", ErrNewerSchema, version, schemaVersion)
	case version == schemaVersion:
		return nil
	case version > 0:
		for v := version; v < schemaVersion; v++ {
			if _, err := c.ExecContext(ctx, migrations[v]+fmt.Sprintf("PRAGMA user_version = %d;", v+1)); err != nil {
				return fmt.Errorf("bringing the schema from version %d to %d: %w", v, v+1, err)
			}
		}
		return nil
	}
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return err
	}
	if tables > 0 {
		return errors.New("an SQLite database, but not a labmate store")
	}
	if _, err := c.ExecContext(ctx, schema+fmt.Sprintf("PRAGMA user_version = %d;", schemaVersion)); err != nil {
		return fmt.Errorf("creating the schema: %w", err)
	}
	return nil
}

// Append implements protocol.Store. The appending goroutine itself validates, numbers and
// inserts m in the Store's open write transaction (BEGIN IMMEDIATE, begun by the first append
// after a commit), one append at a time: m's seq is final when Append returns, since no other
// process can write while the transaction is open. A terminal message is committed before Append
// returns, with everything before it; otherwise the transaction is committed once no message
// has come for linger (by a goroutine of the Store), or at an append maxHold after it began or
// with maxBatch messages in. Once a transaction fails the store is failed: messages already
// answered were lost, and their seqs could be handed out again.
func (s *Store) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	switch {
	case s.w == nil:
		return nil, fmt.Errorf("%w: %s", ErrReadOnly, s.path)
	case m == nil:
		return nil, fmt.Errorf("%w: nil message", protocol.ErrInvalidMessage)
	case m.SessionID == "":
		return nil, fmt.Errorf("%w: %s without session_id", protocol.ErrInvalidMessage, m.Type)
	case m.OperationID == "":
		return nil, fmt.Errorf("%w: %s without operation_id", protocol.ErrInvalidMessage, m.Type)
	}
	c := *m
	if c.ID == "" {
		c.ID = uuid.NewString()
	}
	if c.Timestamp == 0 {
		c.Timestamp = protocol.UnixSeconds(time.Now())
	}
	w := write{m: &c}
	var err error
	if w.kind, err = protocol.Check(&c); err != nil {
		return nil, fmt.Errorf("session %s: %w", c.SessionID, err)
	}
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return nil, protocol.ErrClosed
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.failed.Load(); err != nil {
		return nil, *err
	}
	now := time.Now()
	if !s.inTx {
		// A transaction that cannot begin (another process held the lock beyond the busy
		// timeout) answered nothing yet: m fails, and the store goes on.
		if err := s.begin(); err != nil {
			return nil, fmt.Errorf("sqlite: writing to %s: %w", s.path, err)
		}
		s.began, s.n = now, 0
		select {
		case s.kick <- struct{}{}: // the committer commits once appends stop coming
		default:
		}
	}
	if err := s.insert(w); err != nil {
		return nil, err
	}
	s.n++
	s.lastInsert = now
	s.dirty.Store(true)
	if c.Type.Terminal() || s.n >= maxBatch || now.Sub(s.began) >= maxHold {
		if err := s.commit(); err != nil {
			s.fail(err)
			return nil, *s.failed.Load()
		}
	}
	return &c, nil
}

// committer commits the open transaction once no append has come for linger, until Close.
func (s *Store) committer() {
	defer close(s.stopped)
	checkpointed := make(chan struct{})
	defer func() { <-checkpointed }()
	go s.checkpointer(checkpointed)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-s.kick:
			t.Reset(linger)
		case <-t.C:
			s.wmu.Lock()
			if s.inTx {
				if idle := time.Since(s.lastInsert); idle < linger && time.Since(s.began) < maxHold {
					t.Reset(linger - idle)
				} else if err := s.commit(); err != nil {
					s.fail(err)
				}
			}
			s.wmu.Unlock()
		}
	}
}

// checkpointer copies what this Store committed from the WAL into the file every
// checkpointEvery, beside the appends: the writer's connection does not checkpoint (SQLite's
// autocheckpoint would, inside the COMMIT that crosses 1000 pages, with an fsync, holding the
// write lock and every append waiting for it). A passive checkpoint waits for no one: what a
// reader still reads is copied by a later one. It closes done when Close has been called.
func (s *Store) checkpointer(done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	last := s.commits.Load()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		if n := s.commits.Load(); n != last {
			last = n
			s.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)") // a failure: the next one copies it
			if fi, err := os.Stat(s.path + "-wal"); err == nil && fi.Size() > walLimit {
				s.truncateWAL()
			}
		}
	}
}

// walLimit is the size past which a Store's checkpointer empties the WAL (truncateWAL).
var walLimit int64 = 16 << 20

// truncateWAL copies the whole WAL into the file and empties it. A passive checkpoint never
// does: SQLite starts the WAL over only at a write transaction that begins once every frame
// was copied, and beside a writer that is never idle frames are always added meanwhile, so the
// WAL grew without end (300 MB in 10 s). It holds the writers' turn, after committing what this
// Store appended, and waits for the readers still reading the WAL at most truncateWait (every
// writer waits meanwhile): when one reads longer, the next one empties it.
func (s *Store) truncateWAL() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.commit(); err != nil {
		s.fail(err)
		return
	}
	if s.failed.Load() != nil || s.takeTurn() != nil {
		return
	}
	defer s.endTurn()
	ctx := context.Background()
	var busy int64
	if s.w.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy) != nil {
		return
	}
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", truncateWait.Milliseconds())); err != nil {
		return
	}
	s.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)") // a failure: the next one empties it
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", busy)); err != nil {
		s.fail(fmt.Errorf("setting the busy timeout back: %w", err))
	}
}

// truncateWait is how long truncateWAL waits for the readers of the WAL.
const truncateWait = 200 * time.Millisecond

// fail makes the store refuse every append from now on, with err.
func (s *Store) fail(err error) {
	if s.failed.Load() != nil {
		return
	}
	err = fmt.Errorf("sqlite: writing to %s: %w", s.path, err)
	s.failed.Store(&err)
	if s.inTx {
		s.w.ExecContext(context.Background(), "ROLLBACK")
		s.endTurn()
		s.inTx = false
	}
	s.ended(err)
	clear(s.updates)
	clear(s.known)
}

// takeTurn waits for the writers' turn, which every Store of the file takes for each write
// transaction: SQLite's own wait for the write lock (the busy timeout) sleeps and retries,
// 1 ms, 2, 5 … 100 ms apart, so a process that commits every few milliseconds and begins
// again at once would keep the lock from another for seconds. The turn is an flock, whose
// waiters the kernel wakes as soon as it is free, and a writer that wants the turn again first
// lets those that wait for it (they hold waiting, shared) take it: writers take turns.
func (s *Store) takeTurn() error {
	for deadline := time.Now().Add(maxHold); ; {
		// Anyone waiting? (An exclusive lock on waiting is refused while one is.)
		if syscall.Flock(int(s.waiting.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			syscall.Flock(int(s.waiting.Fd()), syscall.LOCK_UN)
			break
		}
		if time.Now().After(deadline) { // a writer waiting this long is not waiting for the turn
			break
		}
		time.Sleep(50 * time.Microsecond)
	}
	waiting, err := flockWait(&s.waiting, &s.waitingStuck, syscall.LOCK_SH)
	if err != nil {
		return fmt.Errorf("waiting for the writers' turn: %w", err)
	}
	_, err = flockWait(&s.turn, &s.turnStuck, syscall.LOCK_EX)
	if waiting {
		syscall.Flock(int(s.waiting.Fd()), syscall.LOCK_UN)
	}
	if err != nil {
		return fmt.Errorf("taking the writers' turn: %w", err)
	}
	return nil
}

// turnWait is how long a writer waits for the writers' turn before it goes on without it.
const turnWait = 2 * time.Second

// flockWait takes lock how on *f, waiting at most turnWait: a writer holds the turn a few
// milliseconds, but one stopped while it holds it (Ctrl-Z on labmate exec, SIGSTOP) holds it
// until it is continued, and every other writer waited for it for ever — even SIGTERM did not
// end a labmate exec waiting there. Past turnWait it goes on without the lock (held false):
// SQLite's write lock still keeps writers apart, its busy timeout bounds the wait for it, and
// the turn is fairness only. The abandoned wait goes on in the background on the descriptor
// *f had, closed (its lock with it) once the wait ends, and until then (*stuck is open) the
// next ones do not wait; *f becomes a new descriptor of the file.
func flockWait(f **os.File, stuck *chan struct{}, how int) (held bool, err error) {
	if syscall.Flock(int((*f).Fd()), how|syscall.LOCK_NB) == nil {
		return true, nil
	}
	if *stuck != nil {
		select {
		case <-*stuck:
			*stuck = nil
		default:
			return false, nil // the holder still holds it
		}
	}
	old := *f
	done := make(chan error, 1)
	go func() { done <- flock(old, how) }()
	t := time.NewTimer(turnWait)
	defer t.Stop()
	select {
	case err := <-done:
		return err == nil, err
	case <-t.C:
	}
	nf, err := os.OpenFile(old.Name(), os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false, fmt.Errorf("%s held for %v, and opening it again: %w", old.Name(), turnWait, err)
	}
	*f = nf
	over := make(chan struct{})
	*stuck = over
	go func() {
		<-done
		old.Close()
		close(over)
	}()
	return false, nil
}

// endTurn hands the writers' turn on.
func (s *Store) endTurn() { syscall.Flock(int(s.turn.Fd()), syscall.LOCK_UN) }

// flock takes lock how on f, waiting for it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// begin opens the writer's transaction, unless the store failed.
func (s *Store) begin() error {
	if s.failed.Load() != nil {
		return nil
	}
	ctx := context.Background()
	if err := s.takeTurn(); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		s.endTurn()
		return err
	}
	s.inTx, s.first, s.last = true, 0, 0
	s.tx.Store(&Commit{done: make(chan struct{})})
	v, err := dataVersion(ctx, s.w)
	if err != nil {
		return err
	}
	if v != s.version { // another process committed: what we know may be stale
		clear(s.known)
		s.version = v
	}
	return nil
}

// insert validates w's message against its operation's state in the file, gives it the
// session's next seq and inserts it in the open transaction. A message the state machine
// refuses is an error and changes nothing; a failed statement fails the store.
func (s *Store) insert(w write) error {
	ctx := context.Background()
	m := w.m
	k, err := s.session(ctx, m.SessionID)
	if err != nil {
		s.fail(fmt.Errorf("reading session %s: %w", m.SessionID, err))
		return *s.failed.Load()
	}
	from, ok := k.ops[m.OperationID]
	if !ok {
		err := s.opState.QueryRowContext(ctx, m.SessionID, m.OperationID).Scan(&from)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			s.fail(fmt.Errorf("reading operation %s of session %s: %w", m.OperationID, m.SessionID, err))
			return *s.failed.Load()
		}
	}
	to, err := protocol.Next(from, m.Type)
	if err != nil {
		return fmt.Errorf("session %s, operation %s: %w", m.SessionID, m.OperationID, err)
	}
	m.Seq = k.last + 1
	if from == "" {
		if _, err := s.insertOp.ExecContext(ctx, m.SessionID, m.OperationID, w.kind, to, m.Timestamp, m.Timestamp, m.Seq, m.Seq, s.writer); err != nil {
			s.fail(fmt.Errorf("operation %s of session %s: %w", m.OperationID, m.SessionID, err))
			return *s.failed.Load()
		}
	} else { // the operation's row is updated once per transaction, at the commit
		key := [2]string{m.SessionID, m.OperationID}
		u, seen := s.updates[key]
		s.updates[key] = update{m, to, m.Type == protocol.TypeInterrupt && (!seen || u.request)}
	}
	payload := []byte(m.Payload)
	if payload == nil {
		payload = []byte{}
	}
	// The row is inserted with others (insertRows), later in the same transaction: this Store
	// holds the file's write lock until it commits, so the seq it gave stays the session's next.
	s.rows = append(s.rows, m.SessionID, m.Seq, m.ID, string(m.Type), m.OperationID, m.Timestamp, payload)
	k.last, k.ops[m.OperationID] = m.Seq, to
	if len(s.rows) >= rowBatch*msgCols {
		return s.insertRows()
	}
	return nil
}

// insertRows inserts the numbered messages not yet inserted, rowBatch to a statement (one
// statement for many rows costs a fraction of one per row), and records the rowids they took.
// A failed statement fails the store.
func (s *Store) insertRows() error {
	ctx := context.Background()
	// rows walks s.rows, whose array is kept for the next messages.
	for rows := s.rows; len(rows) > 0; {
		stmt, n := s.insertMsgs, rowBatch
		if len(rows) < rowBatch*msgCols {
			stmt, n = s.insertMsg, 1
		}
		res, err := stmt.ExecContext(ctx, rows[:n*msgCols]...)
		if err != nil {
			s.fail(fmt.Errorf("message %d of session %s: %w", rows[1], rows[0], err))
			return *s.failed.Load()
		}
		// Rows inserted by one statement take consecutive rowids, the last one's reported.
		if id, err := res.LastInsertId(); err == nil {
			if s.first == 0 {
				s.first = id - int64(n) + 1
			}
			s.last = id
		}
		rows = rows[n*msgCols:]
	}
	clear(s.rows) // the payloads go with their messages
	s.rows = s.rows[:0]
	return nil
}

// commit commits the open transaction, if any, and hands its rowids to the tailers.
func (s *Store) commit() error {
	if !s.inTx {
		return nil
	}
	if err := s.insertRows(); err != nil {
		return err
	}
	ctx := context.Background()
	for _, u := range s.updates {
		m := u.m
		writer := any(s.writer)
		if u.request {
			writer = nil // the operation's writer stays
		}
		if _, err := s.updateOp.ExecContext(ctx, u.state, m.Timestamp, m.Seq, writer, m.SessionID, m.OperationID); err != nil {
			return fmt.Errorf("operation %s of session %s: %w", m.OperationID, m.SessionID, err)
		}
	}
	clear(s.updates)
	s.tailMu.Lock()
	defer s.tailMu.Unlock()
	if _, err := s.w.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	s.endTurn()
	s.commits.Add(1)
	s.inTx = false
	s.dirty.Store(false)
	s.ended(nil)
	if s.first > 0 {
		for t := range s.tailers {
			t.own = append(t.own, [2]int64{s.first, s.last})
		}
	}
	return nil
}

// flush commits what this Store has appended.
func (s *Store) flush(ctx context.Context) error {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return protocol.ErrClosed
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.commit(); err != nil {
		s.fail(err)
	}
	if err := s.failed.Load(); err != nil {
		return *err
	}
	return nil
}

// Commit is one write transaction of a Store, as Committed returns it: Done is closed once it
// is over, and Err then says whether it failed (its messages are not in the file).
type Commit struct {
	done chan struct{}
	err  error // set before done is closed
}

// Done is closed once the transaction has been committed, or has failed.
func (c *Commit) Done() <-chan struct{} { return c.done }

// Err is nil once the transaction is committed; after a failure it says why. It is valid once
// Done is closed.
func (c *Commit) Err() error { return c.err }

// Wait returns once c is over, with Err, or with ctx's error when ctx ends first.
func (c *Commit) Wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// committed is the Commit of no open transaction: everything appended is in the file.
var committed = func() *Commit {
	c := &Commit{done: make(chan struct{})}
	close(c.done)
	return c
}()

// Committed returns the transaction that holds what this Store has appended so far and has
// not committed yet: once it is Done without an Err, every message Append has returned before
// the call is in the file (other processes see it, and a kill -9 of this one loses none of
// it). It waits for the group commit (at most maxHold after the transaction began), it forces
// no commit of its own, and costs an atomic load: what a process shows of its messages — a
// line printed, a frame sent to a subscriber — it shows once their Commit is Done, and a crash
// can then not take back anything it showed.
func (s *Store) Committed() *Commit {
	if c := s.tx.Load(); c != nil {
		return c
	}
	if err := s.failed.Load(); err != nil {
		c := &Commit{done: make(chan struct{}), err: *err}
		close(c.done)
		return c
	}
	return committed
}

// ended ends the open transaction's Commit, with err when it failed.
func (s *Store) ended(err error) {
	c := s.tx.Load()
	if c == nil {
		return
	}
	c.err = err
	close(c.done)
	s.tx.Store(nil)
}

// session returns what the writer knows of session id, reading its last seq from the file when
// it does not know it.
func (s *Store) session(ctx context.Context, id string) (*known, error) {
	k := s.known[id]
	if k == nil {
		k = &known{ops: make(map[string]protocol.State)}
		if err := s.w.QueryRowContext(ctx, lastSeq, id).Scan(&k.last); err != nil {
			return nil, err
		}
		s.known[id] = k
	}
	return k, nil
}

// Sync returns once every message appended before it is committed: durable, as a terminal
// message is when Append returns.
func (s *Store) Sync(ctx context.Context) error {
	if s.w == nil {
		return s.readable()
	}
	if err := s.flush(ctx); err != nil {
		return fmt.Errorf("sqlite: %s: %w", s.path, err)
	}
	return nil
}

// readable returns an error wrapping protocol.ErrClosed once Close has been called.
func (s *Store) readable() error {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return protocol.ErrClosed
	}
	return nil
}

// snapshot returns the session's last seq as the file has it now, after committing what this
// Store has appended.
func (s *Store) snapshot(ctx context.Context, id string) (int64, error) {
	if err := s.readable(); err != nil {
		return 0, err
	}
	if s.dirty.Load() {
		if err := s.flush(ctx); err != nil {
			return 0, fmt.Errorf("sqlite: reading session %s: %w", id, err)
		}
	}
	var last int64
	if err := s.db.QueryRowContext(ctx, lastSeq, id).Scan(&last); err != nil {
		return 0, fmt.Errorf("sqlite: reading session %s from %s: %w", id, s.path, err)
	}
	if last == 0 {
		return 0, fmt.Errorf("%w %q", protocol.ErrUnknownSession, id)
	}
	return last, nil
}

// After implements protocol.Store.
func (s *Store) After(ctx context.Context, sessionID string, after int64) iter.Seq2[*protocol.EnhancedMessage, error] {
	last, err := s.snapshot(ctx, sessionID)
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for m, err := range s.messages(ctx, sessionID, "", max(after, 0), last) {
			if !yield(m, err) {
				return
			}
		}
	}
}

// Operation implements protocol.Store. An operation's messages lie between its first and last
// seq, mostly alone when the session runs its operations one after the other.
func (s *Store) Operation(ctx context.Context, sessionID, operationID string) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		if _, err := s.snapshot(ctx, sessionID); err != nil {
			yield(nil, err)
			return
		}
		var first, last int64
		err := s.db.QueryRowContext(ctx,
			"SELECT first_seq, last_seq FROM operations WHERE session_id = ? AND operation_id = ?",
			sessionID, operationID).Scan(&first, &last)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			yield(nil, fmt.Errorf("%w %q in session %s", protocol.ErrUnknownOperation, operationID, sessionID))
			return
		case err != nil:
			yield(nil, fmt.Errorf("sqlite: reading operation %s of session %s from %s: %w", operationID, sessionID, s.path, err))
			return
		}
		for m, err := range s.messages(ctx, sessionID, operationID, first-1, last) {
			if !yield(m, err) {
				return
			}
		}
	}
}

// messages yields the session's messages with after < seq <= last, only operation op's unless
// op is empty. It reads them in chunks, holding no transaction open while yielding.
func (s *Store) messages(ctx context.Context, sessionID, op string, after, last int64) iter.Seq2[*protocol.EnhancedMessage, error] {
	query := "SELECT seq, id, type, operation_id, timestamp, payload FROM messages " +
		"WHERE session_id = ?1 AND seq > ?2 AND seq <= ?3 AND (?5 = '' OR operation_id = ?5) ORDER BY seq LIMIT ?4"
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		for after < last {
			chunk, err := s.read(ctx, query, sessionID, after, last, readChunk, op)
			if err != nil {
				yield(nil, fmt.Errorf("sqlite: reading session %s from %s: %w", sessionID, s.path, err))
				return
			}
			if len(chunk) == 0 {
				return
			}
			for _, m := range chunk {
				m.SessionID = sessionID
				if !yield(m, nil) {
					return
				}
			}
			after = chunk[len(chunk)-1].Seq
		}
	}
}

// read runs a query of messages, stopping early after readBytes of payload.
func (s *Store) read(ctx context.Context, query string, args ...any) ([]*protocol.EnhancedMessage, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var msgs []*protocol.EnhancedMessage
	size := 0
	for size < readBytes && rows.Next() {
		var m protocol.EnhancedMessage
		var payload []byte
		if err := rows.Scan(&m.Seq, &m.ID, &m.Type, &m.OperationID, &m.Timestamp, &payload); err != nil {
			return nil, err
		}
		if len(payload) > 0 {
			m.Payload = payload
		}
		size += len(payload)
		msgs = append(msgs, &m)
	}
	return msgs, rows.Err()
}

// Sessions implements protocol.Store.
func (s *Store) Sessions(ctx context.Context) ([]protocol.SessionInfo, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if s.dirty.Load() {
		if err := s.flush(ctx); err != nil {
			return nil, fmt.Errorf("sqlite: listing sessions: %w", err)
		}
	}
	rows, err := s.db.QueryContext(ctx, `
		SELECT session_id, count(*),
			(SELECT timestamp FROM messages m WHERE m.session_id = o.session_id ORDER BY seq LIMIT 1) AS created,
			(SELECT max(seq) FROM messages m WHERE m.session_id = o.session_id)
		FROM operations o GROUP BY session_id ORDER BY created, session_id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing sessions in %s: %w", s.path, err)
	}
	defer rows.Close()
	var infos []protocol.SessionInfo
	for rows.Next() {
		var i protocol.SessionInfo
		if err := rows.Scan(&i.ID, &i.Operations, &i.Created, &i.LastSeq); err != nil {
			return nil, fmt.Errorf("sqlite: listing sessions in %s: %w", s.path, err)
		}
		infos = append(infos, i)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing sessions in %s: %w", s.path, err)
	}
	return infos, nil
}

// Operations implements protocol.Store.
func (s *Store) Operations(ctx context.Context, sessionID string) ([]protocol.OperationInfo, error) {
	if _, err := s.snapshot(ctx, sessionID); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx,
		"SELECT operation_id, kind, state, created, updated FROM operations WHERE session_id = ? ORDER BY first_seq", sessionID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing the operations of session %s in %s: %w", sessionID, s.path, err)
	}
	defer rows.Close()
	var infos []protocol.OperationInfo
	for rows.Next() {
		var i protocol.OperationInfo
		if err := rows.Scan(&i.ID, &i.Kind, &i.State, &i.Created, &i.Updated); err != nil {
			return nil, fmt.Errorf("sqlite: listing the operations of session %s in %s: %w", sessionID, s.path, err)
		}
		infos = append(infos, i)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing the operations of session %s in %s: %w", sessionID, s.path, err)
	}
	return infos, nil
}

// Writer is the Store that appended the last message of an operation, as Store.Writer tells.
type Writer struct {
	Role string // what the process said it is (OpenAs): "serve", "run", …
	Pid  int
	Live bool // the Store is still open: its process runs (the kernel drops its lock at a kill -9)
	Self bool // it is the Store asked
}

// Died is the message that ends stream operationID of sessionID, left in state st by writer
// w, whose process stopped: reason process_died.
func (w Writer) Died(sessionID, operationID string, st protocol.State) *protocol.EnhancedMessage {
	return protocol.Cut(sessionID, operationID, st, protocol.ReasonProcessDied,
		fmt.Sprintf("labmate %s (pid %d) stopped (killed?) while it ran", w.Role, w.Pid))
}

// Writer says which Store appended the last message of an operation, if any did since the
// file had writers (schema version 2): a stream whose writer is Live and not Self is being
// written by another process now; one whose writer is not Live was left by a process that
// stopped (killed, or it crashed) unless it ended.
func (s *Store) Writer(ctx context.Context, sessionID, operationID string) (Writer, bool) {
	if s.dirty.Load() {
		s.flush(ctx)
	}
	var writer string
	if err := s.db.QueryRowContext(ctx, "SELECT writer FROM operations WHERE session_id = ? AND operation_id = ?",
		sessionID, operationID).Scan(&writer); err != nil || writer == "" {
		return Writer{}, false
	}
	w := writerOf(s.path, writer)
	w.Self = writer == s.writer
	return w, w.Role != ""
}

// Recover implements protocol.Store. Besides those keep keeps, it leaves alone the streams
// another Store that is still open wrote last (Writer): another process is writing them.
func (s *Store) Recover(ctx context.Context, keep func(sessionID, operationID string) bool) ([]string, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if s.w == nil {
		return nil, fmt.Errorf("%w: %s", ErrReadOnly, s.path)
	}
	if err := s.flush(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: recovering: %w", err)
	}
	rows, err := s.db.QueryContext(ctx,
		"SELECT session_id, operation_id, state, writer FROM operations WHERE state NOT IN (?, ?, ?, ?) AND kind != ? ORDER BY rowid",
		protocol.Completed, protocol.FailedState, protocol.Ended, protocol.Open, protocol.KindJob)
	if err != nil {
		return nil, fmt.Errorf("sqlite: finding unfinished operations in %s: %w", s.path, err)
	}
	type stream struct {
		session, op, writer string
		state               protocol.State
	}
	var open []stream
	for rows.Next() {
		var k stream
		if err := rows.Scan(&k.session, &k.op, &k.state, &k.writer); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: finding unfinished operations in %s: %w", s.path, err)
		}
		open = append(open, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: finding unfinished operations in %s: %w", s.path, err)
	}

	var closed []string
	for _, k := range open {
		if keep != nil && keep(k.session, k.op) {
			continue
		}
		w := writerOf(s.path, k.writer) // none ("") for a stream written before writers were named
		if w.Live && k.writer != s.writer {
			continue
		}
		m := protocol.Restarted(k.session, k.op, k.state)
		if w.Role != "" && w.Role != "serve" {
			m = w.Died(k.session, k.op, k.state) // not a server's: labmate exec, run, …
		}
		_, err := s.Append(ctx, m)
		switch {
		case err == nil:
			closed = append(closed, k.op)
		case errors.Is(err, protocol.ErrIllegalTransition): // it ended meanwhile
		default:
			return nil, err
		}
	}
	return closed, nil
}

// tailer is one Tail in progress: own are the rowid ranges this Store committed since it last
// looked.
type tailer struct{ own [][2]int64 }

// Tail yields, in commit order, every message another process (another Store) commits to the
// file after the call, until ctx ends; it looks when a process writes the file (within tailGap
// of a commit, on Linux) and every TailPoll, at the cost of one PRAGMA when nothing was
// committed. A look that fails is tried again, from the message it stopped at; Tail ends with
// the error once the file cannot be read for tailRetry.
func (s *Store) Tail(ctx context.Context) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		fail := func(err error) { yield(nil, fmt.Errorf("sqlite: following %s: %w", s.path, err)) }
		if err := s.readable(); err != nil {
			fail(err)
			return
		}
		c, err := s.db.Conn(ctx)
		if err != nil {
			fail(err)
			return
		}
		defer c.Close()
		t := &tailer{}
		maxRowid := func() (int64, [][2]int64, error) {
			s.tailMu.Lock()
			defer s.tailMu.Unlock()
			var n int64
			err := c.QueryRowContext(ctx, "SELECT coalesce(max(rowid), 0) FROM messages").Scan(&n)
			own := t.own
			t.own = nil
			return n, own, err
		}
		s.tailMu.Lock()
		s.tailers[t] = struct{}{}
		s.tailMu.Unlock()
		defer func() {
			s.tailMu.Lock()
			delete(s.tailers, t)
			s.tailMu.Unlock()
		}()
		pos, own, err := maxRowid()
		if err != nil {
			fail(err)
			return
		}
		version, err := dataVersion(ctx, c)
		if err != nil {
			fail(err)
			return
		}
		// It looks every TailPoll, and as soon as a process writes the WAL (walWrites), at most
		// once per tailGap — once per ownGap while what it finds is this Store's own commits,
		// which wake it too; a write seen before its commit is (the commit's last write comes
		// just before the WAL's index says it is committed) is looked at again after tailGap.
		wake, unwatch := walWrites(s.path)
		defer unwatch()
		tick := time.NewTicker(TailPoll)
		defer tick.Stop()
		again := time.NewTimer(time.Hour)
		again.Stop()
		defer again.Stop()
		var looked, failing time.Time // failing: since when every look failed
		gap := tailGap
		for {
			woken := false
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-again.C:
			case <-wake:
				woken = true
				if d := gap - time.Since(looked); d > 0 { // a busy writer commits every few ms
					again.Reset(d)
					continue
				}
			}
			looked = time.Now()
			v, err := dataVersion(ctx, c)
			if err == nil && v == version {
				if woken {
					again.Reset(tailGap)
				}
				continue
			}
			var end int64
			if err == nil {
				var more [][2]int64
				end, more, err = maxRowid()
				own = append(own, more...)
			}
			gap = ownGap // unless another process committed
			// Read (pos, end] but this Store's own ranges, which come in rowid order; pos
			// moves with each message yielded, so that a look that fails is taken up where it
			// stopped.
			for err == nil && pos < end {
				for len(own) > 0 && own[0][1] <= pos {
					own = own[1:]
				}
				if len(own) > 0 && own[0][0] <= pos+1 {
					pos = own[0][1]
					continue
				}
				to := end
				if len(own) > 0 {
					to = min(end, own[0][0]-1)
				}
				gap = tailGap // another process writes: look again as soon as it does
				for m, rerr := range s.rowids(ctx, c, &pos, to) {
					if rerr != nil {
						err = rerr
						break
					}
					if !yield(m, nil) {
						return
					}
				}
			}
			switch {
			case ctx.Err() != nil:
				return
			case err == nil:
				version, failing = v, time.Time{}
			case failing.IsZero():
				failing = time.Now()
			case time.Since(failing) > tailRetry:
				fail(err)
				return
			} // a look that failed is tried again at the next tick, from pos
		}
	}
}

// readFault is a failure tests make Tail's reads meet (export_test.go).
var readFault = func() error { return nil }

// rowids yields the messages of rowids (*pos, to] in rowid order, with *pos the rowid of the
// last one yielded (to once all are).
func (s *Store) rowids(ctx context.Context, c *sql.Conn, pos *int64, to int64) iter.Seq2[*protocol.EnhancedMessage, error] {
	return func(yield func(*protocol.EnhancedMessage, error) bool) {
		type row struct {
			rowid int64
			m     *protocol.EnhancedMessage
		}
		for *pos < to {
			if err := readFault(); err != nil {
				yield(nil, err)
				return
			}
			rows, err := c.QueryContext(ctx, "SELECT rowid, session_id, seq, id, type, operation_id, timestamp, payload FROM messages "+
				"WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ?", *pos, to, readChunk)
			if err != nil {
				yield(nil, err)
				return
			}
			var chunk []row
			for rows.Next() {
				var m protocol.EnhancedMessage
				var rowid int64
				var payload []byte
				if err := rows.Scan(&rowid, &m.SessionID, &m.Seq, &m.ID, &m.Type, &m.OperationID, &m.Timestamp, &payload); err != nil {
					rows.Close()
					yield(nil, err)
					return
				}
				if len(payload) > 0 {
					m.Payload = payload
				}
				chunk = append(chunk, row{rowid, &m})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				yield(nil, err)
				return
			}
			if len(chunk) == 0 {
				*pos = to
				return
			}
			for _, r := range chunk {
				*pos = r.rowid
				if !yield(r.m, nil) {
					return
				}
			}
		}
	}
}

// Close implements protocol.Store: it commits what is queued and closes the file.
func (s *Store) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()
	if s.w != nil {
		stopsNoMore(s)
		s.wmu.Lock()
		if err := s.commit(); err != nil {
			s.fail(err)
		}
		s.wmu.Unlock()
		close(s.quit)
	}
	<-s.stopped
	var failed error
	if p := s.failed.Load(); p != nil {
		failed = *p
	}
	if err := errors.Join(failed, s.release()); err != nil {
		return fmt.Errorf("sqlite: closing %s: %w", s.path, err)
	}
	return nil
}

// release closes the statements, connections and the writer lock. The last connection to close
// checkpoints the WAL into the file and removes it, unless a statement is left open.
func (s *Store) release() error {
	var errs []error
	for _, stmt := range []*sql.Stmt{s.insertOp, s.updateOp, s.insertMsg, s.insertMsgs, s.opState} {
		if stmt != nil {
			errs = append(errs, stmt.Close())
		}
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	errs = append(errs, s.db.Close())
	for _, f := range []*os.File{s.turn, s.waiting} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	if s.lock != nil {
		os.Remove(s.lock.Name()) // before the lock goes: a closed writer has no lock file
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}
