package protocol

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

func TestNewMessageDecode(t *testing.T) {
	before := UnixSeconds(time.Now())
	req := Request{Kind: "exec", Kernel: "python", Code: "print(6*7)", TimeoutS: 30, Hotfix: HotfixOnError, Watch: []string{"loss"}}
	m, err := NewMessage(TypeRequest, "s1", "op1", req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(m.ID); err != nil {
		t.Errorf("id %q: %v", m.ID, err)
	}
	if after := UnixSeconds(time.Now()); m.Timestamp < before || m.Timestamp > after {
		t.Errorf("timestamp %v not in [%v, %v]", m.Timestamp, before, after)
	}
	if m.Type != TypeRequest || m.SessionID != "s1" || m.OperationID != "op1" || m.Seq != 0 {
		t.Errorf("NewMessage = %+v, want type, session and operation as given and seq 0", m)
	}
	var got Request
	if err := m.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req, got); diff != "" {
		t.Errorf("Decode mismatch (-want +got):\n%s", diff)
	}

	var notARequest []int
	if err := m.Decode(&notARequest); err == nil {
		t.Error("Decode into the wrong type succeeded")
	}
	if _, err := NewMessage(TypeRequest, "s1", "op1", make(chan int)); err == nil {
		t.Error("NewMessage with an unencodable payload succeeded")
	}
}

func TestType(t *testing.T) {
	type props struct{ Valid, Terminal bool }
	want := map[Type]props{
		TypeRequest:       {true, false},
		TypeAck:           {true, false},
		TypeStart:         {true, false},
		TypeProgress:      {true, false},
		TypeComplete:      {true, true},
		TypeFailed:        {true, true},
		TypeInterrupt:     {true, false},
		TypeRunEvent:      {true, false},
		TypeRunEnd:        {true, true},
		"":                {false, false},
		"operation_bogus": {false, false},
		"OPERATION_ACK":   {false, false},
	}
	got := make(map[Type]props)
	for typ := range want {
		got[typ] = props{typ.Valid(), typ.Terminal()}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Type mismatch (-want +got):\n%s", diff)
	}
}

// TestMessageJSON pins the wire format of PROTOCOL.md.
func TestMessageJSON(t *testing.T) {
	const golden = `{"id":"6f1c1d2e-8f7a-4c1b-9d3e-2a4b5c6d7e8f","type":"operation_ack",` +
		`"payload":{"state":"ACKNOWLEDGED"},"timestamp":1700000000.25,"session_id":"s1",` +
		`"operation_id":"op1","seq":7}`
	m := &EnhancedMessage{
		ID:          "6f1c1d2e-8f7a-4c1b-9d3e-2a4b5c6d7e8f",
		Type:        TypeAck,
		Payload:     json.RawMessage(`{"state":"ACKNOWLEDGED"}`),
		Timestamp:   1700000000.25,
		SessionID:   "s1",
		OperationID: "op1",
		Seq:         7,
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(golden, string(b)); diff != "" {
		t.Errorf("marshalled message mismatch (-want +got):\n%s", diff)
	}

	var back EnhancedMessage
	if err := json.Unmarshal([]byte(golden), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, &back); diff != "" {
		t.Errorf("unmarshalled message mismatch (-want +got):\n%s", diff)
	}
	var p StatePayload
	if err := back.Decode(&p); err != nil || p.State != Acknowledged {
		t.Errorf("Decode = %+v, %v; want state ACKNOWLEDGED", p, err)
	}
}

func TestDecodeError(t *testing.T) {
	m := &EnhancedMessage{Type: TypeProgress, OperationID: "op1", Payload: json.RawMessage(`{"observation":1}`)}
	var p Progress
	err := m.Decode(&p)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		t.Errorf("Decode = %v, want a wrapped *json.UnmarshalTypeError", err)
	}
}
