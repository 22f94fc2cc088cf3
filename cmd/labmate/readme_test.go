package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// readmeLine is one command of a shell block of the README.
type readmeLine struct {
	section string // the heading it is under, without the #s
	line    int    // its first line in README.md
	text    string // the command as shown, continuation lines joined
}

func (l readmeLine) String() string { return fmt.Sprintf("README.md:%d: %s", l.line, l.text) }

// readmeShell returns every command of every ```sh block of the README, in order: a line
// ending in a backslash or inside a quote goes on on the next, and lines that are only a
// comment are left out.
func readmeShell(t *testing.T) []readmeLine {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var (
		lines   []readmeLine
		section string
		in      bool
		cur     *readmeLine
	)
	for i, s := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.HasPrefix(s, "#"):
			section = strings.TrimSpace(strings.TrimLeft(s, "#"))
		case !in && s == "```sh":
			in = true
		case in && s == "```":
			in = false
		case in && cur != nil:
			cur.text += " " + strings.TrimSpace(strings.TrimSuffix(s, "\\"))
			if !strings.HasSuffix(s, "\\") && !openQuote(cur.text) {
				lines, cur = append(lines, *cur), nil
			}
		case in && len(shellWords(s)) > 0:
			l := readmeLine{section: section, line: i + 1, text: strings.TrimSpace(strings.TrimSuffix(s, "\\"))}
			if strings.HasSuffix(s, "\\") || openQuote(l.text) {
				cur = &l
				continue
			}
			lines = append(lines, l)
		}
	}
	return lines
}

// openQuote reports whether a quote of s is still open at its end (outside a # comment).
func openQuote(s string) bool {
	quote := rune(0)
	for i, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && r == '#' && (i == 0 || s[i-1] == ' '):
			return false
		}
	}
	return quote != 0
}

// readmeRule says how the test runs the README commands that match it; a command no rule
// matches must exit 0 as shown.
type readmeRule struct {
	match string // a regular expression the command matches
	// skip, when set, is why the command is not run here.
	skip string
	// needs are programs the command needs: where one is missing (make test's scripts/deps
	// installs them), the command is not run, and the test says so.
	needs []string
	// rewrite turns the command as shown into the one run (a placeholder such as ID becoming
	// the id an earlier command printed, an address becoming the test's own server); what it
	// changes and why is said in the rule's comment.
	rewrite func(st *readmeState, cmd string) string
	// code is the exit status expected (0 unless said), want text the output must contain.
	code int
	want []string
	// after sees the command's output (to remember an id it printed).
	after func(st *readmeState, out string)
}

// readmeState is what the commands of one README run share.
type readmeState struct {
	t    *testing.T
	root string            // the working directory: a copy of the repository's examples and README
	env  map[string]string // the environment, changed by the README's own export and VAR= lines
	vars map[string]string // what earlier commands printed (ids), by name
}

func (st *readmeState) environ() []string {
	env := os.Environ()
	keys := make([]string, 0, len(st.env))
	for k := range st.env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+st.env[k])
	}
	return env
}

// assignment recognizes a line that only sets a variable (export NAME=VALUE or NAME=VALUE).
func assignment(cmd string) (name, value string, ok bool) {
	w := shellWords(cmd)
	if len(w) == 2 && w[0] == "export" {
		w = w[1:]
	}
	if len(w) != 1 {
		return "", "", false
	}
	name, value, ok = strings.Cut(w[0], "=")
	return name, value, ok && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(name)
}

// run runs one README command through sh in the state's working directory.
func (st *readmeState) run(l readmeLine, rules []readmeRule) {
	t := st.t
	if name, value, ok := assignment(l.text); ok {
		st.env[name] = os.Expand(value, func(k string) string { return st.env[k] })
		return
	}
	var rule readmeRule
	for _, r := range rules {
		if regexp.MustCompile(r.match).MatchString(l.text) {
			rule = r
			break
		}
	}
	if rule.skip != "" {
		t.Logf("%s: not run: %s", l, rule.skip)
		return
	}
	for _, p := range rule.needs {
		if _, err := exec.LookPath(p); err != nil {
			t.Logf("%s: not run: %s is not installed here (scripts/deps installs it)", l, p)
			return
		}
	}
	cmd := l.text
	if rule.rewrite != nil {
		cmd = rule.rewrite(st, cmd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Dir, c.Env = st.root, st.environ()
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	start := time.Now()
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", l, err)
	}
	shown := cmd
	if cmd != l.text {
		shown = l.text + "\n  run as: " + cmd
	}
	t.Logf("%s: exit %d in %s", shown, code, time.Since(start).Round(time.Millisecond))
	if code != rule.code {
		t.Errorf("%s: exit %d, want %d; output:\n%s", shown, code, rule.code, out.String())
		return
	}
	for _, w := range rule.want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("%s: the output lacks %q:\n%s", shown, w, out.String())
		}
	}
	if rule.after != nil {
		rule.after(st, out.String())
	}
}

// newReadmeState makes the working directory the README's commands assume, the repository's
// root: examples/ and README.md copied into it, bin/labmate the binary under test (and
// labmate on PATH), ../shared the shared data; HOME, the data and configuration directories
// are the test's own.
func newReadmeState(t *testing.T) *readmeState {
	t.Helper()
	// A short path: a run's bench socket lives in its workspace, and a unix socket's path has
	// at most 107 bytes.
	top, err := os.MkdirTemp("", "readme")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	root := filepath.Join(top, "labmate")
	home := filepath.Join(top, "home")
	for _, d := range []string{filepath.Join(root, "bin"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", "-r", "../../examples", "../../README.md", root).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	if err := os.Symlink(bin, filepath.Join(root, "bin", "labmate")); err != nil {
		t.Fatal(err)
	}
	if shared, err := filepath.Abs("../../../shared"); err == nil {
		os.Symlink(shared, filepath.Join(top, "shared"))
	}
	env := map[string]string{
		"HOME":            home,
		"XDG_DATA_HOME":   filepath.Join(top, "data"),
		"XDG_CONFIG_HOME": filepath.Join(top, "config"),
		"XDG_CACHE_HOME":  filepath.Join(top, "cache"),
		"PATH":            filepath.Join(root, "bin") + ":" + os.Getenv("PATH"),
	}
	for _, kv := range modelEnv(t) {
		k, v, _ := strings.Cut(kv, "=")
		if k != "XDG_CONFIG_HOME" {
			env[k] = v
		}
	}
	for _, k := range []string{"LABMATE_MEMORY", "LABMATE_DOCS_DB", "LABMATE_TOKEN", "LABMATE_PAPERS", "LABMATE_FETCH",
		"LABMATE_FETCH_PRIVATE", "LABMATE_FETCH_ALLOW", "SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY", "ARXIV_URL", "CROSSREF_URL"} {
		env[k] = ""
	}
	return &readmeState{t: t, root: root, env: env, vars: map[string]string{}}
}

// TestREADME runs every command the README's shell blocks show, in order, section by
// section, against the shipped examples, and checks its exit status (readmeRules say which
// are not run and why, and what a placeholder becomes). A command added to the README is
// tested without a word here.
func TestREADME(t *testing.T) {
	lines := readmeShell(t)
	if len(lines) < 60 {
		t.Fatalf("the README shows %d commands", len(lines))
	}
	var sections []string
	for _, l := range lines {
		if !slices.Contains(sections, l.section) {
			sections = append(sections, l.section)
		}
	}
	st := newReadmeState(t)
	rules := readmeRules(t, st)
	for _, sec := range sections {
		t.Run(strings.ReplaceAll(sec, " ", "_"), func(t *testing.T) {
			var of []readmeLine
			for _, l := range lines {
				if l.section == sec {
					of = append(of, l)
				}
			}
			if sec == "Long jobs" {
				jobREADME(t, st, of)
				return
			}
			st.t = t
			for _, l := range of {
				st.run(l, rules)
			}
		})
	}
}
