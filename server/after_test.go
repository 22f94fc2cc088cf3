package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// An after=SEQ past the end of a session's log is refused, naming the value and the last
// seq, over REST and WebSocket, instead of waiting for nothing; up to the last seq it is fine.
func TestAfterPastTheEnd(t *testing.T) {
	store := protocol.NewMemStore()
	for _, typ := range []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart} {
		m, _ := protocol.NewMessage(typ, "s1", "op1", &protocol.Request{Kind: "exec"})
		if _, err := store.Append(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t, store, func(c *server.Config) { c.Prewarm = nil })
	list, err := store.Sessions(context.Background()) // the start closed op1: 4 messages
	if err != nil || len(list) != 1 || list[0].LastSeq != 4 {
		t.Fatalf("sessions %+v, %v", list, err)
	}
	const want = "past the end of the log: after=99, but the last seq of session s1 is 4 (follow it with after=4 or less)"
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/v1/sessions/s1/messages?after=99", 400, want},
		{"/v1/sessions/s1/operations/op1/messages?after=99", 400, want},
		{"/v1/sessions/s1/messages?after=4", 200, "[]"},
		{"/v1/sessions/s1/messages?after=3", 200, `"seq":4`},
		{"/v1/sessions/s1/operations/op1/messages?after=4", 200, "[]"},
		{"/v1/sessions/s2/messages?after=5", 404, `unknown session \"s2\"`},
		{"/v1/sessions/s1/operations/none/messages?after=99", 404, `unknown operation \"none\"`},
	} {
		resp, err := http.Get(f.http.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("GET %s: %d %s, want %d and %q", tc.path, resp.StatusCode, b, tc.code, tc.want)
		}
	}

	// WebSocket: an error message, then the connection closes saying the same.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := f.dial(t, "s1", 99)
	_, data, err := c.Read(ctx)
	var reply struct{ Type, Error string }
	if err != nil || json.Unmarshal(data, &reply) != nil || reply.Type != "error" || reply.Error != want {
		t.Errorf("ws after=99: %s, %v; want the error %q", data, err, want)
	}
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation || !strings.Contains(err.Error(), "after=99, but the last seq of session s1 is 4") {
		t.Errorf("ws after=99: closed with %v", err)
	}
	// after=4 is the end: the stream is live, nothing is replayed and no error comes.
	c = f.dial(t, "s1", 4)
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, data, err := c.Read(short); err == nil {
		t.Errorf("ws after=4 sent %s", data)
	}
}
