package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// lifecycle is one exec operation from request to completion.
var lifecycle = []Type{TypeRequest, TypeAck, TypeStart, TypeProgress, TypeProgress, TypeComplete}

func msg(t Type, op string) *EnhancedMessage {
	return &EnhancedMessage{Type: t, OperationID: op, Payload: json.RawMessage(`{}`)}
}

// mustAppend appends a message of each type to operation op.
func mustAppend(t *testing.T, l *SessionLog, op string, types ...Type) {
	t.Helper()
	for _, typ := range types {
		if _, err := l.Append(msg(typ, op)); err != nil {
			t.Fatalf("Append(%s, %s): %v", typ, op, err)
		}
	}
}

func seqs(l *SessionLog, after int64) []int64 {
	var s []int64
	for m := range l.After(after) {
		s = append(s, m.Seq)
	}
	return s
}

func TestLogAppend(t *testing.T) {
	l := NewSessionLog("s1")
	in := msg(TypeRequest, "a")
	got, err := l.Append(in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 1 || got.SessionID != "s1" || got.Timestamp == 0 {
		t.Errorf("Append = seq %d, session %q, timestamp %v; want 1, s1, now", got.Seq, got.SessionID, got.Timestamp)
	}
	if _, err := uuid.Parse(got.ID); err != nil {
		t.Errorf("Append filled id %q: %v", got.ID, err)
	}
	if diff := cmp.Diff(msg(TypeRequest, "a"), in); diff != "" {
		t.Errorf("Append modified its argument (-want +got):\n%s", diff)
	}

	// Given id, session and timestamp are kept; a given seq is not.
	given := &EnhancedMessage{ID: "m2", Type: TypeRequest, SessionID: "s1", OperationID: "b", Timestamp: 12.5, Seq: 99}
	got, err = l.Append(given)
	if err != nil {
		t.Fatal(err)
	}
	want := *given
	want.Seq = 2
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("Append mismatch (-want +got):\n%s", diff)
	}

	mustAppend(t, l, "a", TypeAck, TypeStart)
	mustAppend(t, l, "b", TypeAck)
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 5}, seqs(l, 0)); diff != "" {
		t.Errorf("seqs mismatch (-want +got):\n%s", diff)
	}
	if got := l.Last(); got != 5 {
		t.Errorf("Last() = %d, want 5", got)
	}
	states := map[string]State{"a": l.State("a"), "b": l.State("b"), "c": l.State("c")}
	if diff := cmp.Diff(map[string]State{"a": Started, "b": Acknowledged, "c": ""}, states); diff != "" {
		t.Errorf("State mismatch (-want +got):\n%s", diff)
	}
}

func TestLogAppendRejects(t *testing.T) {
	tests := []struct {
		name string
		m    *EnhancedMessage
		want error
	}{
		{"nil", nil, ErrInvalidMessage},
		{"no operation", msg(TypeAck, ""), ErrInvalidMessage},
		{"other session", &EnhancedMessage{Type: TypeAck, SessionID: "s2", OperationID: "a"}, ErrInvalidMessage},
		{"unknown type", msg("operation_bogus", "a"), ErrUnknownType},
		{"out of order", msg(TypeProgress, "a"), ErrIllegalTransition},
		{"second request", msg(TypeRequest, "a"), ErrIllegalTransition},
		{"unknown operation", msg(TypeAck, "z"), ErrIllegalTransition},
		{"after terminal", msg(TypeAck, "done"), ErrIllegalTransition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewSessionLog("s1")
			mustAppend(t, l, "a", TypeRequest, TypeAck)
			mustAppend(t, l, "done", TypeRequest, TypeFailed)
			before := slices.Collect(l.After(0))
			wait := l.Wait()

			if got, err := l.Append(tt.m); !errors.Is(err, tt.want) {
				t.Fatalf("Append = %v, %v; want error %v", got, err, tt.want)
			}
			if diff := cmp.Diff(before, slices.Collect(l.After(0))); diff != "" {
				t.Errorf("a rejected Append changed the log (-before +after):\n%s", diff)
			}
			if got := l.State("a"); got != Acknowledged {
				t.Errorf("State(a) = %s after a rejected Append, want ACKNOWLEDGED", got)
			}
			select {
			case <-wait:
				t.Error("a rejected Append woke waiters")
			default:
			}
			// The rejected message consumed no seq.
			got, err := l.Append(msg(TypeStart, "a"))
			if err != nil || got.Seq != 5 {
				t.Errorf("next Append = %v, %v; want seq 5", got, err)
			}
		})
	}
}

func TestLogCopies(t *testing.T) {
	l := NewSessionLog("s1")
	in := msg(TypeRequest, "a")
	out, err := l.Append(in)
	if err != nil {
		t.Fatal(err)
	}
	want := *out
	in.OperationID, in.Seq = "x", 7
	out.OperationID, out.Seq = "y", 8
	for m := range l.After(0) {
		m.OperationID, m.Seq = "z", 9
	}
	if diff := cmp.Diff([]*EnhancedMessage{&want}, slices.Collect(l.After(0))); diff != "" {
		t.Errorf("changing messages outside the log changed it (-want +got):\n%s", diff)
	}
}

func TestLogAfter(t *testing.T) {
	l := NewSessionLog("s1")
	mustAppend(t, l, "a", TypeRequest, TypeAck, TypeStart, TypeProgress, TypeComplete)
	tests := []struct {
		after int64
		want  []int64
	}{
		{-5, []int64{1, 2, 3, 4, 5}},
		{0, []int64{1, 2, 3, 4, 5}},
		{1, []int64{2, 3, 4, 5}},
		{3, []int64{4, 5}},
		{4, []int64{5}},
		{5, nil},
		{6, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, seqs(l, tt.after)); diff != "" {
			t.Errorf("After(%d) mismatch (-want +got):\n%s", tt.after, diff)
		}
	}

	// After is a snapshot: what is appended while iterating is not seen.
	var got []int64
	for m := range l.After(3) {
		got = append(got, m.Seq)
		mustAppend(t, l, fmt.Sprint("new", m.Seq), TypeRequest)
	}
	if diff := cmp.Diff([]int64{4, 5}, got); diff != "" {
		t.Errorf("After(3) while appending mismatch (-want +got):\n%s", diff)
	}

	// Stopping early is fine.
	for m := range l.After(0) {
		if m.Seq != 1 {
			t.Errorf("first message has seq %d, want 1", m.Seq)
		}
		break
	}
}

// TestLogConcurrent appends the lifecycles of many operations at once: seq stays gap-free and
// each operation's messages keep their order.
func TestLogConcurrent(t *testing.T) {
	const ops = 64
	l := NewSessionLog("s1")
	var wg sync.WaitGroup
	for i := range ops {
		wg.Go(func() {
			op := fmt.Sprint("op", i)
			for _, typ := range lifecycle {
				if _, err := l.Append(msg(typ, op)); err != nil {
					t.Errorf("Append(%s, %s): %v", typ, op, err)
				}
			}
		})
	}
	wg.Wait()

	want := make(map[string][]Type)
	got := make(map[string][]Type)
	var next int64 = 1
	for m := range l.After(0) {
		if m.Seq != next {
			t.Fatalf("seq %d at position %d: the log has a gap", m.Seq, next)
		}
		next++
		got[m.OperationID] = append(got[m.OperationID], m.Type)
		want[m.OperationID] = lifecycle
	}
	if len(want) != ops {
		t.Errorf("the log holds %d operations, want %d", len(want), ops)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-operation order mismatch (-want +got):\n%s", diff)
	}
	if got, want := l.Last(), int64(ops*len(lifecycle)); got != want {
		t.Errorf("Last() = %d, want %d", got, want)
	}
}

// TestLogOneTerminal races many terminal messages for one operation: exactly one is accepted.
func TestLogOneTerminal(t *testing.T) {
	const racers = 32
	l := NewSessionLog("s1")
	mustAppend(t, l, "a", TypeRequest, TypeAck, TypeStart, TypeProgress)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted int
	)
	for i := range racers {
		wg.Go(func() {
			typ := TypeComplete
			if i%2 == 0 {
				typ = TypeFailed
			}
			_, err := l.Append(msg(typ, "a"))
			switch {
			case err == nil:
				mu.Lock()
				accepted++
				mu.Unlock()
			case !errors.Is(err, ErrIllegalTransition):
				t.Errorf("Append(%s) = %v, want ErrIllegalTransition", typ, err)
			}
		})
	}
	wg.Wait()
	if accepted != 1 {
		t.Errorf("%d terminal messages accepted, want 1", accepted)
	}
	terminals := 0
	for m := range l.After(0) {
		if m.Type.Terminal() {
			terminals++
		}
	}
	if terminals != 1 || !l.State("a").Terminal() {
		t.Errorf("log has %d terminal messages and state %s, want 1 and a terminal state", terminals, l.State("a"))
	}
}

// TestLogWait follows the log the documented way while another goroutine appends: the follower
// sees every message exactly once, in order, without polling.
func TestLogWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewSessionLog("s1")
		done := make(chan []int64)
		go func() {
			var seen []int64
			var seq int64
			for {
				ch := l.Wait()
				for m := range l.After(seq) {
					seq = m.Seq
					seen = append(seen, m.Seq)
					if m.Type.Terminal() {
						done <- seen
						return
					}
				}
				<-ch
			}
		}()

		for _, typ := range lifecycle {
			time.Sleep(time.Second) // the follower is blocked in <-ch now
			mustAppend(t, l, "a", typ)
		}
		if diff := cmp.Diff([]int64{1, 2, 3, 4, 5, 6}, <-done); diff != "" {
			t.Errorf("follower saw (-want +got):\n%s", diff)
		}

		ch := l.Wait()
		select {
		case <-ch:
			t.Fatal("Wait channel closed before any Append")
		default:
		}
		mustAppend(t, l, "b", TypeRequest)
		select {
		case <-ch:
		default:
			t.Fatal("Wait channel still open after Append")
		}
	})
}
