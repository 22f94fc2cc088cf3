package server

import (
	"encoding/json"
	"testing"

	"github.com/labmate/labmate/protocol"
)

// FuzzDecodeClient: no client frame makes the decoder panic, and what it accepts is a
// request or an interrupt of this session.
func FuzzDecodeClient(f *testing.F) {
	for _, seed := range []string{
		`{"type":"operation_request","operation_id":"a","payload":{"kind":"exec","kernel":"python","code":"x = 1"}}`,
		`{"type":"operation_interrupt","operation_id":"a","payload":{"why":"stop"}}`,
		`{"type":"operation_interrupt","operation_id":"a"}`,
		`{"type":"operation_complete","operation_id":"a","payload":{}}`,
		`{"type":"operation_request","session_id":"other","payload":{}}`,
		`{"type":"operation_request","payload":{"kind":7}}`,
		`{"type":"operation_request"}`,
		`{"type":""}`, `{}`, `[]`, `null`, `{"type":`, "\x00\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cm, err := decodeClient(data, "s")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without text")
			}
			return
		}
		switch cm.msg.Type {
		case protocol.TypeRequest:
			if cm.req == nil {
				t.Fatal("request without payload")
			}
		case protocol.TypeInterrupt:
			if cm.intr == nil || cm.msg.OperationID == "" {
				t.Fatal("interrupt without operation")
			}
		default:
			t.Fatalf("accepted type %q", cm.msg.Type)
		}
		if cm.msg.SessionID != "" && cm.msg.SessionID != "s" {
			t.Fatalf("accepted session %q", cm.msg.SessionID)
		}
		if _, err := json.Marshal(&cm.msg); err != nil {
			t.Fatal(err)
		}
	})
}
