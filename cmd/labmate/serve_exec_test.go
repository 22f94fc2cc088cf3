package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server/client"
)

// TestExecThroughServer: labmate exec --server picks the token up from the server's data
// directory (--data, or the default one), and without it is refused saying so.
func TestExecThroughServer(t *testing.T) {
	xdg := t.TempDir()
	data := filepath.Join(xdg, "labmate")
	_, url := serve(t, data)
	dir := t.TempDir()
	write(t, dir, "run.py", "for i in range(3):\n    print('remote', i)\n_ = open('remote.csv', 'w').write('a,b\\n')\n")
	out, errOut, code := labmate(t, dir, "", "exec", "--server", url, "--data", data, "--session", "cli one", "run.py")
	if code != 0 || out != "remote 0\nremote 1\nremote 2\n" {
		t.Errorf("exec --server --data: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, `labmate: session "cli one" is new on `+url+": starting it\n") {
		t.Errorf("exec --server --session NEW does not say the session is new:\n%s", errOut)
	}
	if _, errOut, _ = labmate(t, dir, "", "exec", "--server", url, "--data", data, "--session", "cli one", "run.py"); strings.Contains(errOut, "is new") {
		t.Errorf("exec --server --session EXISTING says it is new:\n%s", errOut)
	}
	// The session is listed under the file the cell came from.
	if resp, body := request(t, "GET", url, "/v1/sessions", ""); resp.StatusCode != 200 || !strings.Contains(body, `"id":"cli one"`) ||
		!regexp.MustCompile(`"id":"cli one"[^}]*"title":"run.py"`).MatchString(body) {
		t.Errorf("GET /v1/sessions: %d %s; want session \"cli one\" titled run.py", resp.StatusCode, body)
	}
	// The artifact is printed as the URL the server serves it at.
	artifact := "/v1/sessions/cli%20one/artifacts/remote.csv"
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
