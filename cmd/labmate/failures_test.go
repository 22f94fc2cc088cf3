package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm/llmtest"
)

// TestAllInvalidCampaign: a campaign whose every llm answer is invalid measured nothing: it
// prints its table, then exits 1 with the reasons and their counts on stderr.
func TestAllInvalidCampaign(t *testing.T) {
	dir := t.TempDir()
	data := writeSmall(t, dir)
	var turns []llmtest.Turn
	for range 3 * 2 { // 3 groups × 2 turns
		turns = append(turns, llmtest.Text("I would rather not answer in JSON"))
	}
	srv := llmtest.NewServer(t, turns...)
	env := modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test")
	out, errOut, code := labmateEnv(t, env, dir, "", "campaign", "run", "--dataset", data, "--vars", "lig,base,solvent", "--group", "sub",
		"--planner", "llm", "-m", "openai:gpt-test", "--turns", "2", "--seeds", "1", "--store", filepath.Join(dir, "c.db"))
	if code != 1 || !strings.Contains(out, "llm") ||
		!strings.Contains(errOut, "6 of 6 turns of the llm planner measured nothing:\n  6× ") ||
		!strings.Contains(errOut, "every turn of llm was invalid") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	documented(t, "campaign run", 1)
}

// broken is a benchmark whose grader always fails.
type broken struct{}

func (broken) Name() string { return "broken" }

func (broken) Items(string) ([]eval.Item, error) {
	return []eval.Item{{ID: "b1", Goal: "What is 1 + 1?"}, {ID: "b2", Goal: "What is 2 + 2?"}}, nil
}

func (broken) Grade(context.Context, eval.Item, string) (*eval.Grade, error) {
	return nil, errors.New("the grader needs octave-cli, which is not installed")
}

// TestAllErroredEval: an eval whose every trial errored measured nothing: exit 1, and the
// distinct reasons with their counts on stderr.
func TestAllErroredEval(t *testing.T) {
	old := suites
	suites = append(suites, suite{"broken", "a grader that always fails", "benchmarks/broken", func(string) (eval.Benchmark, error) { return broken{}, nil }})
	t.Cleanup(func() { suites = old })
	t.Chdir(t.TempDir())
	srv := llmtest.NewServer(t, llmtest.Text("2"), llmtest.Text("4"))
	for _, kv := range modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	out, errOut, code := execute(t, "eval", "broken", "--model", "openai:gpt-test", "--mode", "direct", "--dataset", ".")
	if code != 1 || !strings.Contains(errOut, "2 of 2 trials errored:\n  2× ") || !strings.Contains(errOut, "octave-cli, which is not installed") ||
		!strings.Contains(errOut, "every trial errored") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	documented(t, "eval engdesign", 1)
}

// TestRunStatsOnError: run --stats prints what the run spent even when it stops on an error.
func TestRunStatsOnError(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewServer(t, llmtest.Fail(400, "this model does not exist"))
	env := append(modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test"), "XDG_DATA_HOME="+dir)
	out, errOut, code := labmateEnv(t, env, dir, "", "run", "--mode", "direct", "--no-memory", "--stats", "-m", "openai:gpt-test",
		"--data", filepath.Join(dir, "data"), "what is 6 times 7?")
	if code != 1 || !strings.Contains(out, "MODULE") || !strings.Contains(out, "wall time") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestClearErrors: each names the value and what was expected.
func TestClearErrors(t *testing.T) {
	dir := t.TempDir()
	mem := filepath.Join(dir, "m.db")
	script := write(t, dir, "run.sh", "echo submitted as a script\n")
	os.Chmod(script, 0o644)
	write(t, dir, "fit.py", "#!/usr/bin/env python3\nprint(1)\n")
	data := filepath.Join(dir, "data")
	for _, tc := range []struct {
		args []string
		code int
		want string // on stderr
	}{
		{[]string{"memory", "--store", mem, "add", "-n", "user", "ode45 diverges on stiff problems"}, 0, ""},
		{[]string{"memory", "--store", mem, "freeze", "usr"}, 2, `no namespace "usr" (the namespaces: user)`},
		{[]string{"memory", "--store", mem, "sync", filepath.Join(dir, "nosuch")}, 2, "the folder " + filepath.Join(dir, "nosuch") + " does not exist"},
		{[]string{"memory", "--store", mem, "sync", script}, 2, script + " is a file, not a folder"},
		{[]string{"job", "submit", "--data", data, "--wait", "run.sh"}, 0, "run.sh is a file, not a command: it runs as the job's bash script"},
		{[]string{"job", "submit", "--data", data, "fit.py"}, 2, "fit.py starts with #!python3, and a job's script runs in bash: give the interpreter, e.g. labmate job submit -- python3 fit.py"},
		{[]string{"job", "submit", "--data", data, "run.sh", "--fast"}, 2, "run.sh is a file here, not a command: give labmate job submit -- sh run.sh --fast"},
		{[]string{"job", "submit", "--data", data, "nosuchprogram"}, 2, `"nosuchprogram" is no command on PATH and no file here`},
		{[]string{"exec", "--server", "http://" + closedPort(t), "--token", "t", write(t, dir, "x.py", "print(1)\n")}, 2, "nothing listens at http://"},
	} {
		start := time.Now()
		out, errOut, code := labmate(t, dir, "", tc.args...)
		if tc.args[0] == "exec" && time.Since(start) > 10*time.Second {
			t.Errorf("exec --server of a closed port took %v to fail", time.Since(start))
		}
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("labmate %q: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "nosuch")); err == nil {
		t.Errorf("sync created the folder: %s", b)
	}
}

// TestFirstLineCutsOnARune: a long reason is cut on a character's boundary; cut inside a UTF-8
// sequence (an Å at byte 300), it printed half a character.
func TestFirstLineCutsOnARune(t *testing.T) {
	long := strings.Repeat("a", 299) + "Å and more\nsecond line"
	if got, want := firstLine(long), strings.Repeat("a", 299)+"…"; got != want || !utf8.ValidString(got) {
		t.Errorf("firstLine = %q, want %q", got, want)
	}
	if got := firstLine("  short reason\nmore"); got != "short reason" {
		t.Errorf("firstLine = %q, want the first line", got)
	}
}
