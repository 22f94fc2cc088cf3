package protocol

import (
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ErrInvalidMessage is wrapped by SessionLog.Append for a message it cannot take: nil, without an
// operation id, or for another session.
var ErrInvalidMessage = errors.New("protocol: invalid message")

// SessionLog is the append-only, in-memory log of one session. It assigns every message its seq,
// enforces the operation state machine, and lets followers resume with After. It is safe for
// concurrent use. Create it with NewSessionLog.
//
// Messages handed out by the log are copies; their Payload bytes are shared with the log and
// must not be modified.
type SessionLog struct {
	sessionID string

	mu     sync.Mutex
	msgs   []EnhancedMessage // msgs[i].Seq == i+1; elements are never modified once appended
	states map[string]State  // operation id → current state
	wait   chan struct{}     // closed and replaced at each Append
}

// NewSessionLog returns an empty log for session sessionID.
func NewSessionLog(sessionID string) *SessionLog {
	return &SessionLog{
		sessionID: sessionID,
		states:    make(map[string]State),
		wait:      make(chan struct{}),
	}
}

// Append validates m, applies it to its operation's state (see Next), gives it the next seq and
// stores it. It returns the stored message: a copy of m with SessionID, ID (a fresh UUID) and
// Timestamp (now) filled in when empty, and Seq set; m itself is not modified and any Seq in it
// is ignored. A rejected message leaves the log unchanged and consumes no seq.
//
// The caller must not modify m.Payload afterwards: the log shares those bytes.
func (l *SessionLog) Append(m *EnhancedMessage) (*EnhancedMessage, error) {
	switch {
	case m == nil:
		return nil, fmt.Errorf("%w: nil message", ErrInvalidMessage)
	case m.OperationID == "":
		return nil, fmt.Errorf("%w: %s without operation_id", ErrInvalidMessage, m.Type)
	case m.SessionID != "" && m.SessionID != l.sessionID:
		return nil, fmt.Errorf("%w: session_id %q in the log of session %q", ErrInvalidMessage, m.SessionID, l.sessionID)
	}
	c := *m
	c.SessionID = l.sessionID
	if c.ID == "" {
		c.ID = uuid.NewString()
	}
	if c.Timestamp == 0 {
		c.Timestamp = UnixSeconds(time.Now())
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	to, err := Next(l.states[c.OperationID], c.Type)
	if err != nil {
		return nil, err
	}
	c.Seq = int64(len(l.msgs)) + 1
	l.msgs = append(l.msgs, c)
	l.states[c.OperationID] = to
	close(l.wait)
	l.wait = make(chan struct{})
	return &c, nil
}

// After yields every message with Seq > seq in order, as of the call: messages appended while
// iterating are not seen. After(0) yields the whole log; a negative seq is the same as 0.
func (l *SessionLog) After(seq int64) iter.Seq[*EnhancedMessage] {
	l.mu.Lock()
	// Appending never touches the elements below len, so this snapshot may be read unlocked.
	snap := l.msgs[min(max(seq, 0), int64(len(l.msgs))):]
	l.mu.Unlock()
	return func(yield func(*EnhancedMessage) bool) {
		for _, m := range snap {
			if !yield(&m) {
				return
			}
		}
	}
}

// State returns the current state of operation operationID, or "" if the log has never seen it.
func (l *SessionLog) State(operationID string) State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.states[operationID]
}

// Last returns the highest seq in the log, 0 when it is empty.
func (l *SessionLog) Last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.msgs))
}

// Wait returns a channel that is closed by the next successful Append. A follower takes the
// channel before reading, so nothing appended in between is missed:
//
//	for {
//		ch := l.Wait()
//		for m := range l.After(seq) {
//			seq = m.Seq
//			// handle m
//		}
//		<-ch
//	}
func (l *SessionLog) Wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wait
}
