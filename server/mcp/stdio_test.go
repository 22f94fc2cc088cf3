package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that writes its requests and closes its end of stdin (printf … | labmate mcp) gets
// a reply to each request it sent before the end of its input, a slow cell's too, and
// then the server ends.
func TestMCPStdioEOF(t *testing.T) {
	f := newFixture(t)
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := f.lab.Run(context.Background(), &sdk.IOTransport{Reader: stdinR, Writer: stdoutW})
		stdoutW.Close()
		done <- err
	}()

	reqs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"kernels","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"exec","arguments":{"kernel":"python","code":"import time\ntime.sleep(1.5)\nprint('slept')"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"exec","arguments":{"kernel":"python","code":"print(6*7)"}}}`,
		`{"jsonrpc":"2.0","id":"six","method":"ping"}`,
	}
	go func() {
		for _, r := range reqs {
			io.WriteString(stdinW, r+"\n")
		}
		stdinW.Close() // EOF, before any reply can have come
	}()

	got := map[string]string{} // id → its result or error
	sc := bufio.NewScanner(stdoutR)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		if m.Method != "" || m.ID == nil {
			continue // a notification
		}
		got[string(m.ID)] = string(m.Result) + string(m.Error)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after EOF: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not end after the replies")
	}
	for id, want := range map[string]string{`1`: `"serverInfo"`, `2`: `"exec"`, `3`: `"python"`, `4`: `slept`, `5`: `42`, `"six"`: `{}`} {
		r, ok := got[id]
		switch {
		case !ok:
			t.Errorf("no reply to request %s; got %d replies: %v", id, len(got), keys(got))
		case !strings.Contains(r, want) || strings.Contains(r, `"isError":true`):
			t.Errorf("reply to %s = %.300s; want it to contain %s", id, r, want)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d replies, want 6: %v", len(got), keys(got))
	}
}

func keys(m map[string]string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return fmt.Sprint(ks)
}
