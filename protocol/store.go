package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

// Store keeps every session's append-only message log: the streams of its operations
// (operation_request … terminal) and agent runs (run_event … run_end). Implementations: NewMemStore (tests,
// ephemeral), sqlite.Open (the embedded default, which many processes may append to at once). A Store is safe for concurrent use: appends to
// one session are serialised, so its seq stays gap-free; different sessions proceed concurrently.
//
// Append errors wrap ErrInvalidMessage, ErrUnknownType or ErrIllegalTransition for a message it
// rejects; every method wraps ErrClosed once Close has been called.
type Store interface {
	// Append validates m against its operation's state machine (Next; an illegal transition or
	// unknown type is rejected and nothing is stored), fills id/timestamp when empty, assigns the
	// session's next gap-free seq, stores it and returns the stored copy. A message for a
	// session never seen creates it; m must name its session and operation, and its payload
	// must pass Check (the kind Check returns for the stream's first message is listed by
	// Operations).
	// m is not modified, but the store keeps m.Payload: the caller must not modify it afterwards.
	//
	// A terminal message (complete, failed, run_end) is durable — committed — when Append returns; other
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
	// Operations lists a session's operations and runs in the order of their first messages;
	// an unknown session is an error wrapping ErrUnknownSession.
	Operations(ctx context.Context, sessionID string) ([]OperationInfo, error)
	// Recover closes every operation and run left non-terminal (by a crash) with the message of
	// Restarted and returns their ids, except the operations of kind KindJob, whose jobs run on
	// without the server, and those keep (when not nil) keeps: streams another process is
	// still writing (a store several processes write, such as sqlite's, also keeps by itself
	// those whose writing process is still running). It is called once at start-up.
	Recover(ctx context.Context, keep func(sessionID, operationID string) bool) ([]string, error)
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
	Kind    string  `json:"kind"` // from its operation_request payload ("exec", …), or KindAgentRun
	State   State   `json:"state"`
	Created float64 `json:"created"` // Unix seconds: the timestamp of its first message
	Updated float64 `json:"updated"` // Unix seconds: the timestamp of its latest message
}

// Restarted is the message Store.Recover appends to close a stream that was left in state s
// when the server stopped: a run_end for a run, an operation_failed for an operation.
func Restarted(sessionID, operationID string, s State) *EnhancedMessage {
	what := "operation"
	if s == Running {
		what = "run"
	}
	return Cut(sessionID, operationID, s, ReasonServerRestart, "the server stopped while the "+what+" ran")
}

// Cut is the message that ends a stream left in state s by a writer that stopped without
// ending it, for reason (why says more): a run_end for a run (Running), an operation_failed
// for an operation.
func Cut(sessionID, operationID string, s State, reason Reason, why string) *EnhancedMessage {
	t, payload := TypeFailed, any(Failed{Reason: reason, Error: why})
	if s == Running {
		t, payload = TypeRunEnd, RunEnd{Reason: reason, Error: why}
	}
	m, err := NewMessage(t, sessionID, operationID, payload)
	if err != nil {
		panic(err) // Failed and RunEnd always encode
	}
	return m
}

// Check validates what a Store checks of m's payload before appending m, and returns the kind
// of the stream m opens when it is the first message of its operation: an operation_request's
// "kind", a run_event's "kind" (KindAgentRun when absent) or KindAgentRun for a run's other
// messages, KindSession for a session_update. An operation_request, a run_event and a run_resume
// must carry a JSON object, a run_end a RunEnd with a reason, a session_update a SessionUpdate
// on the stream SessionStream, a run_checkpoint a JSON object. Its errors wrap ErrInvalidMessage.
func Check(m *EnhancedMessage) (kind string, err error) {
	switch m.Type {
	case TypeRequest:
		var r *struct {
			Kind string `json:"kind"`
		}
		if err = json.Unmarshal(m.Payload, &r); err == nil && r == nil {
			err = errors.New("null")
		}
		if err != nil {
			return "", fmt.Errorf("%w: operation_request payload of operation %s: %w", ErrInvalidMessage, m.OperationID, err)
		}
		return r.Kind, nil
	case TypeRunEvent, TypeRunResume, TypeRunCheckpoint:
		var r struct {
			Kind string `json:"kind"`
		}
		if !isObject(m.Payload) || json.Unmarshal(m.Payload, &r) != nil {
			return "", fmt.Errorf("%w: %s payload of run %s is not a JSON object", ErrInvalidMessage, m.Type, m.OperationID)
		}
		if r.Kind != "" {
			return r.Kind, nil
		}
	case TypeSessionUpdate:
		var u SessionUpdate
		if m.OperationID != SessionStream || !isObject(m.Payload) || json.Unmarshal(m.Payload, &u) != nil {
			return "", fmt.Errorf("%w: session_update of session %s: want a {name, closed} object on operation %q, got %s on %q",
				ErrInvalidMessage, m.SessionID, SessionStream, m.Payload, m.OperationID)
		}
		return KindSession, nil
	case TypeRunEnd:
		var e RunEnd
		if err := json.Unmarshal(m.Payload, &e); err != nil || e.Reason == "" {
			return "", fmt.Errorf("%w: run_end payload of run %s: want a reason: %s", ErrInvalidMessage, m.OperationID, m.Payload)
		}
	default:
		return "", nil // opens no stream
	}
	return KindAgentRun, nil
}

// isObject reports whether raw is one JSON object.
func isObject(raw []byte) bool {
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i < len(raw) && raw[i] == '{' && json.Valid(raw)
}
