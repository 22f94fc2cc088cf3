package protocol

import (
	"errors"
	"fmt"
)

// State is where an operation is in its lifecycle. The zero value "" means the operation is not
// known yet (no operation_request has been seen).
type State string

// Operation states (PROTOCOL.md). FailedState is not called Failed because Failed is the
// operation_failed payload.
const (
	Pending      State = "PENDING"
	Acknowledged State = "ACKNOWLEDGED"
	Started      State = "STARTED"
	InProgress   State = "IN_PROGRESS"
	Completed    State = "COMPLETED"
	FailedState  State = "FAILED"
)

// The states of a run's stream: RUNNING from its first run_event, ENDED by its run_end, and
// RUNNING again after a run_resume.
const (
	Running State = "RUNNING"
	Ended   State = "ENDED"
)

// Open is the state of a session's own stream (session_update messages), which never ends.
const Open State = "OPEN"

// Terminal reports whether s ends the operation or run: nothing but a run_resume (of an ended
// run) may follow it.
func (s State) Terminal() bool { return s == Completed || s == FailedState || s == Ended }

// Live reports whether a stream in state s was cut short by a server that stopped: an
// operation or run not ended, unlike a session's own stream, which is always open.
func (s State) Live() bool { return !s.Terminal() && s != Open }

// Errors Next returns, wrapped.
var (
	ErrIllegalTransition = errors.New("protocol: illegal transition")
	ErrUnknownType       = errors.New("protocol: unknown message type")
)

// transitions lists every legal move; anything absent is illegal. Terminal states have no entry,
// so they absorb. An interrupt asks for a stop and leaves the state alone: the operation_failed
// that follows records the outcome (for a run's stream — a campaign labmate campaign run
// plays — its run_end). A run's stream may consist of its run_end alone: a run that
// failed before its first event. Whether an ended run may be resumed is its run_end's to say
// (RunEnd.Resumable), checked by whoever resumes it.
var transitions = map[State]map[Type]State{
	"": {TypeRequest: Pending, TypeRunEvent: Running, TypeRunCheckpoint: Running, TypeRunEnd: Ended, TypeSessionUpdate: Open},
	Running: {
		TypeRunEvent:      Running,
		TypeRunCheckpoint: Running,
		TypeRunEnd:        Ended,
		TypeInterrupt:     Running,
	},
	Ended: {TypeRunResume: Running, TypeRunCheckpoint: Ended},
	Open:  {TypeSessionUpdate: Open},
	Pending: {
		TypeAck:       Acknowledged,
		TypeFailed:    FailedState,
		TypeInterrupt: Pending,
	},
	Acknowledged: {
		TypeStart:     Started,
		TypeFailed:    FailedState,
		TypeInterrupt: Acknowledged,
	},
	Started: {
		TypeProgress:  InProgress,
		TypeComplete:  Completed, // a cell with no output
		TypeFailed:    FailedState,
		TypeInterrupt: Started,
	},
	InProgress: {
		TypeProgress:  InProgress,
		TypeComplete:  Completed,
		TypeFailed:    FailedState,
		TypeInterrupt: InProgress,
	},
}

// Next returns the state an operation in state from moves to when a message of type t is applied.
// An illegal move returns from and an error wrapping ErrIllegalTransition; a type that is not
// Valid returns from and an error wrapping ErrUnknownType.
func Next(from State, t Type) (State, error) {
	if !t.Valid() {
		return from, fmt.Errorf("%w %q", ErrUnknownType, t)
	}
	to, ok := transitions[from][t]
	if !ok {
		if from == "" {
			return from, fmt.Errorf("%w: %s for unknown operation", ErrIllegalTransition, t)
		}
		return from, fmt.Errorf("%w: %s in state %s", ErrIllegalTransition, t, from)
	}
	return to, nil
}
