package protocol

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// NewMemStore returns a Store that keeps everything in memory, one SessionLog per session: for tests and
// ephemeral servers. Its Append is durable as soon as it returns, until the process ends.
func NewMemStore() Store {
	return &memStore{sessions: make(map[string]*memSession)}
}

type memStore struct {
	closed atomic.Bool

	mu       sync.Mutex
	sessions map[string]*memSession
}

// memSession is a SessionLog plus what Operations lists. Its SessionLog may be empty after a rejected first
// Append; such a session does not exist yet.
type memSession struct {
	log *SessionLog

	mu  sync.Mutex // serialises Append, so ops follows the log
	ops []*OperationInfo
	idx map[string]int // operation id → index in ops
}

func (s *memStore) Append(ctx context.Context, m *EnhancedMessage) (*EnhancedMessage, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if m == nil || m.SessionID == "" {
		return nil, fmt.Errorf("%w: message without session_id", ErrInvalidMessage)
	}
	kind, err := Check(m)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", m.SessionID, err)
	}

	s.mu.Lock()
	sess := s.sessions[m.SessionID]
	if sess == nil {
		sess = &memSession{log: NewSessionLog(m.SessionID), idx: make(map[string]int)}
		s.sessions[m.SessionID] = sess
	}
	s.mu.Unlock()

	sess.mu.Lock()
	defer sess.mu.Unlock()
	c, err := sess.log.Append(m)
	if err != nil {
		return nil, fmt.Errorf("session %s, operation %s: %w", m.SessionID, m.OperationID, err)
	}
	if _, ok := sess.idx[c.OperationID]; !ok { // its first message
		sess.idx[c.OperationID] = len(sess.ops)
		sess.ops = append(sess.ops, &OperationInfo{ID: c.OperationID, Kind: kind, Created: c.Timestamp})
	}
	op := sess.ops[sess.idx[c.OperationID]]
	op.State, op.Updated = sess.log.State(c.OperationID), c.Timestamp
	return c, nil
}

// session returns the session's SessionLog, or an error wrapping ErrUnknownSession or ErrClosed.
func (s *memStore) session(id string) (*memSession, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	if sess == nil || sess.log.Last() == 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknownSession, id)
	}
	return sess, nil
}

func (s *memStore) After(ctx context.Context, sessionID string, after int64) iter.Seq2[*EnhancedMessage, error] {
	sess, err := s.session(sessionID)
	if err != nil {
		return func(yield func(*EnhancedMessage, error) bool) { yield(nil, err) }
	}
	snap := sess.log.After(after)
	return func(yield func(*EnhancedMessage, error) bool) {
		for m := range snap {
			if !yield(m, nil) {
				return
			}
		}
	}
}

func (s *memStore) Operation(ctx context.Context, sessionID, operationID string) iter.Seq2[*EnhancedMessage, error] {
	return func(yield func(*EnhancedMessage, error) bool) {
		sess, err := s.session(sessionID)
		if err != nil {
			yield(nil, err)
			return
		}
		found := false
		for m := range sess.log.After(0) {
			if m.OperationID != operationID {
				continue
			}
			found = true
			if !yield(m, nil) {
				return
			}
		}
		if !found {
			yield(nil, fmt.Errorf("%w %q in session %s", ErrUnknownOperation, operationID, sessionID))
		}
	}
}

func (s *memStore) Sessions(ctx context.Context) ([]SessionInfo, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	s.mu.Lock()
	all := slices.Collect(maps.Values(s.sessions))
	s.mu.Unlock()

	var infos []SessionInfo
	for _, sess := range all {
		sess.mu.Lock()
		if last := sess.log.Last(); last > 0 {
			infos = append(infos, SessionInfo{
				ID:         sess.log.sessionID,
				Created:    sess.ops[0].Created, // the first message opened the first stream
				LastSeq:    last,
				Operations: len(sess.ops),
			})
		}
		sess.mu.Unlock()
	}
	slices.SortFunc(infos, func(a, b SessionInfo) int {
		return cmp.Or(cmp.Compare(a.Created, b.Created), cmp.Compare(a.ID, b.ID))
	})
	return infos, nil
}

func (s *memStore) Operations(ctx context.Context, sessionID string) ([]OperationInfo, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	infos := make([]OperationInfo, len(sess.ops))
	for i, op := range sess.ops {
		infos[i] = *op
	}
	return infos, nil
}

func (s *memStore) Recover(ctx context.Context, keep func(sessionID, operationID string) bool) ([]string, error) {
	sessions, err := s.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	var closed []string
	for _, si := range sessions {
		ops, err := s.Operations(ctx, si.ID)
		if err != nil {
			return closed, err
		}
		for _, op := range ops {
			if !op.State.Live() || op.Kind == KindJob || keep != nil && keep(si.ID, op.ID) {
				continue
			}
			_, err := s.Append(ctx, Restarted(si.ID, op.ID, op.State))
			switch {
			case err == nil:
				closed = append(closed, op.ID)
			case errors.Is(err, ErrIllegalTransition): // it ended meanwhile
			default:
				return closed, err
			}
		}
	}
	return closed, nil
}

func (s *memStore) Close() error {
	s.closed.Store(true)
	return nil
}
