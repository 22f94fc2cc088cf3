package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

// Store keeps every session's append-only message log. Implementations: NewMemStore (tests,
// ephemeral), sqlite.Open (the embedded default). A Store is safe for concurrent use: appends to
// one session are serialised, so its seq stays gap-free; different sessions proceed concurrently.
//
// Append errors wrap ErrInvalidMessage, ErrUnknownType or ErrIllegalTransition for a message it
// rejects; every method wraps ErrClosed once Close has been called.
type Store interface {
	// Append validates m against its operation's state machine (Next; an illegal transition or
	// unknown type is rejected and nothing is stored), fills id/timestamp when empty, assigns the
	// session's next gap-free seq, stores it and returns the stored copy. A message for a
	// session never seen creates it; m must name its session and operation, and an
	// operation_request must carry a JSON object payload (its "kind" is listed by Operations).
	// m is not modified, but the store keeps m.Payload: the caller must not modify it afterwards.
	//
	// A terminal message (complete/failed) is durable — committed — when Append returns; other
	// messages may be committed in groups shortly after, but always in seq order and never lost
	// on a clean Close.
	Append(ctx context.Context, m *EnhancedMessage) (*EnhancedMessage, error)
	// After yields the session's messages with seq > after, in order: a snapshot of what was
	// appended before the call. A negative after is the same as 0. An unknown session yields
	// one error wrapping ErrUnknownSession.
	After(ctx context.Context, sessionID string, after int64) iter.Seq2[*EnhancedMessage, error]
	// Operation yields one operation's messages in order, or one error wrapping
	// ErrUnknownSession or ErrUnknownOperation.
	Operation(ctx context.Context, sessionID, operationID string) iter.Seq2[*EnhancedMessage, error]
	// Sessions lists the sessions, oldest first.
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// Operations lists a session's operations in the order of their requests; an unknown
	// session is an error wrapping ErrUnknownSession.
	Operations(ctx context.Context, sessionID string) ([]OperationInfo, error)
	// Recover closes every operation left non-terminal (by a crash) with the operation_failed of
	// RestartFailed and returns their ids. It is called once at start-up.
	Recover(ctx context.Context) ([]string, error)
	// Close commits what is pending and releases the store. Closing twice is not an error.
	Close() error
}

// Errors a Store returns, wrapped.
var (
	ErrUnknownSession   = errors.New("protocol: unknown session")
	ErrUnknownOperation = errors.New("protocol: unknown operation")
	ErrClosed           = errors.New("protocol: store closed")
)

// SessionInfo describes one session of a Store.
type SessionInfo struct {
	ID         string  `json:"id"`
	Created    float64 `json:"created"`    // Unix seconds: the timestamp of its first message
	LastSeq    int64   `json:"last_seq"`   // the seq of its latest message
	Operations int     `json:"operations"` // how many operations it has had
}

// OperationInfo describes one operation of a session.
type OperationInfo struct {
	ID      string  `json:"id"`
	Kind    string  `json:"kind"` // from its operation_request payload: "exec", …
	State   State   `json:"state"`
	Created float64 `json:"created"` // Unix seconds: the timestamp of its request
	Updated float64 `json:"updated"` // Unix seconds: the timestamp of its latest message
}

// RestartFailed is the message Store.Recover appends to close an operation that was running when
// the server stopped.
func RestartFailed(sessionID, operationID string) *EnhancedMessage {
	m, err := NewMessage(TypeFailed, sessionID, operationID,
		Failed{Reason: ReasonServerRestart, Error: "the server stopped while the operation ran"})
	if err != nil {
		panic(err) // Failed always encodes
	}
	return m
}

// RequestKind returns the kind of an operation_request payload, or an error wrapping
// ErrInvalidMessage when the payload is not a JSON object.
func RequestKind(m *EnhancedMessage) (string, error) {
	var r *struct {
		Kind string `json:"kind"`
	}
	err := json.Unmarshal(m.Payload, &r)
	if err == nil && r == nil {
		err = errors.New("null")
	}
	if err != nil {
		return "", fmt.Errorf("%w: operation_request payload of operation %s: %w", ErrInvalidMessage, m.OperationID, err)
	}
	return r.Kind, nil
}
