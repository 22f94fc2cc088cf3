package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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

// TestExecThroughServer: labmate exec --server picks the token up from the server's data
// directory (--data, or the default one), and without it is refused saying so.
func TestExecThroughServer(t *testing.T) {
	xdg := t.TempDir()
	data := filepath.Join(xdg, "labmate")
	_, url := serve(t, data)
	dir := t.TempDir()
	write(t, dir, "run.py", "for i in range(3):\n    print('remote', i)\n_ = open('remote.csv', 'w').write('a,b\\n')\n")
	out, errOut, code := labmate(t, dir, "", "exec", "--server", url, "--data", data, "--session", "cli-one", "run.py")
	if code != 0 || out != "remote 0\nremote 1\nremote 2\n" {
		t.Errorf("exec --server --data: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The artifact is printed as the URL the server serves it at.
	artifact := "/v1/sessions/cli-one/artifacts/remote.csv"
	if !strings.Contains(errOut, "labmate: artifact remote.csv (text/csv, 4 bytes): "+url+artifact+"\n") {
		t.Errorf("exec --server: stderr lacks the artifact's URL %s:\n%s", url+artifact, errOut)
	}
	if resp, body := request(t, "GET", url, artifact, ""); resp.StatusCode != 200 || body != "a,b\n" {
		t.Errorf("GET %s: %d %q", artifact, resp.StatusCode, body)
	}
	// The default data directory, as labmate serve's.
	out, _, code = labmateEnv(t, []string{"XDG_DATA_HOME=" + xdg}, dir, "", "exec", "--server", url, "--json", "run.py")
	if code != 0 || strings.Count(out, "\n") < 6 || !strings.Contains(out, `"operation_complete"`) {
		t.Errorf("exec --server --json with the default data directory: exit %d\n%s", code, out)
	}
	out, _, code = labmateEnv(t, []string{"XDG_DATA_HOME=" + t.TempDir(), "LABMATE_TOKEN=" + tokenOf(url)}, dir, "", "exec", "--server", url, "run.py")
	if code != 0 || !strings.Contains(out, "remote 2") {
		t.Errorf("exec --server with LABMATE_TOKEN: exit %d %q", code, out)
	}
	for _, c := range []struct {
		what string
		env  []string
		args []string
	}{
		{"no token anywhere", []string{"XDG_DATA_HOME=" + t.TempDir()}, nil},
		{"a wrong --token", nil, []string{"--token", "wrong"}},
	} {
		_, errOut, code := labmateEnv(t, c.env, dir, "", append(append([]string{"exec", "--server", url}, c.args...), "run.py")...)
		if code != 2 || !strings.Contains(errOut, "401") || !strings.Contains(errOut, "bearer token") || strings.Contains(errOut, "retrying") {
			t.Errorf("exec --server with %s: exit %d, %q; want 401 at once", c.what, code, errOut)
		}
	}
}

// TestServeToken: labmate serve makes a random token in DATA/token (0600), prints it in the
// dashboard's URL, and keeps it across restarts; it refuses a token file others can read,
// and --no-token beyond loopback.
func TestServeToken(t *testing.T) {
	data := t.TempDir()
	cmd, url := serve(t, data)
	tok := tokenOf(url)
	fi, err := os.Stat(filepath.Join(data, "token"))
	if err != nil || fi.Mode().Perm() != 0o600 || len(tok) != 64 {
		t.Fatalf("token file %v %v, token %q: want mode 0600 and 64 hex digits", fi, err, tok)
	}
	b, _ := os.ReadFile(filepath.Join(data, "token"))
	if strings.TrimSpace(string(b)) != tok {
		t.Errorf("the printed token is not the stored one")
	}
	for path, want := range map[string]int{"/v1/sessions": 401, "/healthz": 200, "/": 200} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s without the token: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if resp, _ := request(t, "GET", url, "/v1/sessions", ""); resp.StatusCode != 200 {
		t.Errorf("GET /v1/sessions with the token: %d", resp.StatusCode)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	_, url2 := serve(t, data)
	if tokenOf(url2) != tok {
		t.Errorf("a restart changed the token: clients would be locked out")
	}

	// Refusals.
	leaky := t.TempDir()
	os.WriteFile(filepath.Join(leaky, "token"), []byte(strings.Repeat("a", 64)+"\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", leaky}, "mode 0644"},
		{[]string{"--no-token", "--addr", "0.0.0.0:0"}, "--no-token"},
		{[]string{"--no-token", "--addr", "192.0.2.1:0"}, "reachable beyond this machine"},
		{[]string{"--no-token", "--token", "x1234567890"}, "choose one"},
		{[]string{"--allow-host", "http://x.example"}, "allowed host"},
	} {
		args := append([]string{"serve", "--prewarm", "", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)
		if _, errOut, code := labmate(t, t.TempDir(), "", args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("serve %v: exit %d, %q; want a refusal mentioning %q", c.args, code, errOut, c.want)
		}
	}
	// --no-token on loopback serves without one, and says so.
	_, open := serve(t, t.TempDir(), "--no-token")
	if tokenOf(open) != "" {
		t.Errorf("--no-token printed a token")
	}
	if resp, _ := request(t, "GET", open, "/v1/sessions", ""); resp.StatusCode != 200 {
		t.Errorf("--no-token: %d", resp.StatusCode)
	}
}

// TestExecAcrossRestart: labmate exec --server streams a cell while its server is killed
// (kill -9) and started again on the same port and data 2 s later: exec retries, resumes
// with after=SEQ, prints every line once, and ends with the operation's end as the restarted
// server recorded it; the next exec runs normally. A cell printing as fast as it can is
// killed while the server has sent lines it has not committed yet: the log goes on from an
// earlier seq, and exec still prints each line once.
func TestExecAcrossRestart(t *testing.T) {
	for _, c := range []struct {
		name, code string
		kill       int // after this many lines
	}{
		{"slow", "import time\nfor i in range(100):\n    print('line', i, flush=True)\n    time.sleep(0.1)\n", 5},
		{"flood", "for i in range(10**6):\n    print('line', i)\n", 3000},
	} {
		t.Run(c.name, func(t *testing.T) { execAcrossRestart(t, c.code, c.kill) })
	}
}

func execAcrossRestart(t *testing.T, code string, kill int) {
	data := t.TempDir()
	srv, url := serve(t, data)
	dir := t.TempDir()
	write(t, dir, "slow.py", code)
	cmd := exec.Command(bin, "exec", "--server", url, "--data", data, "slow.py")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == kill {
			srv.Process.Signal(syscall.SIGKILL)
			srv.Wait()
			time.Sleep(2 * time.Second)
			serveOn(t, data, strings.TrimPrefix(url, "http://"))
		}
	}
	err = cmd.Wait()
	for i, l := range lines {
		if l != fmt.Sprint("line ", i) {
			t.Fatalf("stdout line %d is %q: lost or repeated across the restart\n%s", i, l, strings.Join(lines, "\n"))
		}
	}
	if len(lines) < kill || strings.Contains(code, "range(100)") && len(lines) >= 100 {
		t.Errorf("%d lines: want the ones printed before the kill", len(lines))
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "retrying for up to 1m0s") || !strings.Contains(stderr.String(), "the server stopped while the operation ran") {
		t.Errorf("exec across the restart: %v, stderr %q; want exit 2 after retrying, saying the server stopped", err, stderr.String())
	}
	// What the log kept: a prefix of what exec printed (a server killed outright loses the
	// messages it had not committed, which it may have sent already).
	var sessions []protocol.SessionInfo
	getJSON(t, url+"/v1/sessions", &sessions)
	if len(sessions) != 1 {
		t.Fatalf("sessions: %+v", sessions)
	}
	var msgs []*protocol.EnhancedMessage
	getJSON(t, url+"/v1/sessions/"+sessions[0].ID+"/messages", &msgs)
	kept := 0
	for _, m := range msgs {
		if p, _ := protocol.DecodePayload(m); p != nil {
			if pr, ok := p.(*protocol.Progress); ok && pr.Observation != nil && pr.Observation.Kind == protocol.ObsStdout {
				if kept >= len(lines) || pr.Observation.Line != lines[kept] {
					t.Fatalf("the log's stdout line %d is %q, exec printed %q", kept, pr.Observation.Line, lines)
				}
				kept++
			}
		}
	}
	t.Logf("exec printed %d lines, the log kept %d", len(lines), kept)
	write(t, dir, "quick.py", "print('after the restart')\n")
	if out, errOut, code := labmate(t, dir, "", "exec", "--server", url, "--data", data, "quick.py"); code != 0 || out != "after the restart\n" {
		t.Errorf("exec after the restart: exit %d %q %q", code, out, errOut)
	}
}

// TestServeGracefulShutdown: SIGTERM ends a running operation FAILED, saying why, before the
// server exits, and the client sees that terminal message.
func TestServeGracefulShutdown(t *testing.T) {
	cmd, url := serve(t, t.TempDir())
	c, _ := client.New(url, tokenOf(url))
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

// TestServeDataRoot: labmate serve --data-root lets clients name the CSV files under it by
// path, and only those; a data root that does not exist stops the server from starting.
func TestServeDataRoot(t *testing.T) {
	reactions := filepath.Join(sharedData(t), "reactions")
	_, url := serve(t, t.TempDir(), "--data-root", reactions)
	spec := `{"csv":%q,"objective":"yield","vars":["ligand","reagent","solvent"],"groups":["reactant_1","reactant_2"],"planner":"random","budget":2}`
	if resp, b := request(t, "POST", url, "/v1/campaigns", fmt.Sprintf(spec, filepath.Join(reactions, "suzuki_perera2018.csv"))); resp.StatusCode != http.StatusCreated {
		t.Errorf("a CSV under the data root: %d %s", resp.StatusCode, b)
	}
	if resp, b := request(t, "POST", url, "/v1/campaigns", fmt.Sprintf(spec, "/etc/passwd")); resp.StatusCode != http.StatusBadRequest ||
		!strings.Contains(b, `csv path \"/etc/passwd\" is not under a data root`) || strings.Contains(b, "root:") {
		t.Errorf("/etc/passwd: %d %s", resp.StatusCode, b)
	}
	_, stderr, code := labmate(t, t.TempDir(), "", "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--prewarm", "", "--data-root", filepath.Join(t.TempDir(), "missing"))
	if code == 0 || !strings.Contains(stderr, "--data-root") {
		t.Errorf("a missing data root: exit %d, %q", code, stderr)
	}
}

// TestServeDataDirPrivate: the data directory holds memory, logs, the token and workspaces:
// labmate serve makes it readable by its owner only, closing one that was left open.
func TestServeDataDirPrivate(t *testing.T) {
	parent := t.TempDir()
	fresh, open := filepath.Join(parent, "fresh"), filepath.Join(parent, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{fresh, open} {
		serve(t, dir)
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want mode 0700", dir, fi.Mode(), err)
		}
	}
}
