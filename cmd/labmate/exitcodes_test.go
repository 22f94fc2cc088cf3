package main

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExitCodes: every exit status the help of memory, docs, campaign run and serve documents
// is the one labmate exits with, each reached by a command that should reach it.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	mem := filepath.Join(dir, "m.db")
	docs := filepath.Join(dir, "docs.db")
	write(t, dir, "balance.md", "# Balance XS205\n\n## Calibration\nPress CAL and wait for the internal weight to settle.\n")
	small := writeSmall(t, dir)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	noWeb := []string{"SEARXNG_URL=", "BRAVE_API_KEY=", "TAVILY_API_KEY="}
	campaign := []string{"campaign", "run", "--dataset", small, "--vars", "lig,base,solvent", "--group", "sub", "--turns", "3", "--seeds", "1", "--store", filepath.Join(dir, "c.db")}
	for _, tc := range []struct {
		help string   // the command whose --help documents the code
		args []string // a command that exits with it
		env  []string
		code int
		want string // on stderr
	}{
		{"memory", []string{"memory", "--store", mem, "add", "--kind", "warning", "ode45 diverges on stiff problems"}, nil, 0, ""},
		{"memory", []string{"memory", "--store", mem, "search", "viscosity"}, nil, 1, "no matches"},
		{"memory", []string{"memory", "--store", mem, "show", "no-such-id"}, nil, 2, "no-such-id"},
		{"memory", []string{"memory", "--store", mem, "add", "--kind", "bogus", "x"}, nil, 2, `kind "bogus"`},
		{"docs", []string{"docs", "--store", docs, "index", filepath.Join(dir, "balance.md")}, nil, 0, ""},
		{"docs", []string{"docs", "--store", docs, "search", "calibration"}, nil, 0, ""},
		{"docs", []string{"docs", "--store", docs, "search", "zeolite"}, nil, 1, "no matches"},
		{"docs", []string{"docs", "--store", docs, "search", "--limit", "0", "x"}, nil, 2, "--limit 0"},
		{"docs", []string{"docs", "web", "x"}, noWeb, 2, "not configured"},
		{"campaign run", append(campaign, "--objective", "yield", "--planner", "random"), nil, 0, ""},
		{"campaign run", append(campaign, "--objective", "purity", "--planner", "random"), nil, 2, "purity"},
		{"serve", []string{"serve", "--addr", busy.Addr().String(), "--data", t.TempDir(), "--prewarm", ""}, nil, 2, "address already in use"},
	} {
		_, errOut, code := labmateEnv(t, tc.env, dir, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("labmate %q: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
		documented(t, tc.help, tc.code)
	}

	// serve exits 0 after SIGTERM.
	cmd, _ := serve(t, t.TempDir())
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("serve did not stop within 30 s of SIGTERM")
	}
	documented(t, "serve", 0)
}

// documented checks that labmate CMD --help lists code in its "Exit status:" paragraph.
func documented(t *testing.T, command string, code int) {
	t.Helper()
	out, _, _ := labmate(t, t.TempDir(), "", append(strings.Fields(command), "--help")...)
	_, para, ok := strings.Cut(out, "Exit status:")
	para, _, _ = strings.Cut(para, "\n\n")
	if !ok || !regexp.MustCompile(`(^|[ ;])`+regexp.QuoteMeta(fmt.Sprint(code))+` `).MatchString(para) {
		t.Errorf("labmate %s --help does not document exit status %d:%s", command, code, para)
	}
}
