// Package sqlite is the embedded, durable protocol.Store: every session's message log in one
// SQLite file (modernc.org/sqlite, pure Go), so that clients can resume after a restart and
// operations cut short by a crash can be closed.
//
// # Durability
//
// The file is in WAL mode with synchronous=NORMAL: a committed transaction survives a crash of
// the process, but not necessarily a power loss or an OS crash, which may take the last
// transactions back (never corrupt the file). Append of a terminal message (complete, failed,
// run_end) returns once its transaction has committed. Other messages are committed in groups
// by one writer goroutine — whatever arrived while the previous transaction was being written —
// always in seq order, so a crash loses at most a tail of a session, never a message in the
// middle, and Close commits everything. At most a thousand or so messages wait for the writer
// (about 10 ms of its work); beyond that Append blocks. A failed write (a full disk) is final:
// the store refuses further appends, and a restart recovers from what was committed.
//
// Validation and seq assignment happen in memory: each session's last seq and operation states
// are loaded once, when it is first used; Append does not read the file afterwards. One process
// at a time may use a file.
//
// # Schema (version 1, kept in PRAGMA user_version)
//
//	messages(session_id, seq, id, type, operation_id, timestamp, payload BLOB,
//	         PRIMARY KEY(session_id, seq))
//	operations(session_id, operation_id, kind, state, created, updated, first_seq, last_seq,
//	           PRIMARY KEY(session_id, operation_id))
//
// An operation row is an operation or an agent run (kind agent_run), written with its first
// message. A message references its operation, which is written in the same transaction.
// timestamp, created and updated are Unix seconds (REAL); state is a protocol.State; first_seq
// and last_seq bound the operation's messages in its session, so reading one operation's
// history needs no index of its own (each index costs every append). A file with a newer
// schema version is refused with ErrNewerSchema.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/internal/sqlitefile"
	"github.com/labmate/labmate/protocol"
)

const schemaVersion = 1

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

// lastSeq is the query of a session's last seq.
const lastSeq = "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?"

// ErrNewerSchema is wrapped by Open for a file written by a newer labmate.
var ErrNewerSchema = errors.New("sqlite: the store has a newer schema than this labmate knows")

// ErrInUse reports a store file another process has open.
var ErrInUse = errors.New("sqlite: store in use")

// ErrReadOnly is wrapped by Append and Recover of a store opened with OpenReadOnly.
var ErrReadOnly = errors.New("sqlite: the store is open read-only")

const (
	queueLen  = 512 // appends waiting for the writer; Append blocks beyond
	maxBatch  = 512 // messages per transaction
	readChunk = 256 // rows per read query, so a slow reader holds no transaction open
	readBytes = 4 << 20
)

// Store is a protocol.Store in one SQLite file. Create it with Open.
type Store struct {
	path string
	lock *os.File  // path+".lock", flocked: one process per store file (nil: read-only)
	db   *sql.DB   // readers
	w    *sql.Conn // the writer's own connection
	// The writer's statements.
	insertOp, updateOp, insertMsg *sql.Stmt

	mu       sync.Mutex
	sessions map[string]*session

	closeMu sync.RWMutex // held for reading while sending on writes
	closed  bool
	writes  chan write
	stopped chan struct{} // closed when the writer has returned
	failed  atomic.Pointer[error]
}

var _ protocol.Store = (*Store)(nil)

// session is what Append needs to validate a message without reading the file.
type session struct {
	id string

	mu     sync.Mutex
	loaded bool
	last   int64
	ops    map[string]protocol.State // every operation of the session

	committed atomic.Int64 // the highest seq the writer has committed
}

// write is one appended message for the writer, or, with m nil, a barrier that is answered once
// everything sent before it has been committed.
type write struct {
	sess  *session
	m     *protocol.EnhancedMessage
	kind  string         // the kind of the stream m opens (protocol.Check)
	opens bool           // m is its operation's first message
	state protocol.State // the operation's state after m
	done  chan error     // answered after the commit, when not nil
}

// Open opens the store in the SQLite file at path, creating the file if needed. Its directory
// must exist.
func Open(path string) (*Store, error) {
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	// Sequence numbers are assigned in memory, so two processes on one file would clash.
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("%w: %s is in use by another process (another labmate serve?): %w", ErrInUse, path, err)
	}
	db, err := sqlitefile.Open(path, "_pragma=foreign_keys(1)")
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db.SetMaxOpenConns(8)
	s := &Store{
		path:     path,
		lock:     lock,
		db:       db,
		sessions: make(map[string]*session),
		writes:   make(chan write, queueLen),
		stopped:  make(chan struct{}),
	}
	if err := s.init(context.Background()); err != nil {
		s.release()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	go s.run()
	return s, nil
}

// OpenReadOnly opens the store in the existing SQLite file at path for reading only, beside
// the one process that may have it open to write (Open): After, Operation, Sessions and
// Operations read what that process has committed; Append and Recover return an error wrapping
// ErrReadOnly.
func OpenReadOnly(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	db, err := sqlitefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	var version int
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		db.Close()
		if err == nil {
			err = fmt.Errorf("schema version %d, this labmate knows %d", version, schemaVersion)
		}
		return nil, fmt.Errorf("sqlite: opening %s: not a labmate store it can read: %w", path, err)
	}
	s := &Store{path: path, db: db, sessions: make(map[string]*session), writes: make(chan write), stopped: make(chan struct{})}
	go func() { // nothing is written: a flush only waits for what the writer process committed
		defer close(s.stopped)
		for w := range s.writes {
			if w.done != nil {
				w.done <- nil
			}
		}
	}()
	return s, nil
}

// init takes the writer's connection, creates or checks the schema and prepares the writer's
// statements.
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
	if _, err := s.w.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err := migrate(ctx, s.w); err != nil {
		s.w.ExecContext(ctx, "ROLLBACK")
		return err
	}
	if _, err := s.w.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	for stmt, query := range map[**sql.Stmt]string{
		&s.insertOp:  "INSERT INTO operations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		&s.updateOp:  "UPDATE operations SET state = ?, updated = ?, last_seq = ? WHERE session_id = ? AND operation_id = ?",
		&s.insertMsg: "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)",
	} {
		if *stmt, err = s.w.PrepareContext(ctx, query); err != nil {
			return fmt.Errorf("preparing %q: %w", query, err)
		}
	}
	return nil
}

// migrate creates the schema in a new file and refuses one it does not know.
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

// Append implements protocol.Store.
func (s *Store) Append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, error) {
	c, done, err := s.append(ctx, m)
	if err != nil || done == nil {
		return c, err
	}
	// The message is in the queue and will be committed: wait for that whatever ctx says.
	if err := <-done; err != nil {
		return nil, err
	}
	return c, nil
}

// append validates m, gives it its seq and queues it for the writer. For a terminal message it
// returns a channel that receives the result of the commit.
func (s *Store) append(ctx context.Context, m *protocol.EnhancedMessage) (*protocol.EnhancedMessage, chan error, error) {
	switch {
	case s.lock == nil:
		return nil, nil, fmt.Errorf("%w: %s", ErrReadOnly, s.path)
	case m == nil:
		return nil, nil, fmt.Errorf("%w: nil message", protocol.ErrInvalidMessage)
	case m.SessionID == "":
		return nil, nil, fmt.Errorf("%w: %s without session_id", protocol.ErrInvalidMessage, m.Type)
	case m.OperationID == "":
		return nil, nil, fmt.Errorf("%w: %s without operation_id", protocol.ErrInvalidMessage, m.Type)
	}
	if err := s.readable(); err != nil {
		return nil, nil, err
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
		return nil, nil, fmt.Errorf("session %s: %w", c.SessionID, err)
	}
	if c.Type.Terminal() {
		w.done = make(chan error, 1)
	}

	sess, err := s.lockSession(ctx, c.SessionID)
	if err != nil {
		return nil, nil, err
	}
	defer sess.mu.Unlock()
	from := sess.ops[c.OperationID]
	w.opens = from == ""
	if w.state, err = protocol.Next(from, c.Type); err != nil {
		return nil, nil, fmt.Errorf("session %s, operation %s: %w", c.SessionID, c.OperationID, err)
	}
	c.Seq, w.sess = sess.last+1, sess
	if err := s.send(ctx, w); err != nil {
		return nil, nil, fmt.Errorf("sqlite: appending to session %s: %w", c.SessionID, err)
	}
	sess.last, sess.ops[c.OperationID] = c.Seq, w.state
	return &c, w.done, nil
}

// send queues w for the writer.
func (s *Store) send(ctx context.Context, w write) error {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return protocol.ErrClosed
	}
	if err := s.failed.Load(); err != nil {
		return *err
	}
	select {
	case s.writes <- w:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lockSession returns session id locked, its state loaded from the file on first use.
func (s *Store) lockSession(ctx context.Context, id string) (*session, error) {
	s.mu.Lock()
	sess := s.sessions[id]
	if sess == nil {
		sess = &session{id: id}
		s.sessions[id] = sess
	}
	s.mu.Unlock()

	sess.mu.Lock()
	if sess.loaded {
		return sess, nil
	}
	if err := s.load(ctx, sess); err != nil {
		sess.mu.Unlock()
		return nil, fmt.Errorf("sqlite: loading session %s from %s: %w", id, s.path, err)
	}
	sess.loaded = true
	return sess, nil
}

// load reads a session's last seq and operation states. Nothing of the session is in the
// writer's queue yet, so the file is up to date.
func (s *Store) load(ctx context.Context, sess *session) error {
	if err := s.db.QueryRowContext(ctx, lastSeq, sess.id).Scan(&sess.last); err != nil {
		return err
	}
	sess.committed.Store(sess.last)
	rows, err := s.db.QueryContext(ctx, "SELECT operation_id, state FROM operations WHERE session_id = ?", sess.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	sess.ops = make(map[string]protocol.State)
	for rows.Next() {
		var op string
		var state protocol.State
		if err := rows.Scan(&op, &state); err != nil {
			return err
		}
		sess.ops[op] = state
	}
	return rows.Err()
}

// run is the writer: it commits whatever has been queued in one transaction, again and again,
// until Close closes the queue.
func (s *Store) run() {
	defer close(s.stopped)
	batch := make([]write, 0, maxBatch)
	for w := range s.writes {
		batch = append(batch[:0], w)
	fill:
		for len(batch) < maxBatch {
			select {
			case w, ok := <-s.writes:
				if !ok {
					break fill
				}
				batch = append(batch, w)
			default:
				break fill
			}
		}

		var err error
		if p := s.failed.Load(); p != nil {
			err = *p
		} else if err = s.commit(batch); err != nil {
			err = fmt.Errorf("sqlite: writing to %s: %w", s.path, err)
			s.failed.Store(&err) // seqs were handed out for what is lost: refuse more
		}
		for _, w := range batch {
			if w.m != nil && err == nil {
				w.sess.committed.Store(w.m.Seq)
			}
			if w.done != nil {
				w.done <- err
			}
		}
	}
}

// commit writes the messages of batch and their operations in one transaction.
func (s *Store) commit(batch []write) (err error) {
	ctx := context.Background()
	updates := make(map[[2]string]*write) // operation → its last message in the batch
	begun := false
	defer func() {
		if err != nil && begun {
			s.w.ExecContext(ctx, "ROLLBACK")
		}
	}()
	for i := range batch {
		w := &batch[i]
		m := w.m
		if m == nil {
			continue
		}
		if !begun {
			if _, err := s.w.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
				return err
			}
			begun = true
		}
		if w.opens {
			if _, err := s.insertOp.ExecContext(ctx, m.SessionID, m.OperationID, w.kind, w.state, m.Timestamp, m.Timestamp, m.Seq, m.Seq); err != nil {
				return fmt.Errorf("operation %s of session %s: %w", m.OperationID, m.SessionID, err)
			}
		} else {
			updates[[2]string{m.SessionID, m.OperationID}] = w
		}
		payload := []byte(m.Payload)
		if payload == nil {
			payload = []byte{}
		}
		if _, err := s.insertMsg.ExecContext(ctx, m.SessionID, m.Seq, m.ID, m.Type, m.OperationID, m.Timestamp, payload); err != nil {
			return fmt.Errorf("message %d of session %s: %w", m.Seq, m.SessionID, err)
		}
	}
	if !begun {
		return nil
	}
	for _, w := range updates {
		m := w.m
		if _, err := s.updateOp.ExecContext(ctx, w.state, m.Timestamp, m.Seq, m.SessionID, m.OperationID); err != nil {
			return fmt.Errorf("operation %s of session %s: %w", m.OperationID, m.SessionID, err)
		}
	}
	_, err = s.w.ExecContext(ctx, "COMMIT")
	return err
}

// flush returns once everything queued before the call is committed.
func (s *Store) flush(ctx context.Context) error {
	done := make(chan error, 1)
	if err := s.send(ctx, write{done: done}); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sync returns once every message appended before it is committed: durable, as a terminal
// message is when Append returns.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.readable(); err != nil {
		return err
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

// snapshot returns the session's last seq, after making sure everything up to it is committed.
// It does not add the session to those in memory: reading unknown sessions costs nothing.
func (s *Store) snapshot(ctx context.Context, id string) (int64, error) {
	if err := s.readable(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	var last int64
	loaded := false
	if sess != nil {
		sess.mu.Lock()
		last, loaded = sess.last, sess.loaded
		sess.mu.Unlock()
	}
	switch {
	case !loaded: // nothing of the session is queued: the file is up to date
		if err := s.db.QueryRowContext(ctx, lastSeq, id).Scan(&last); err != nil {
			return 0, fmt.Errorf("sqlite: reading session %s from %s: %w", id, s.path, err)
		}
	case sess.committed.Load() < last:
		if err := s.flush(ctx); err != nil {
			return 0, fmt.Errorf("sqlite: reading session %s: %w", id, err)
		}
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
	if err := s.flush(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: listing sessions: %w", err)
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

// Recover implements protocol.Store.
func (s *Store) Recover(ctx context.Context, keep func(sessionID, operationID string) bool) ([]string, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if s.lock == nil {
		return nil, fmt.Errorf("%w: %s", ErrReadOnly, s.path)
	}
	if err := s.flush(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: recovering: %w", err)
	}
	rows, err := s.db.QueryContext(ctx,
		"SELECT session_id, operation_id, state FROM operations WHERE state NOT IN (?, ?, ?, ?) AND kind != ? ORDER BY rowid",
		protocol.Completed, protocol.FailedState, protocol.Ended, protocol.Open, protocol.KindJob)
	if err != nil {
		return nil, fmt.Errorf("sqlite: finding unfinished operations in %s: %w", s.path, err)
	}
	type stream struct {
		session, op string
		state       protocol.State
	}
	var open []stream
	for rows.Next() {
		var k stream
		if err := rows.Scan(&k.session, &k.op, &k.state); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: finding unfinished operations in %s: %w", s.path, err)
		}
		open = append(open, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: finding unfinished operations in %s: %w", s.path, err)
	}

	// Queue every closing message, then wait for their commits.
	var closed []string
	var pending []chan error
	for _, k := range open {
		if keep != nil && keep(k.session, k.op) {
			continue
		}
		_, done, err := s.append(ctx, protocol.Restarted(k.session, k.op, k.state))
		switch {
		case err == nil:
			closed = append(closed, k.op)
			pending = append(pending, done)
		case errors.Is(err, protocol.ErrIllegalTransition): // it ended meanwhile
		default:
			return nil, err
		}
	}
	for _, done := range pending {
		if err := <-done; err != nil {
			return nil, err
		}
	}
	return closed, nil
}

// Close implements protocol.Store: it commits what is queued and closes the file.
func (s *Store) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	close(s.writes)
	s.closeMu.Unlock()
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

// release closes the statements and connections. The last connection to close checkpoints the
// WAL into the file and removes it, unless a statement is left open.
func (s *Store) release() error {
	var errs []error
	for _, stmt := range []*sql.Stmt{s.insertOp, s.updateOp, s.insertMsg} {
		if stmt != nil {
			errs = append(errs, stmt.Close())
		}
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	errs = append(errs, s.db.Close())
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}
