package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

// POST /v1/sessions/ID/operations takes the protocol's request, and checks it with the rules
// the exec tools' cells are checked by (operation.Check): the same request is refused with
// the same words.
func TestRESTOperationChecksLikeTheTools(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	for _, cell := range []operation.Cell{
		{Kernel: "python", Code: "  "},
		{Kernel: "python", Code: "print(1)", Hotfix: "sometimes"},
		{Kernel: "python", Code: "print(1)", Watch: []string{"x <<< 3"}},
		{Kernel: "python", Code: "print(1)", Profile: "fortran"},
		{Kernel: "python", Code: "print(1)", Follow: []string{"../etc/passwd"}},
		{Code: "print(1)"},
	} {
		_, want := operation.Check(cell.Request())
		if want == nil {
			t.Fatalf("%+v: Check accepted it", cell)
		}
		body, _ := json.Marshal(cell.Request())
		code, reply := postJSON(t, f.http.URL+"/v1/sessions/rest/operations", string(body))
		if code != http.StatusAccepted {
			t.Fatalf("%+v: %d %s", cell, code, reply)
		}
		var id struct {
			OperationID string `json:"operation_id"`
		}
		if err := json.Unmarshal([]byte(reply), &id); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(f.http.URL + "/v1/sessions/rest/operations/" + id.OperationID + "/messages")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var msgs []*protocol.EnhancedMessage
		if err := json.Unmarshal(raw, &msgs); err != nil || len(msgs) == 0 {
			t.Fatalf("%s: %v", raw, err)
		}
		p, _ := protocol.DecodePayload(msgs[len(msgs)-1])
		fl, ok := p.(*protocol.Failed)
		if !ok || fl.Reason != protocol.ReasonRejected || fl.Error != want.Error() {
			t.Errorf("%+v: REST ended it with %+v, want rejected saying %q", cell, p, want)
		}
	}
}
