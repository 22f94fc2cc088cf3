package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
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

// served remembers, by base URL, what each labmate serve of the tests printed.
var served sync.Map // URL → servedInfo

type servedInfo struct {
	token     string // the bearer token (empty with --no-token)
	dashboard string // the ready URL it printed
}

// serve starts labmate serve on a free loopback port and returns its URL; its token is
// what tokenOf returns.
func serve(t *testing.T, data string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	return serveOn(t, data, "127.0.0.1:0", args...)
}

// serveOn starts labmate serve on addr (to restart one on the same port).
func serveOn(t *testing.T, data, addr string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--data", data, "--prewarm", ""}, args...)...)
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
	if !sc.Scan() {
		t.Fatalf("serve printed no dashboard URL: %v", sc.Err())
	}
	var info servedInfo
	if i := strings.Index(sc.Text(), url+"/?token="); i >= 0 {
		info.dashboard = sc.Text()[i:]
		info.token = strings.TrimPrefix(info.dashboard, url+"/?token=")
	} else if i := strings.Index(sc.Text(), url+"/"); i >= 0 && strings.Contains(sc.Text(), "no token") {
		info.dashboard = url + "/"
	} else {
		t.Fatalf("serve said %q, want the dashboard's URL", sc.Text())
	}
	served.Store(url, info)
	go func() {
		for sc.Scan() {
		}
	}()
	return cmd, url
}

// tokenOf is the token of the server at url.
func tokenOf(url string) string {
	v, _ := served.Load(url)
	info, _ := v.(servedInfo)
	return info.token
}

// request sends a request to the server at base with its token.
func request(t *testing.T, method, base, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if tok := tokenOf(base); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
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
	return resp, string(b)
}

// TestServeSurvivesKill9 kills the server during 20 running operations and restarts it on
// the same port and data: every one of them is terminal, the database passes its integrity
// check, the completed history is intact, and the 20 clients, which kept retrying, resume
// with after=SEQ and see their operation's end, nothing lost or repeated.
func TestServeSurvivesKill9(t *testing.T) {
	data := t.TempDir()
	cmd, url := serve(t, data, "--max-kernels", "24")
	c, err := client.New(url, tokenOf(url))
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
	ends := make([]string, 20)
	for i := range 20 {
		wg.Go(func() {
			loop := "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.05)"
			ids := map[string]bool{}
			var last *protocol.EnhancedMessage
			for m, err := range c.Exec(context.Background(), fmt.Sprint("run", i), &protocol.Request{Kind: "exec", Kernel: "python", Code: loop}) {
				if err != nil {
					ends[i] = "error: " + err.Error()
					return
				}
				// (seq may step back once: the killed server lost what it had not committed)
				if ids[m.ID] {
					ends[i] = fmt.Sprintf("message %s (seq %d) yielded twice", m.ID, m.Seq)
					return
				}
				ids[m.ID], last = true, m
				if m.Type == protocol.TypeProgress {
					mu.Lock()
					ticks[i]++
					mu.Unlock()
				}
			}
			var f protocol.Failed
			if last.Decode(&f); last.Type != protocol.TypeFailed || f.Reason != protocol.ReasonServerRestart {
				ends[i] = fmt.Sprintf("ended %s %+v", last.Type, f)
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

	db, err := sql.Open("sqlite", filepath.Join(data, "labmate.db"))
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	db.Close()

	token := tokenOf(url)
	_, url = serveOn(t, data, strings.TrimPrefix(url, "http://"), "--max-kernels", "24")
	if tokenOf(url) != token {
		t.Errorf("the restarted server has another token: its clients would be locked out")
	}
	wg.Wait()
	for i, e := range ends {
		if e != "" {
			t.Errorf("client of run%d across the restart: %s", i, e)
		}
	}
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

// getJSON GETs url of a server the test started, with its token.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	base := url
	if i := strings.Index(url[len("http://"):], "/"); i >= 0 {
		base = url[:len("http://")+i]
	}
	resp, body := request(t, http.MethodGet, base, url[len(base):], "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatal(err)
	}
}
