package main

import (
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
	} {
		out, errOut, code := labmate(t, dir, "", tc.args...)
		if code != 2 || strings.TrimSpace(errOut) != tc.want || strings.Contains(out, "ran") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}
