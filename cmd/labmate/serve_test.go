package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server/client"
)

// serve starts labmate serve on a free loopback port and returns its URL.
func serve(t *testing.T, data string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data, "--prewarm", "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("serve printed nothing: %v", sc.Err())
	}
	_, rest, ok := strings.Cut(sc.Text(), "listening on ")
	if !ok {
		t.Fatalf("serve said %q", sc.Text())
	}
	url, _, _ := strings.Cut(rest, " ")
	go func() {
		for sc.Scan() {
		}
	}()
	return cmd, url
}

// TestServeSurvivesKill9 kills the server during 20 running operations: after a restart
// every one of them is terminal, the database passes its integrity check and the completed
// history is intact.
func TestServeSurvivesKill9(t *testing.T) {
	data := t.TempDir()
	cmd, url := serve(t, data)
	c, err := client.New(url, "")
	if err != nil {
		t.Fatal(err)
	}
	// One operation that completes, then 20 that run until the server dies.
	var done int
	for m, err := range c.Exec(context.Background(), "done", &protocol.Request{Kind: "exec", Kernel: "python", Code: "print('finished')"}) {
		if err != nil {
			t.Fatal(err)
		}
		done++
		_ = m
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ticks := make([]int, 20) // progress messages seen per running operation
	for i := range 20 {
		wg.Go(func() {
			loop := "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.05)"
			for m, err := range c.Exec(context.Background(), fmt.Sprint("run", i), &protocol.Request{Kind: "exec", Kernel: "python", Code: loop}) {
				if err != nil {
					return // the server died under it
				}
				if m.Type == protocol.TypeProgress {
					mu.Lock()
					ticks[i]++
					mu.Unlock()
				}
			}
		})
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		// Kill the server once every operation is streaming: 20 kernels start slowly on a busy
		// machine, so a total count could be reached while some were still starting.
		mu.Lock()
		least := slices.Min(ticks)
		mu.Unlock()
		if least >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	wg.Wait()

	db, err := sql.Open("sqlite", filepath.Join(data, "labmate.db"))
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	db.Close()

	_, url = serve(t, data)
	var sessions []protocol.SessionInfo
	getJSON(t, url+"/v1/sessions", &sessions)
	if len(sessions) != 21 {
		t.Fatalf("%d sessions after the restart, want 21", len(sessions))
	}
	restarted := 0
	for _, s := range sessions {
		var ops []protocol.OperationInfo
		getJSON(t, url+"/v1/sessions/"+s.ID+"/operations", &ops)
		for _, op := range ops {
			if !op.State.Terminal() {
				t.Errorf("session %s operation %s is %s after the restart", s.ID, op.ID, op.State)
			}
			if op.State == protocol.FailedState {
				restarted++
			}
		}
		var msgs []*protocol.EnhancedMessage
		getJSON(t, url+"/v1/sessions/"+s.ID+"/messages", &msgs)
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Fatalf("session %s: seq %d at %d", s.ID, m.Seq, i)
			}
		}
		if s.ID == "done" {
			if len(msgs) != done || msgs[len(msgs)-1].Type != protocol.TypeComplete {
				t.Errorf("the completed operation's history changed: %d messages (had %d)", len(msgs), done)
			}
			continue
		}
		var f protocol.Failed
		if err := msgs[len(msgs)-1].Decode(&f); err != nil || f.Reason != protocol.ReasonServerRestart || len(msgs) < 5 {
			t.Errorf("session %s: %d messages ending %s %+v: want a running operation closed by server_restart", s.ID, len(msgs), msgs[len(msgs)-1].Type, f)
		}
	}
	if restarted != 20 {
		t.Errorf("%d operations closed as failed, want 20", restarted)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestExecThroughServer(t *testing.T) {
	_, url := serve(t, t.TempDir())
	dir := t.TempDir()
	write(t, dir, "run.py", "for i in range(3):\n    print('remote', i)\n")
	out, errOut, code := labmate(t, dir, "", "exec", "--server", url, "run.py")
	if code != 0 || out != "remote 0\nremote 1\nremote 2\n" {
		t.Errorf("exec --server: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, code = labmate(t, dir, "", "exec", "--server", url, "--json", "run.py")
	if code != 0 || strings.Count(out, "\n") < 6 || !strings.Contains(out, `"operation_complete"`) {
		t.Errorf("exec --server --json: exit %d\n%s", code, out)
	}
	if _, errOut, code := labmate(t, dir, "", "serve", "--addr", "0.0.0.0:0"); code != 2 || !strings.Contains(errOut, "--token") {
		t.Errorf("serve on all interfaces without a token: exit %d, %q", code, errOut)
	}
}

// TestServeGracefulShutdown: SIGTERM ends a running operation FAILED, saying why, before the
// server exits, and the client sees that terminal message.
func TestServeGracefulShutdown(t *testing.T) {
	cmd, url := serve(t, t.TempDir())
	c, _ := client.New(url, "")
	var last *protocol.EnhancedMessage
	lines := 0
	for m, err := range c.Exec(context.Background(), "g", &protocol.Request{Kind: "exec", Kernel: "python",
		Code: "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.05)"}) {
		if err != nil {
			t.Fatalf("after %d lines: %v", lines, err)
		}
		if m.Type == protocol.TypeProgress {
			if lines++; lines == 5 {
				cmd.Process.Signal(syscall.SIGTERM)
			}
		}
		last = m
	}
	var f protocol.Failed
	if err := last.Decode(&f); err != nil || last.Type != protocol.TypeFailed || !strings.Contains(f.Error, "server shut down") {
		t.Fatalf("terminal %s %+v, want failed: the server shut down", last.Type, f)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v after SIGTERM", err)
	}
}
