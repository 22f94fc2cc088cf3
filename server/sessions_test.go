package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// jsonCall sends a JSON request over HTTP and returns the status and the body.
func jsonCall(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func listSessions(t *testing.T, f *fixture) map[string]runner.SessionListing {
	t.Helper()
	code, body := jsonCall(t, "GET", f.http.URL+"/v1/sessions", "")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/sessions: %d %s", code, body)
	}
	var list []runner.SessionListing
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	m := map[string]runner.SessionListing{}
	for _, s := range list {
		m[s.ID] = s
	}
	return m
}

// TestSessionNameAndClose: a session is named (bad names refused with the field and the value),
// closed while a cell runs (the cell is interrupted, not failed; the kernel stops), listed with
// its name and closed, and reopened by its next operation, in a fresh kernel. WebSocket clients
// see the updates; the store replays through the state machine (newFixture's cleanup).
func TestSessionNameAndClose(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	base := f.http.URL + "/v1/sessions/"
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "nope", `{"name": "x"}`},
		{"POST", "nope/close", ""},
	} {
		if code, body := jsonCall(t, c.method, base+c.path, c.body); code != http.StatusNotFound || !strings.Contains(body, "nope") {
			t.Errorf("%s %s of an unknown session: %d %s, want 404", c.method, c.path, code, body)
		}
	}

	c := f.dial(t, "s1", 0)
	var last int64
	send(t, c, protocol.TypeRequest, "s1", "op1", protocol.Request{Kind: "exec", Kernel: "python", Code: "k = 7\nprint('k', k)"})
	if got := until(t, c, "op1", &last); got[len(got)-1].Type != protocol.TypeComplete {
		t.Fatalf("op1 ended with %s", got[len(got)-1].Type)
	}

	long := strings.Repeat("x", runner.MaxSessionName+1)
	for _, b := range []struct{ body, want string }{
		{`{"name": ""}`, `name "": empty`},
		{`{"name": "   "}`, `name "   ": empty`},
		{`{"name": "` + long + `"}`, "81 characters; want at most 80"},
		{`{"name": "a\tb"}`, `character 2 (U+0009) is not printable`},
		{`{"name": "a\u0007"}`, `(U+0007) is not printable`},
		{`{"nom": "x"}`, `unknown field "nom"`},
		{`{}`, "name: missing"},
		{`{"name": 3}`, "session update"},
		{`[`, "session update"},
	} {
		code, body := jsonCall(t, "PATCH", base+"s1", b.body)
		var e struct{ Error string }
		json.Unmarshal([]byte(body), &e)
		if code != http.StatusBadRequest || !strings.Contains(e.Error, b.want) {
			t.Errorf("PATCH %s: %d %s, want 400 mentioning %q", b.body, code, body, b.want)
		}
	}
	if code, body := jsonCall(t, "PATCH", base+"s1", `{"name": "  titration, run 2 — NaOH  "}`); code != http.StatusOK || !strings.Contains(body, `"name":"titration, run 2 — NaOH"`) {
		t.Fatalf("PATCH a good name: %d %s", code, body)
	}
	m, _ := read(t, c)
	if m == nil || m.Type != protocol.TypeSessionUpdate || m.OperationID != protocol.SessionStream || !strings.Contains(string(m.Payload), "titration") {
		t.Fatalf("the WebSocket client got %+v after the rename, want the session_update", m)
	}
	last = m.Seq

	// Close while a long cell runs: it is interrupted and the kernel stops.
	send(t, c, protocol.TypeRequest, "s1", "op2", protocol.Request{Kind: "exec", Kernel: "python",
		Code: "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"})
	for {
		m, _ := read(t, c)
		last = m.Seq
		if m.OperationID == "op2" && m.Type == protocol.TypeProgress {
			break
		}
	}
	if code, body := jsonCall(t, "POST", base+"s1/close", ""); code != http.StatusOK || !strings.Contains(body, `"closed":true`) || !strings.Contains(body, "titration") {
		t.Fatalf("POST close: %d %s", code, body)
	}
	var types []protocol.Type
	var failed protocol.Failed
	for {
		m, _ := read(t, c)
		last = m.Seq
		types = append(types, m.Type)
		if m.Type == protocol.TypeFailed {
			m.Decode(&failed)
		}
		if m.Type == protocol.TypeSessionUpdate {
			break
		}
	}
	if failed.Reason != protocol.ReasonInterrupted || !slices.Contains(types, protocol.TypeInterrupt) {
		t.Errorf("closing: the running cell got %v, failed %+v; want interrupted", types, failed)
	}
	got := listSessions(t, f)["s1"]
	if got.Name != "titration, run 2 — NaOH" || !got.Closed || got.Operations != 2 || got.Kind != "" {
		t.Errorf("the closed session is listed as %+v", got)
	}
	// Renaming a closed session keeps it closed.
	if code, body := jsonCall(t, "PATCH", base+"s1", `{"name": "titration"}`); code != http.StatusOK || !strings.Contains(body, `"closed":true`) {
		t.Errorf("renaming the closed session: %d %s", code, body)
	}
	if code, body := jsonCall(t, "POST", base+"s1/close", ""); code != http.StatusOK {
		t.Errorf("closing a closed session again: %d %s", code, body)
	}

	// The next operation reopens it, in a fresh kernel (k is gone).
	send(t, c, protocol.TypeRequest, "s1", "op3", protocol.Request{Kind: "exec", Kernel: "python", Code: "print('k' in dir())"})
	msgs := until(t, c, "op3", &last)
	if !hasLine(msgs, "False") {
		t.Errorf("the reopened session's kernel still has k: %v", types)
	}
	got = listSessions(t, f)["s1"]
	if got.Name != "titration" || got.Closed || got.Operations != 3 {
		t.Errorf("the reopened session is listed as %+v", got)
	}
	var stream []string
	for m, err := range f.store.After(t.Context(), "s1", 0) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeSessionUpdate || m.Type == protocol.TypeRequest {
			var u protocol.SessionUpdate
			m.Decode(&u)
			stream = append(stream, string(m.Type)+" "+m.OperationID+map[bool]string{true: " closed", false: ""}[u.Closed])
		}
	}
	want := []string{"operation_request op1", "session_update session", "operation_request op2", "session_update session closed",
		"session_update session closed", "session_update session closed", "session_update session", "operation_request op3"}
	if diff := cmp.Diff(want, stream); diff != "" {
		t.Errorf("the log (-want +got):\n%s", diff)
	}
}
