package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"reflect"
	"testing"

	"github.com/labmate/labmate/protocol"
)

// name appends n session_update messages to session ss, naming it name-0 … name-(n-1).
func name(t *testing.T, ss *Session, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := ss.Update(context.Background(), func(u *protocol.SessionUpdate) { u.Name = fmt.Sprint(prefix, "-", i) }); err != nil {
			t.Fatal(err)
		}
	}
}

// Subscribe replays the log after a seq, goes live, and keeps its drop policy: a listener
// that falls more than Limits.SubscriberBuffer messages behind is cut off with a TooSlowError
// naming the last seq it was given — every message up to it delivered once, in order, none
// skipped — and a listener still there when the runner closes gets what was published, then
// ErrShutdown.
func TestSubscribe(t *testing.T) {
	r, err := New(context.Background(), Config{Store: protocol.NewMemStore(), Limits: Limits{SubscriberBuffer: 4}, Log: log.New(t.Output(), "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			r.Close()
		}
	}()
	ss, err := r.Open("s")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release(ss)
	name(t, ss, "before", 3) // seq 1..3

	var seqs []int64
	var end error
	for f, err := range r.Subscribe(context.Background(), "s", 1) {
		if err != nil {
			end = err
			break
		}
		seqs = append(seqs, f.Seq)
		if f.Seq == 3 {
			name(t, ss, "while-away", 10) // the listener is busy: 10 > 4 messages published meanwhile
		}
	}
	var slow *TooSlowError
	if !errors.As(end, &slow) {
		t.Fatalf("a listener 10 messages behind with a buffer of 4: ended with %v, want a TooSlowError", end)
	}
	for i, s := range seqs {
		if s != int64(i)+2 {
			t.Fatalf("seqs %v: want 2, 3, … without a gap or a repeat", seqs)
		}
	}
	if slow.Last != seqs[len(seqs)-1] || slow.Last < 3 {
		t.Errorf("cut off after seqs %v, told to resume after %d", seqs, slow.Last)
	}

	// Resuming from Last gives the rest; the runner's close ends the stream with ErrShutdown.
	seqs, end = nil, nil
	for f, err := range r.Subscribe(context.Background(), "s", slow.Last) {
		if err != nil {
			end = err
			break
		}
		seqs = append(seqs, f.Seq)
		if f.Seq == 13 {
			name(t, ss, "last", 2) // 14, 15: published before the close, delivered after it
			closed = true
			go r.Close()
		}
	}
	if !errors.Is(end, ErrShutdown) {
		t.Errorf("at close: ended with %v, want ErrShutdown", end)
	}
	if len(seqs) == 0 || seqs[0] != slow.Last+1 || seqs[len(seqs)-1] != 15 {
		t.Errorf("resumed after %d: seqs %v, want %d … 15", slow.Last, seqs, slow.Last+1)
	}
}

// A frame's More says whether the next one is ready behind it: true inside a replay and a burst
// published while the listener was busy, false on the last of each, so that a listener that
// holds frames while More is true sends each burst as soon as it ends.
func TestSubscribeMore(t *testing.T) {
	r, err := New(context.Background(), Config{Store: protocol.NewMemStore(), Log: log.New(t.Output(), "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ss, err := r.Open("s")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release(ss)
	name(t, ss, "before", 4) // seq 1..4: the replay
	type got struct {
		seq  int64
		more bool
	}
	var frames []got
	for f, err := range r.Subscribe(context.Background(), "s", 0) {
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, got{f.Seq, f.More})
		switch f.Seq {
		case 4:
			name(t, ss, "burst", 3) // 5, 6, 7: published while the listener is busy
		case 7:
			name(t, ss, "one", 1) // 8 alone
		}
		if f.Seq == 8 {
			break
		}
	}
	want := []got{{1, true}, {2, true}, {3, true}, {4, false}, {5, true}, {6, true}, {7, false}, {8, false}}
	if !reflect.DeepEqual(frames, want) {
		t.Errorf("frames (seq, More) %v, want %v", frames, want)
	}
}

// frameOf writes what json.Marshal writes: the same bytes for a message of plain strings and a
// compact payload, the same JSON value for any other (it falls back to json.Marshal).
func TestFrameOf(t *testing.T) {
	plain, err := protocol.NewMessage(protocol.TypeProgress, "s1", "op-1", &protocol.Progress{
		Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: "x = 1 < 2 & \"quoted\" ü\n"}})
	if err != nil {
		t.Fatal(err)
	}
	plain.Seq = 42
	for _, m := range []*protocol.EnhancedMessage{
		plain,
		{ID: "a", Type: protocol.TypeAck, Timestamp: 1.5e-7, SessionID: "s<1>", OperationID: "ü", Seq: 1},
		{ID: "b", Type: protocol.TypeAck, Timestamp: 0, SessionID: "s", OperationID: "o", Payload: []byte(` { "a" : 1 } `)},
		{ID: "c", Type: protocol.TypeAck, Timestamp: 1e22, SessionID: "s\n", OperationID: "o"},
	} {
		f, err := frameOf(m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if m == plain && string(f.Data) != string(want) {
			t.Errorf("frameOf = %s\nwant        %s", f.Data, want)
		}
		var got, wantV any
		if err := json.Unmarshal(f.Data, &got); err != nil {
			t.Fatalf("frameOf wrote %s: %v", f.Data, err)
		}
		json.Unmarshal(want, &wantV)
		if !reflect.DeepEqual(got, wantV) || f.Seq != m.Seq {
			t.Errorf("frameOf = %s (seq %d), want %s", f.Data, f.Seq, want)
		}
	}
	if _, err := frameOf(&protocol.EnhancedMessage{ID: "d", Payload: []byte("{not json")}); err == nil {
		t.Error("frameOf of a message whose payload is not JSON: no error")
	}
}
