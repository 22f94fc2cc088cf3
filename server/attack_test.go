package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/mcp"
)

// sessionWorkspace is the one workspace under root whose .labmate exists: the live session's.
func sessionWorkspace(t *testing.T, root string) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(root, "ws-*", ".labmate"))
	if len(ms) != 1 {
		t.Fatalf("workspaces with .labmate under %s: %v, want one", root, ms)
	}
	return filepath.Dir(ms[0])
}

// execIn runs code in session's python kernel over REST and the client, within d.
func execIn(t *testing.T, url, session, code string, d time.Duration) ([]*protocol.EnhancedMessage, error) {
	t.Helper()
	c, _ := clientFor(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var got []*protocol.EnhancedMessage
	for m, err := range c.Exec(ctx, session, &protocol.Request{Kind: "exec", Kernel: "python", Code: code}) {
		if err != nil {
			return got, err
		}
		got = append(got, m)
	}
	return got, nil
}

// A session's first kernel starts with .labmate made, read-only to its cells: a cell cannot
// make the bench's journal a FIFO or a symbolic link.
func TestAttackLabmateDirReadOnly(t *testing.T) {
	root := t.TempDir()
	s := serveReal(t, func(c *server.Config) { c.Workspaces = root })
	msgs, err := execIn(t, s.url, "a", `import os
for f in (lambda: os.mkfifo('.labmate/bench.jsonl.x'), lambda: os.symlink('/etc/shadow', '.labmate/evil'), lambda: open('.labmate/bench.jsonl', 'a')):
    try:
        f(); print('planted')
    except OSError as e:
        print('refused', e.errno)`, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if hasLine(msgs, "planted") || !hasLine(msgs, fmt.Sprint("refused ", int(syscall.EROFS))) {
		t.Errorf("a cell writing in .labmate: %v", outLines(msgs))
	}
}

func outLines(msgs []*protocol.EnhancedMessage) []string {
	var out []string
	for _, m := range msgs {
		if p, _ := protocol.DecodePayload(m); p != nil {
			if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Line != "" {
				out = append(out, pr.Observation.Line)
			}
		}
	}
	return out
}

// A journal that is a FIFO when a session's kernel starts again (after idle) neither hangs
// that session nor the server: the other sessions and /healthz answer within 5 s, the
// session's cells run, and its bench says why it cannot be read. A journal that is a
// symbolic link to a host file leaves the file untouched.
func TestAttackPlantedJournal(t *testing.T) {
	root := t.TempDir()
	var ks kernels
	s := serveReal(t, func(c *server.Config) { c.Workspaces, c.Limits.Idle = root, time.Second; setStart(c, ks.start(t)) })
	if _, err := execIn(t, s.url, "a", "print('first')", time.Minute); err != nil {
		t.Fatal(err)
	}
	// A connection keeps the session, and its workspace, while its kernels idle out.
	conn, _, err := websocket.Dial(context.Background(), "ws://"+s.addr+"/v1/sessions/a/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	ws := sessionWorkspace(t, root)
	waitFor(t, "a's kernel is reaped", func() bool { return ks.live.Load() == 0 })
	journal := filepath.Join(ws, ".labmate", "bench.jsonl")
	target := filepath.Join(t.TempDir(), "host-file")
	if err := os.WriteFile(target, []byte("host file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, plant := range []struct {
		name string
		do   func() error
		says string
	}{
		{"fifo", func() error { return syscall.Mkfifo(journal, 0o666) }, "a FIFO"},
		{"symlink", func() error { return os.Symlink(target, journal) }, "symbolic link"},
	} {
		t.Run(plant.name, func(t *testing.T) {
			os.Remove(journal)
			if err := plant.do(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				msgs, err := execIn(t, s.url, "a", "print('again')", 2*time.Minute)
				if err == nil && !hasLine(msgs, "again") {
					err = fmt.Errorf("no output: %v", outLines(msgs))
				}
				done <- err
			}()
			// Meanwhile another session and /healthz are served, each within 5 s.
			begin := time.Now()
			if msgs, err := execIn(t, s.url, fmt.Sprint("b-", plant.name), "print('b')", time.Minute); err != nil || !hasLine(msgs, "b") {
				t.Errorf("session b while a starts on a planted journal: %v %v", err, outLines(msgs))
			}
			cl := &http.Client{Timeout: 5 * time.Second}
			resp, err := cl.Get(s.url + "/healthz")
			if err != nil {
				t.Fatalf("/healthz: %v", err)
			}
			resp.Body.Close()
			t.Logf("session b and /healthz answered in %v", time.Since(begin))
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("session a: %v", err)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("session a hangs")
			}
			code, body := jsonCall(t, "GET", s.url+"/v1/sessions/a/bench", "")
			if code == http.StatusOK || !strings.Contains(body, "bench.jsonl") || !strings.Contains(body, plant.says) {
				t.Errorf("session a's bench: %d %s, want an error naming the journal as %s", code, body, plant.says)
			}
			if b, err := os.ReadFile(target); err != nil || string(b) != "host file\n" {
				t.Errorf("the symlink's target: %q %v", b, err)
			}
			waitFor(t, "the kernels are reaped", func() bool { return ks.live.Load() == 0 })
		})
	}
}

// LD_PRELOAD in a job's env is refused, naming the variable, over REST and over MCP
// (streamable HTTP on loopback, the official client), before any scheduler is asked.
func TestAttackLDPreloadJob(t *testing.T) {
	dir := t.TempDir()
	cancelAll(t, dir)
	l := openJobLab(t, dir, nil)
	for _, name := range []string{"LD_PRELOAD", "LD_AUDIT", "GCONV_PATH", "PYTHONSTARTUP"} {
		code, out := l.do(t, "POST", "/v1/jobs", fmt.Sprintf(`{"command": ["true"], "env": {%q: "/tmp/evil.so"}}`, name))
		if code != http.StatusBadRequest || !strings.Contains(out, name) || !strings.Contains(out, "refused") {
			t.Errorf("REST, env %s: %d %s; want 400 naming it", name, code, out)
		}
	}
	l.srv.Handle("/mcp", mcp.New(l.srv.Runner, &mcp.Options{Version: "test"}).Handler())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: l.http.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "submit_job",
		Arguments: map[string]any{"command": []string{"true"}, "env": map[string]string{"LD_PRELOAD": "/tmp/evil.so"}}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if !res.IsError || !strings.Contains(text.String(), "LD_PRELOAD") {
		t.Errorf("MCP submit_job with LD_PRELOAD: error %v, %q; want a refusal naming it", res.IsError, text.String())
	}
	if code, out := l.do(t, "GET", "/v1/jobs", ""); code != http.StatusOK || out != "[]\n" {
		t.Errorf("after refused jobs, jobs: %d %s", code, out)
	}
}
