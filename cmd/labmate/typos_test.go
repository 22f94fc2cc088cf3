package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTypos: values a user mistypes or flags that would be ignored are refused with exit 2
// and a message naming the value, before anything runs.
func TestTypos(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.py", "print('ran')\n")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status": "ok", "service": "not labmate"}`))
	}))
	defer other.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--session", "s1", "x.py"}, "labmate: --session is for a cell run on a server: give --server URL too (or leave --session out to run here)"},
		{[]string{"exec", "--token", "t", "x.py"}, "labmate: --token is for a cell run on a server: give --server URL too (or leave --token out to run here)"},
		{[]string{"exec", "--server", other.URL, "--workspace", dir, "x.py"}, "labmate: --workspace is for a cell run here: with --server the cell runs in its session's workspace on the server (leave --workspace out)"},
		{[]string{"exec", "--server", other.URL, "--token", "t", "--session", "nonexist", "x.py"}, "labmate: client: server refused: " + other.URL + " is not a labmate server: GET /v1/sessions answered application/json with something other than a list of sessions"},
		{[]string{"serve", "--prewarm", "julia", "--addr", "127.0.0.1:0", "--data", dir}, `labmate: --prewarm: unknown kernel "julia" (choose octave, python or shell)`},
		// labmate mcp took a mistyped --prewarm, served, and logged the unknown kernel as it
		// tried to pre-warm it again and again.
		{[]string{"mcp", "--prewarm", "pyhton", "--data", dir}, `labmate: --prewarm: unknown kernel "pyhton" (choose octave, python or shell)`},
	} {
		out, errOut, code := labmate(t, dir, "", tc.args...)
		if code != 2 || strings.TrimSpace(errOut) != tc.want || strings.Contains(out, "ran") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestOldSpellings: the spellings the conventions replaced still work, each saying what to
// write instead, and the new ones do the same.
func TestOldSpellings(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.py", "print('ran')\n")
	write(t, dir, "notes.md", "# Balance\n\nPress CAL to calibrate.\n")
	mem := dir + "/m.db"
	for _, tc := range []struct {
		args      []string
		code      int
		out, warn string // on stdout; on stderr
	}{
		{[]string{"docs", "--db", dir + "/d.db", "index", "notes.md"}, 0, "", "Flag --db has been deprecated, write --store instead\nindexed notes.md: 1 documents"},
		{[]string{"docs", "--store", dir + "/d.db", "search", "-n", "1", "calibrate"}, 0, "notes.md", "Flag --n has been deprecated, write --limit instead"},
		{[]string{"docs", "--store", dir + "/d.db", "search", "--limit", "1", "calibrate"}, 0, "notes.md", ""},
		{[]string{"exec", "--memory", "10M", "x.py"}, 2, "", `invalid argument "10M" for "--memory" flag: a memory budget of 10 MiB is below the minimum of 64 MiB`},
		{[]string{"exec", "--mem-limit", "2G", "x.py"}, 0, "ran", ""},
		{[]string{"memory", "--store", mem, "add", "-n", "team", "ode45 diverges on stiff problems"}, 0, "added", ""},
		{[]string{"memory", "--store", mem, "freeze", "team"}, 0, "team is frozen (read-only)", ""},
		{[]string{"memory", "--store", mem, "freeze", "--unfreeze", "team"}, 0, "team is writable", "Flag --unfreeze has been deprecated, write labmate memory unfreeze NAMESPACE instead"},
		{[]string{"memory", "--store", mem, "unfreeze", "team"}, 0, "team is writable", ""},
		{[]string{"version", "--json"}, 0, `"version":"`, ""},
		{[]string{"campaign", "run", "--data", dir + "/none.csv"}, 2, "", "Flag --data has been deprecated, write --dataset instead"},
		{[]string{"eval", "tasks", "--data", dir + "/none.json"}, 2, "", "Flag --data has been deprecated, write --dataset instead"},
	} {
		out, errOut, code := labmate(t, dir, "", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.warn) || (tc.warn == "" && strings.Contains(errOut, "deprecated")) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q and %q", tc.args, code, out, errOut, tc.code, tc.out, tc.warn)
		}
	}
}

// TestTyposServe: an after=SEQ past the end of the log, asked of a running labmate serve, is
// refused naming the value and the last seq, rather than waited on.
func TestTyposServe(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.py", "print('ran')\n")
	_, url := serve(t, t.TempDir())
	if _, errOut, code := labmate(t, dir, "", "exec", "--server", url, "--token", tokenOf(url), "--session", "s1", "x.py"); code != 0 {
		t.Fatalf("exec --server: exit %d: %s", code, errOut)
	}
	var list []struct {
		ID      string `json:"id"`
		LastSeq int64  `json:"last_seq"`
	}
	getJSON(t, url+"/v1/sessions", &list)
	if len(list) != 1 || list[0].LastSeq == 0 {
		t.Fatalf("sessions: %+v", list)
	}
	last := list[0].LastSeq
	for _, path := range []string{"/v1/sessions/s1/messages?after=%d"} {
		resp, body := request(t, "GET", url, fmt.Sprintf(path, last+100), "")
		want := fmt.Sprintf("after=%d, but the last seq of session s1 is %d (follow it with after=%d or less)", last+100, last, last)
		if resp.StatusCode != 400 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %s, want 400 and %q", fmt.Sprintf(path, last+100), resp.StatusCode, body, want)
		}
	}
	if resp, body := request(t, "GET", url, fmt.Sprintf("/v1/sessions/s1/messages?after=%d", last), ""); resp.StatusCode != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("after the last seq: %d %s, want 200 []", resp.StatusCode, body)
	}
}
