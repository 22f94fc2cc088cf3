// Package storetest is the test suite every protocol.Store passes.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/labmate/labmate/protocol"
)

// Run tests the Store that open returns. open must return a new, empty store each time it is
// called; Run closes every store it opens.
func Run(t *testing.T, open func(t *testing.T) protocol.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s protocol.Store)
	}{
		{"Append", testAppend},
		{"Rejects", testRejects},
		{"After", testAfter},
		{"Operation", testOperation},
		{"Listing", testListing},
		{"Concurrent", testConcurrent},
		{"OneTerminal", testOneTerminal},
		{"Recover", testRecover},
		{"Runs", testRuns},
		{"Streams", testStreams},
		{"Payload", testPayload},
		{"Close", testClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.fn(t, s)
		})
	}
}

// lifecycle is one exec operation from request to completion.
var lifecycle = []protocol.Type{
	protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart,
	protocol.TypeProgress, protocol.TypeProgress, protocol.TypeComplete,
}

// message returns a message of type typ with a payload typical of that type.
func message(t testing.TB, typ protocol.Type, session, op string) *protocol.EnhancedMessage {
	t.Helper()
	var payload any
	switch typ {
	case protocol.TypeRequest:
		payload = protocol.Request{Kind: "exec", Kernel: "python", Code: "print(6*7)"}
	case protocol.TypeAck:
		payload = protocol.StatePayload{State: protocol.Acknowledged}
	case protocol.TypeStart:
		payload = protocol.StatePayload{State: protocol.Started}
	case protocol.TypeProgress:
		payload = protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: "42"}}
	case protocol.TypeComplete:
		payload = protocol.Complete{Result: &protocol.Result{Status: protocol.StatusOK}}
	case protocol.TypeFailed:
		payload = protocol.Failed{Reason: protocol.ReasonError, Error: "boom"}
	case protocol.TypeRunEvent:
		payload = map[string]any{"run_id": op, "type": "plan", "plan": map[string]any{"goal": "g"}}
	case protocol.TypeRunEnd:
		payload = protocol.RunEnd{Reason: "answered"}
	case protocol.TypeSessionUpdate:
		payload = protocol.SessionUpdate{Name: "titration"}
	default:
		payload = struct{}{}
	}
	m, err := protocol.NewMessage(typ, session, op, payload)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustAppend appends a message of each type to operation op of session.
func mustAppend(t testing.TB, s protocol.Store, session, op string, types ...protocol.Type) {
	t.Helper()
	for _, typ := range types {
		if _, err := s.Append(context.Background(), message(t, typ, session, op)); err != nil {
			t.Fatalf("Append(%s, %s, %s): %v", session, op, typ, err)
		}
	}
}

// collect gathers what seq yields until its first error.
func collect(seq iter.Seq2[*protocol.EnhancedMessage, error]) ([]*protocol.EnhancedMessage, error) {
	var msgs []*protocol.EnhancedMessage
	for m, err := range seq {
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func mustCollect(t *testing.T, seq iter.Seq2[*protocol.EnhancedMessage, error]) []*protocol.EnhancedMessage {
	t.Helper()
	msgs, err := collect(seq)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func seqs(msgs []*protocol.EnhancedMessage) []int64 {
	var s []int64
	for _, m := range msgs {
		s = append(s, m.Seq)
	}
	return s
}

func testAppend(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	in := &protocol.EnhancedMessage{
		Type: protocol.TypeRequest, SessionID: "s1", OperationID: "a", Seq: 42,
		Payload: json.RawMessage(`{"kind":"exec"}`),
	}
	orig := *in
	before := protocol.UnixSeconds(time.Now())
	got, err := s.Append(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	after := protocol.UnixSeconds(time.Now())
	if diff := cmp.Diff(&orig, in); diff != "" {
		t.Errorf("Append modified its argument (-want +got):\n%s", diff)
	}
	if _, err := uuid.Parse(got.ID); err != nil {
		t.Errorf("Append filled id %q: %v", got.ID, err)
	}
	if got.Timestamp < before || got.Timestamp > after {
		t.Errorf("Append filled timestamp %v, want within [%v, %v]", got.Timestamp, before, after)
	}
	want := orig
	want.ID, want.Timestamp, want.Seq = got.ID, got.Timestamp, 1
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("Append mismatch (-want +got):\n%s", diff)
	}

	// A given id and timestamp are kept.
	given := message(t, protocol.TypeAck, "s1", "a")
	given.ID, given.Timestamp = "m2", 12.5
	got2, err := s.Append(ctx, given)
	if err != nil {
		t.Fatal(err)
	}
	want2 := *given
	want2.Seq = 2
	if diff := cmp.Diff(&want2, got2); diff != "" {
		t.Errorf("Append mismatch (-want +got):\n%s", diff)
	}

	// What After yields is what Append returned.
	if diff := cmp.Diff([]*protocol.EnhancedMessage{got, got2}, mustCollect(t, s.After(ctx, "s1", 0))); diff != "" {
		t.Errorf("After(0) mismatch (-want +got):\n%s", diff)
	}
}

func testRejects(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	mustAppend(t, s, "s1", "a", protocol.TypeRequest, protocol.TypeAck)
	mustAppend(t, s, "s1", "done", protocol.TypeRequest, protocol.TypeFailed)
	withPayload := func(m *protocol.EnhancedMessage, p string) *protocol.EnhancedMessage {
		m.Payload = json.RawMessage(p)
		return m
	}
	tests := []struct {
		name string
		m    *protocol.EnhancedMessage
		want error
	}{
		{"nil", nil, protocol.ErrInvalidMessage},
		{"no session", message(t, protocol.TypeAck, "", "a"), protocol.ErrInvalidMessage},
		{"no operation", message(t, protocol.TypeAck, "s1", ""), protocol.ErrInvalidMessage},
		{"unknown type", message(t, "operation_bogus", "s1", "a"), protocol.ErrUnknownType},
		{"out of order", message(t, protocol.TypeProgress, "s1", "a"), protocol.ErrIllegalTransition},
		{"second request", message(t, protocol.TypeRequest, "s1", "a"), protocol.ErrIllegalTransition},
		{"request again after terminal", message(t, protocol.TypeRequest, "s1", "done"), protocol.ErrIllegalTransition},
		{"unknown operation", message(t, protocol.TypeAck, "s1", "z"), protocol.ErrIllegalTransition},
		{"after terminal", message(t, protocol.TypeComplete, "s1", "done"), protocol.ErrIllegalTransition},
		{"request payload not an object", withPayload(message(t, protocol.TypeRequest, "s1", "b"), `[1]`), protocol.ErrInvalidMessage},
		{"request payload null", withPayload(message(t, protocol.TypeRequest, "s1", "b"), `null`), protocol.ErrInvalidMessage},
		{"first message of a new session", message(t, protocol.TypeAck, "s2", "a"), protocol.ErrIllegalTransition},
	}
	before := mustCollect(t, s.After(ctx, "s1", 0))
	for _, tt := range tests {
		if got, err := s.Append(ctx, tt.m); !errors.Is(err, tt.want) {
			t.Errorf("%s: Append = %v, %v; want an error wrapping %v", tt.name, got, err, tt.want)
		}
	}
	if diff := cmp.Diff(before, mustCollect(t, s.After(ctx, "s1", 0))); diff != "" {
		t.Errorf("rejected appends changed the log (-before +after):\n%s", diff)
	}
	ops, err := s.Operations(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	states := make(map[string]protocol.State)
	for _, op := range ops {
		states[op.ID] = op.State
	}
	if diff := cmp.Diff(map[string]protocol.State{"a": protocol.Acknowledged, "done": protocol.FailedState}, states); diff != "" {
		t.Errorf("operation states after rejected appends (-want +got):\n%s", diff)
	}
	sessions, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 || sessions[0].ID != "s1" {
		t.Errorf("Sessions() = %+v, want only s1: a rejected first message creates no session", sessions)
	}
	if _, err := collect(s.After(ctx, "s2", 0)); !errors.Is(err, protocol.ErrUnknownSession) {
		t.Errorf("After(s2) = %v, want ErrUnknownSession", err)
	}

	// Rejected messages consumed no seq.
	got, err := s.Append(ctx, message(t, protocol.TypeStart, "s1", "a"))
	if err != nil || got.Seq != 5 {
		t.Errorf("next Append = %v, %v; want seq 5", got, err)
	}
}

func testAfter(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	mustAppend(t, s, "s1", "a", protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart, protocol.TypeProgress, protocol.TypeComplete)
	mustAppend(t, s, "s2", "a", protocol.TypeRequest)
	tests := []struct {
		after int64
		want  []int64
	}{
		{-5, []int64{1, 2, 3, 4, 5}},
		{0, []int64{1, 2, 3, 4, 5}},
		{1, []int64{2, 3, 4, 5}},
		{4, []int64{5}},
		{5, nil},
		{6, nil},
	}
	for _, tt := range tests {
		msgs := mustCollect(t, s.After(ctx, "s1", tt.after))
		if diff := cmp.Diff(tt.want, seqs(msgs)); diff != "" {
			t.Errorf("After(%d) mismatch (-want +got):\n%s", tt.after, diff)
		}
		for _, m := range msgs {
			if m.SessionID != "s1" {
				t.Errorf("After(s1, %d) yielded a message of session %s", tt.after, m.SessionID)
			}
		}
	}

	// A snapshot: what is appended while iterating is not seen.
	var got []int64
	for m, err := range s.After(ctx, "s1", 3) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Seq)
		mustAppend(t, s, "s1", fmt.Sprint("new", m.Seq), protocol.TypeRequest)
	}
	if diff := cmp.Diff([]int64{4, 5}, got); diff != "" {
		t.Errorf("After(3) while appending mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{6, 7}, seqs(mustCollect(t, s.After(ctx, "s1", 5)))); diff != "" {
		t.Errorf("After(5) mismatch (-want +got):\n%s", diff)
	}

	// Stopping early is fine.
	for m := range s.After(ctx, "s1", 0) {
		if m.Seq != 1 {
			t.Errorf("first message has seq %d, want 1", m.Seq)
		}
		break
	}

	if msgs, err := collect(s.After(ctx, "nope", 0)); !errors.Is(err, protocol.ErrUnknownSession) || len(msgs) != 0 {
		t.Errorf("After(unknown session) = %d messages, %v; want ErrUnknownSession", len(msgs), err)
	}
}

func testOperation(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	mustAppend(t, s, "s1", "a", protocol.TypeRequest)
	mustAppend(t, s, "s1", "b", protocol.TypeRequest)
	mustAppend(t, s, "s1", "a", protocol.TypeAck)
	mustAppend(t, s, "s2", "a", protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart) // same id, other session
	mustAppend(t, s, "s1", "b", protocol.TypeAck)
	mustAppend(t, s, "s1", "a", protocol.TypeStart, protocol.TypeComplete)

	msgs := mustCollect(t, s.Operation(ctx, "s1", "a"))
	type entry struct {
		Seq int64
		Op  string
		Typ protocol.Type
	}
	var got []entry
	for _, m := range msgs {
		got = append(got, entry{m.Seq, m.SessionID + "/" + m.OperationID, m.Type})
	}
	want := []entry{
		{1, "s1/a", protocol.TypeRequest},
		{3, "s1/a", protocol.TypeAck},
		{5, "s1/a", protocol.TypeStart},
		{6, "s1/a", protocol.TypeComplete},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Operation(s1, a) mismatch (-want +got):\n%s", diff)
	}
	// The messages are those of the session log.
	all := mustCollect(t, s.After(ctx, "s1", 0))
	var fromLog []*protocol.EnhancedMessage
	for _, m := range all {
		if m.OperationID == "a" {
			fromLog = append(fromLog, m)
		}
	}
	if diff := cmp.Diff(fromLog, msgs); diff != "" {
		t.Errorf("Operation(s1, a) differs from the log (-log +Operation):\n%s", diff)
	}

	if _, err := collect(s.Operation(ctx, "s1", "z")); !errors.Is(err, protocol.ErrUnknownOperation) {
		t.Errorf("Operation(s1, z) = %v, want ErrUnknownOperation", err)
	}
	if _, err := collect(s.Operation(ctx, "nope", "a")); !errors.Is(err, protocol.ErrUnknownSession) {
		t.Errorf("Operation(nope, a) = %v, want ErrUnknownSession", err)
	}
}

func testListing(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	if got, err := s.Sessions(ctx); err != nil || len(got) != 0 {
		t.Errorf("Sessions() of an empty store = %v, %v; want none", got, err)
	}
	// Explicit timestamps make created and updated predictable.
	ts := 1000.0
	add := func(session, op string, typ protocol.Type, payload string) {
		t.Helper()
		m := message(t, typ, session, op)
		if payload != "" {
			m.Payload = json.RawMessage(payload)
		}
		ts++
		m.Timestamp = ts
		if _, err := s.Append(ctx, m); err != nil {
			t.Fatalf("Append(%s, %s, %s): %v", session, op, typ, err)
		}
	}
	add("s2", "x", protocol.TypeRequest, `{"kind":"job"}`) // 1001
	add("s1", "a", protocol.TypeRequest, `{"kind":"exec"}`)
	add("s1", "b", protocol.TypeRequest, `{"kind":"instrument"}`)
	add("s1", "c", protocol.TypeRequest, `{"code":"no kind"}`)
	add("s1", "a", protocol.TypeAck, "") // 1005
	add("s1", "b", protocol.TypeAck, "")
	add("s1", "a", protocol.TypeStart, "")
	add("s1", "b", protocol.TypeStart, "")
	add("s1", "b", protocol.TypeProgress, "")
	add("s1", "a", protocol.TypeComplete, "") // 1010
	add("s2", "x", protocol.TypeFailed, "")
	add("s1", "b", protocol.TypeInterrupt, "")

	sessions, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSessions := []protocol.SessionInfo{
		{ID: "s2", Created: 1001, LastSeq: 2, Operations: 1},
		{ID: "s1", Created: 1002, LastSeq: 10, Operations: 3},
	}
	if diff := cmp.Diff(wantSessions, sessions); diff != "" {
		t.Errorf("Sessions() mismatch (-want +got):\n%s", diff)
	}

	ops, err := s.Operations(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	wantOps := []protocol.OperationInfo{
		{ID: "a", Kind: "exec", State: protocol.Completed, Created: 1002, Updated: 1010},
		{ID: "b", Kind: "instrument", State: protocol.InProgress, Created: 1003, Updated: 1012},
		{ID: "c", Kind: "", State: protocol.Pending, Created: 1004, Updated: 1004},
	}
	if diff := cmp.Diff(wantOps, ops); diff != "" {
		t.Errorf("Operations(s1) mismatch (-want +got):\n%s", diff)
	}
	ops, err = s.Operations(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	wantOps = []protocol.OperationInfo{{ID: "x", Kind: "job", State: protocol.FailedState, Created: 1001, Updated: 1011}}
	if diff := cmp.Diff(wantOps, ops); diff != "" {
		t.Errorf("Operations(s2) mismatch (-want +got):\n%s", diff)
	}
	if _, err := s.Operations(ctx, "nope"); !errors.Is(err, protocol.ErrUnknownSession) {
		t.Errorf("Operations(nope) = %v, want ErrUnknownSession", err)
	}

	b, err := json.Marshal(wantSessions[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"s2","created":1001,"last_seq":2,"operations":1}`; string(b) != want {
		t.Errorf("SessionInfo JSON = %s, want %s", b, want)
	}
}

// testConcurrent runs many operations in many sessions at once, while readers follow the logs:
// every session's seq is gap-free and every operation's messages keep their order.
func testConcurrent(t *testing.T, s protocol.Store) {
	const sessions, opsPerSession, progress = 8, 12, 20
	ctx := context.Background()
	types := slices.Concat(lifecycle[:3], slices.Repeat([]protocol.Type{protocol.TypeProgress}, progress), lifecycle[5:])
	var wg sync.WaitGroup
	for i := range sessions {
		session := fmt.Sprint("s", i)
		for j := range opsPerSession {
			wg.Go(func() {
				for _, typ := range types {
					if _, err := s.Append(ctx, message(t, typ, session, fmt.Sprint("op", j))); err != nil {
						t.Errorf("Append(%s, op%d, %s): %v", session, j, typ, err)
						return
					}
				}
			})
		}
		// A reader sees a gap-free prefix of the log at any time.
		wg.Go(func() {
			for range 5 {
				var next int64 = 1
				for m, err := range s.After(ctx, session, 0) {
					if errors.Is(err, protocol.ErrUnknownSession) {
						break // nothing appended yet
					}
					if err != nil {
						t.Errorf("After(%s): %v", session, err)
						return
					}
					if m.Seq != next {
						t.Errorf("After(%s) yielded seq %d, want %d", session, m.Seq, next)
						return
					}
					next++
				}
			}
		})
	}
	wg.Wait()

	infos, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != sessions {
		t.Errorf("Sessions() lists %d sessions, want %d", len(infos), sessions)
	}
	total := int64(opsPerSession * len(types))
	for _, info := range infos {
		if info.LastSeq != total || info.Operations != opsPerSession {
			t.Errorf("session %s: last seq %d, %d operations; want %d, %d", info.ID, info.LastSeq, info.Operations, total, opsPerSession)
		}
		got := make(map[string][]protocol.Type)
		var next int64 = 1
		for _, m := range mustCollect(t, s.After(ctx, info.ID, 0)) {
			if m.Seq != next {
				t.Fatalf("session %s: seq %d at position %d: the log has a gap", info.ID, m.Seq, next)
			}
			next++
			got[m.OperationID] = append(got[m.OperationID], m.Type)
		}
		want := make(map[string][]protocol.Type)
		for j := range opsPerSession {
			want[fmt.Sprint("op", j)] = types
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("session %s: per-operation order mismatch (-want +got):\n%s", info.ID, diff)
		}
	}
}

// testOneTerminal races terminal messages for one operation: exactly one is accepted.
func testOneTerminal(t *testing.T, s protocol.Store) {
	const racers = 16
	ctx := context.Background()
	mustAppend(t, s, "s1", "a", protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart, protocol.TypeProgress)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted int
	)
	for i := range racers {
		wg.Go(func() {
			typ := protocol.TypeComplete
			if i%2 == 0 {
				typ = protocol.TypeFailed
			}
			_, err := s.Append(ctx, message(t, typ, "s1", "a"))
			switch {
			case err == nil:
				mu.Lock()
				accepted++
				mu.Unlock()
			case !errors.Is(err, protocol.ErrIllegalTransition):
				t.Errorf("Append(%s) = %v, want ErrIllegalTransition", typ, err)
			}
		})
	}
	wg.Wait()
	if accepted != 1 {
		t.Errorf("%d terminal messages accepted, want 1", accepted)
	}
	terminals := 0
	for _, m := range mustCollect(t, s.Operation(ctx, "s1", "a")) {
		if m.Type.Terminal() {
			terminals++
		}
	}
	if terminals != 1 {
		t.Errorf("operation a has %d terminal messages, want 1", terminals)
	}
}

func testRecover(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	if ids, err := s.Recover(ctx, nil); err != nil || len(ids) != 0 {
		t.Errorf("Recover() of an empty store = %v, %v; want nothing", ids, err)
	}
	mustAppend(t, s, "s1", "done", lifecycle...)
	mustAppend(t, s, "s1", "running", lifecycle[:5]...)
	mustAppend(t, s, "s1", "pending", protocol.TypeRequest)
	mustAppend(t, s, "s2", "acked", protocol.TypeRequest, protocol.TypeAck, protocol.TypeInterrupt)
	mustAppend(t, s, "s2", "failed", protocol.TypeRequest, protocol.TypeFailed)
	mustAppend(t, s, "s2", "run", protocol.TypeRunEvent, protocol.TypeRunEvent)
	mustAppend(t, s, "s1", "ran", protocol.TypeRunEvent, protocol.TypeRunEnd)
	mustAppend(t, s, "s3", "kept", protocol.TypeRunEvent) // another process writes it still
	histories := func() map[string][]*protocol.EnhancedMessage {
		h := make(map[string][]*protocol.EnhancedMessage)
		for _, k := range []string{"s1/done", "s1/running", "s1/pending", "s2/acked", "s2/failed", "s2/run", "s1/ran", "s3/kept"} {
			session, op, _ := strings.Cut(k, "/")
			h[k] = mustCollect(t, s.Operation(ctx, session, op))
		}
		return h
	}
	before := histories()

	keep := func(session, op string) bool { return session == "s3" && op == "kept" }
	ids, err := s.Recover(ctx, keep)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if diff := cmp.Diff([]string{"acked", "pending", "run", "running"}, ids); diff != "" {
		t.Errorf("Recover() closed (-want +got):\n%s", diff)
	}

	after := histories()
	for k, msgs := range after {
		if k == "s1/done" || k == "s2/failed" || k == "s1/ran" || k == "s3/kept" {
			if diff := cmp.Diff(before[k], msgs); diff != "" {
				t.Errorf("Recover changed terminal or kept operation %s (-before +after):\n%s", k, diff)
			}
			continue
		}
		n := len(before[k])
		if diff := cmp.Diff(before[k], msgs[:n]); diff != "" {
			t.Errorf("Recover changed the history of %s (-before +after):\n%s", k, diff)
		}
		if k == "s2/run" {
			var got protocol.RunEnd
			if len(msgs) != n+1 || msgs[n].Type != protocol.TypeRunEnd || msgs[n].Decode(&got) != nil || got.Reason != protocol.ReasonServerRestart {
				t.Errorf("the run after Recover: %d messages ending in %s %s; want %d ending in run_end, reason server_restart",
					len(msgs), msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload, n+1)
			}
			continue
		}
		if len(msgs) != n+1 || msgs[n].Type != protocol.TypeFailed {
			t.Errorf("%s after Recover: %d messages ending in %s; want %d ending in operation_failed", k, len(msgs), msgs[len(msgs)-1].Type, n+1)
			continue
		}
		var got protocol.Failed
		if err := msgs[n].Decode(&got); err != nil {
			t.Fatal(err)
		}
		var want protocol.Failed
		if err := protocol.Restarted("s", "o", protocol.Pending).Decode(&want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" || got.Reason != protocol.ReasonServerRestart {
			t.Errorf("%s closed with payload (-want +got):\n%s", k, diff)
		}
	}
	for _, session := range []string{"s1", "s2"} {
		ops, err := s.Operations(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if !op.State.Terminal() {
				t.Errorf("%s/%s is %s after Recover, want a terminal state", session, op.ID, op.State)
			}
		}
	}

	if ids, err := s.Recover(ctx, keep); err != nil || len(ids) != 0 {
		t.Errorf("second Recover() = %v, %v; want nothing", ids, err)
	}
}

// testRuns checks an agent run's stream: run_event… then one run_end, next to operations in the
// same session, with payloads checked and the run listed among the operations.
func testRuns(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	mustAppend(t, s, "s", "run1", protocol.TypeRunEvent, protocol.TypeRunEvent)
	mustAppend(t, s, "s", "op", protocol.TypeRequest, protocol.TypeAck)
	mustAppend(t, s, "s", "run1", protocol.TypeRunEvent, protocol.TypeRunEnd)
	mustAppend(t, s, "s", "run2", protocol.TypeRunEnd) // a run that failed before its first event

	rejects := []struct {
		name string
		m    *protocol.EnhancedMessage
		want error
	}{
		{"event after the end", message(t, protocol.TypeRunEvent, "s", "run1"), protocol.ErrIllegalTransition},
		{"second end", message(t, protocol.TypeRunEnd, "s", "run1"), protocol.ErrIllegalTransition},
		{"event in an operation", message(t, protocol.TypeRunEvent, "s", "op"), protocol.ErrIllegalTransition},
		{"operation message in a run", message(t, protocol.TypeAck, "s", "run2"), protocol.ErrIllegalTransition},
		{"array event", &protocol.EnhancedMessage{Type: protocol.TypeRunEvent, SessionID: "s", OperationID: "run3", Payload: json.RawMessage(`[1]`)}, protocol.ErrInvalidMessage},
		{"null event", &protocol.EnhancedMessage{Type: protocol.TypeRunEvent, SessionID: "s", OperationID: "run3", Payload: json.RawMessage(`null`)}, protocol.ErrInvalidMessage},
		{"broken event", &protocol.EnhancedMessage{Type: protocol.TypeRunEvent, SessionID: "s", OperationID: "run3", Payload: json.RawMessage(`{"type":`)}, protocol.ErrInvalidMessage},
		{"end without a reason", &protocol.EnhancedMessage{Type: protocol.TypeRunEnd, SessionID: "s", OperationID: "run3", Payload: json.RawMessage(`{"error":"x"}`)}, protocol.ErrInvalidMessage},
	}
	for _, r := range rejects {
		if m, err := s.Append(ctx, r.m); !errors.Is(err, r.want) {
			t.Errorf("%s: Append = %+v, %v; want an error wrapping %v", r.name, m, err, r.want)
		}
	}

	msgs := mustCollect(t, s.After(ctx, "s", 0))
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 5, 6, 7}, seqs(msgs)); diff != "" {
		t.Errorf("seqs (-want +got):\n%s", diff)
	}
	run := mustCollect(t, s.Operation(ctx, "s", "run1"))
	var types []protocol.Type
	for _, m := range run {
		types = append(types, m.Type)
	}
	want := []protocol.Type{protocol.TypeRunEvent, protocol.TypeRunEvent, protocol.TypeRunEvent, protocol.TypeRunEnd}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("the run's messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(json.RawMessage(message(t, protocol.TypeRunEvent, "s", "run1").Payload), run[0].Payload); diff != "" {
		t.Errorf("the event's payload (-want +got):\n%s", diff)
	}
	ops, err := s.Operations(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID, Kind string
		State    protocol.State
	}
	var got []row
	for _, op := range ops {
		got = append(got, row{op.ID, op.Kind, op.State})
		if op.Created <= 0 || op.Updated < op.Created {
			t.Errorf("%s: created %v, updated %v", op.ID, op.Created, op.Updated)
		}
	}
	wantOps := []row{
		{"run1", protocol.KindAgentRun, protocol.Ended},
		{"op", "exec", protocol.Acknowledged},
		{"run2", protocol.KindAgentRun, protocol.Ended},
	}
	if diff := cmp.Diff(wantOps, got); diff != "" {
		t.Errorf("Operations (-want +got):\n%s", diff)
	}
	if ops[0].Updated != run[3].Timestamp {
		t.Errorf("run1 updated %v, want its run_end's timestamp %v", ops[0].Updated, run[3].Timestamp)
	}
}

// testStreams checks the other streams of a session: a resumed run, a campaign (a run whose
// first event names its kind), and the session's own updates and a job's operation, which
// Recover leaves alone.
func testStreams(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	mustAppend(t, s, "s", "run", protocol.TypeRunEvent, protocol.TypeRunEnd, protocol.TypeRunResume,
		protocol.TypeRunEvent, protocol.TypeRunEnd)
	camp, err := protocol.NewMessage(protocol.TypeRunEvent, "s", "c1", map[string]any{"kind": protocol.KindCampaign, "n": 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, camp); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "s", protocol.SessionStream, protocol.TypeSessionUpdate, protocol.TypeSessionUpdate)
	jobReq, err := protocol.NewMessage(protocol.TypeRequest, "s", "j1", protocol.Request{Kind: protocol.KindJob})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, jobReq); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "s", "j1", protocol.TypeAck, protocol.TypeStart)

	rejects := []struct {
		name string
		m    *protocol.EnhancedMessage
	}{
		{"resume of a running run", message(t, protocol.TypeRunResume, "s", "c1")},
		{"resume of an operation", message(t, protocol.TypeRunResume, "s", "never")},
		{"update on another stream", message(t, protocol.TypeSessionUpdate, "s", "run")},
		{"run event in the session stream", message(t, protocol.TypeRunEvent, "s", protocol.SessionStream)},
		{"broken update", &protocol.EnhancedMessage{Type: protocol.TypeSessionUpdate, SessionID: "s", OperationID: protocol.SessionStream, Payload: json.RawMessage(`[]`)}},
	}
	for _, r := range rejects {
		if m, err := s.Append(ctx, r.m); err == nil {
			t.Errorf("%s: Append = %+v; want an error", r.name, m)
		}
	}
	ops, err := s.Operations(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID, Kind string
		State    protocol.State
	}
	var got []row
	for _, op := range ops {
		got = append(got, row{op.ID, op.Kind, op.State})
	}
	want := []row{
		{"run", protocol.KindAgentRun, protocol.Ended},
		{"c1", protocol.KindCampaign, protocol.Running},
		{protocol.SessionStream, protocol.KindSession, protocol.Open},
		{"j1", protocol.KindJob, protocol.Started},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Operations (-want +got):\n%s", diff)
	}
	closed, err := s.Recover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c1"}, closed); diff != "" {
		t.Errorf("Recover closed (-want +got):\n%s", diff)
	}
	mustAppend(t, s, "s", protocol.SessionStream, protocol.TypeSessionUpdate)
}

func testPayload(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	// Bytes as a client sent them: odd spacing, escapes, non-ASCII, numbers that would not
	// survive a decode and re-encode.
	odd := `{ "kind" : "exec",  "code":"print(\"é\")\n\u00e9",` + "\n\t" + `"n":[1.50, 1e3, -0.0] }`
	big := `{"observation":{"kind":"stdout","line":"` + strings.Repeat("0123456789abcdef", 1<<16) + `"}}`
	payloads := []string{odd, `{}`, `{"state":"ACKNOWLEDGED"}`, `{"state":"STARTED"}`, big, `{"result":{"status":"ok"}}`}
	var want []*protocol.EnhancedMessage
	for i, typ := range lifecycle {
		m := message(t, typ, "s1", "a")
		m.Payload = json.RawMessage(payloads[i])
		got, err := s.Append(ctx, m)
		if err != nil {
			t.Fatalf("Append(%s): %v", typ, err)
		}
		want = append(want, got)
	}
	check := func(name string, msgs []*protocol.EnhancedMessage) {
		if len(msgs) != len(payloads) {
			t.Fatalf("%s yielded %d messages, want %d", name, len(msgs), len(payloads))
		}
		for i, m := range msgs {
			if string(m.Payload) != payloads[i] {
				t.Errorf("%s: payload %d (%d bytes) differs from the %d bytes appended", name, i, len(m.Payload), len(payloads[i]))
			}
		}
		// Payloads compared above; cmp would compare a megabyte byte by byte.
		equalBytes := cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })
		if diff := cmp.Diff(want, msgs, equalBytes); diff != "" {
			t.Errorf("%s mismatch (-appended +got):\n%s", name, diff)
		}
	}
	check("After", mustCollect(t, s.After(ctx, "s1", 0)))
	check("Operation", mustCollect(t, s.Operation(ctx, "s1", "a")))
}

func testClose(t *testing.T, s protocol.Store) {
	ctx := context.Background()
	mustAppend(t, s, "s1", "a", protocol.TypeRequest)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
	if _, err := s.Append(ctx, message(t, protocol.TypeAck, "s1", "a")); !errors.Is(err, protocol.ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}
	if _, err := collect(s.After(ctx, "s1", 0)); !errors.Is(err, protocol.ErrClosed) {
		t.Errorf("After after Close = %v, want ErrClosed", err)
	}
	if _, err := collect(s.Operation(ctx, "s1", "a")); !errors.Is(err, protocol.ErrClosed) {
		t.Errorf("Operation after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Sessions(ctx); !errors.Is(err, protocol.ErrClosed) {
		t.Errorf("Sessions after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Operations(ctx, "s1"); !errors.Is(err, protocol.ErrClosed) {
		t.Errorf("Operations after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Recover(ctx, nil); !errors.Is(err, protocol.ErrClosed) {
		t.Errorf("Recover after Close = %v, want ErrClosed", err)
	}
}

// Consistent checks every session of s as a reader after a crash would: its seqs run 1, 2, 3…
// without a gap, every stream's messages replay through the state machine (protocol.Next) from
// its first, and the state Operations lists is the one the replay ends in. It returns how many
// messages it read.
func Consistent(ctx context.Context, s protocol.Store) (int, error) {
	sessions, err := s.Sessions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, si := range sessions {
		states := map[string]protocol.State{}
		next := int64(1)
		for m, err := range s.After(ctx, si.ID, 0) {
			if err != nil {
				return n, err
			}
			if m.Seq != next {
				return n, fmt.Errorf("session %s: seq %d where %d was due", si.ID, m.Seq, next)
			}
			next++
			to, err := protocol.Next(states[m.OperationID], m.Type)
			if err != nil {
				return n, fmt.Errorf("session %s, seq %d: %w", si.ID, m.Seq, err)
			}
			states[m.OperationID] = to
			n++
		}
		ops, err := s.Operations(ctx, si.ID)
		if err != nil {
			return n, err
		}
		if len(ops) != len(states) {
			return n, fmt.Errorf("session %s: %d operations listed, %d in its messages", si.ID, len(ops), len(states))
		}
		for _, op := range ops {
			if op.State != states[op.ID] {
				return n, fmt.Errorf("session %s: operation %s is listed %s, its messages say %s", si.ID, op.ID, op.State, states[op.ID])
			}
		}
	}
	return n, nil
}
