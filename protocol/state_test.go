package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNext(t *testing.T) {
	// One letter per state so the table reads as a matrix; x and u stand for the two kinds of
	// rejection: an illegal transition and an unknown type.
	const (
		N = State("")
		P = Pending
		A = Acknowledged
		S = Started
		I = InProgress
		C = Completed
		F = FailedState
		R = Running
		E = Ended
		x = State("<illegal>")
		u = State("<unknown type>")
	)
	types := [...]Type{TypeRequest, TypeAck, TypeStart, TypeProgress, TypeComplete, TypeFailed, TypeInterrupt, TypeRunEvent, TypeRunEnd, "operation_bogus"}
	// tests[from][i] is the state after a message of type types[i].
	tests := map[State][len(types)]State{
		// request ack start progress complete failed interrupt run_event run_end bogus
		N: {P, x, x, x, x, x, x, R, E, u},
		P: {x, A, x, x, x, F, P, x, x, u},
		A: {x, x, S, x, x, F, A, x, x, u},
		S: {x, x, x, I, C, F, S, x, x, u},
		I: {x, x, x, I, C, F, I, x, x, u},
		C: {x, x, x, x, x, x, x, x, x, u},
		F: {x, x, x, x, x, x, x, x, x, u},
		R: {x, x, x, x, x, x, R, R, E, u},
		E: {x, x, x, x, x, x, x, x, x, u},
	}
	for from, want := range tests {
		t.Run("from="+string(from), func(t *testing.T) {
			// Keyed by type, so a diff names the message type.
			got := make(map[Type]State)
			wantByType := make(map[Type]State)
			for i, typ := range types {
				wantByType[typ] = want[i]
				to, err := Next(from, typ)
				switch {
				case err == nil:
					got[typ] = to
					continue
				case errors.Is(err, ErrIllegalTransition):
					got[typ] = x
					if !strings.Contains(err.Error(), string(typ)) || !strings.Contains(err.Error(), string(from)) {
						t.Errorf("Next(%q, %s) error %q does not name the state and the type", from, typ, err)
					}
				case errors.Is(err, ErrUnknownType):
					got[typ] = u
				default:
					t.Errorf("Next(%q, %s) error %v wraps no sentinel", from, typ, err)
				}
				if to != from {
					t.Errorf("Next(%q, %s) = %q with an error, want the state unchanged", from, typ, to)
				}
			}
			if diff := cmp.Diff(wantByType, got); diff != "" {
				t.Errorf("Next(%q, …) mismatch (-want +got):\n%s", from, diff)
			}
		})
	}
}

func TestNextErrorText(t *testing.T) {
	tests := []struct {
		from State
		typ  Type
		want string
	}{
		{Pending, TypeStart, "protocol: illegal transition: operation_start in state PENDING"},
		{"", TypeAck, "protocol: illegal transition: operation_ack for unknown operation"},
		{Started, "bogus", `protocol: unknown message type "bogus"`},
	}
	for _, tt := range tests {
		_, err := Next(tt.from, tt.typ)
		if err == nil {
			t.Fatalf("Next(%q, %s) succeeded, want an error", tt.from, tt.typ)
		}
		if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
			t.Errorf("Next(%q, %s) error mismatch (-want +got):\n%s", tt.from, tt.typ, diff)
		}
	}
}

func TestStateTerminal(t *testing.T) {
	want := map[State]bool{
		"":           false,
		Pending:      false,
		Acknowledged: false,
		Started:      false,
		InProgress:   false,
		Completed:    true,
		FailedState:  true,
		Running:      false,
		Ended:        true,
	}
	got := make(map[State]bool)
	for s := range want {
		got[s] = s.Terminal()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Terminal mismatch (-want +got):\n%s", diff)
	}
}
