package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

// sums is a benchmark of its own for the CLI: item sN asks for N + N.
type sums struct{ n int }

func (s sums) Name() string { return "sums" }

func (s sums) Items(set string) ([]eval.Item, error) {
	var items []eval.Item
	for i := 1; i <= s.n; i++ {
		items = append(items, eval.Item{ID: fmt.Sprintf("s%d", i), Goal: fmt.Sprintf("What is %d + %d?", i, i), Kernel: "python"})
	}
	return items, nil
}

func (s sums) Grade(ctx context.Context, it eval.Item, answer string) (*eval.Grade, error) {
	var n int
	fmt.Sscanf(it.ID, "s%d", &n)
	if strings.TrimSpace(answer) == fmt.Sprint(2*n) {
		return &eval.Grade{Score: 100, Passed: true}, nil
	}
	return &eval.Grade{}, nil
}

// execute runs labmate in this process (a suite of the test's own registered) and returns
// stdout, stderr and the exit status.
func execute(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	var ex exitError
	switch {
	case errors.As(err, &ex):
		return out.String(), errb.String(), ex.code
	case err != nil:
		return out.String(), errb.String() + err.Error(), 2
	}
	return out.String(), errb.String(), 0
}

// labmate eval NAME through the shared flags: a budget stops it (exit 3) in its default result
// folder, a rerun there with a larger budget finishes it; in agent mode a trial runs in a
// workspace of its run, with the eval's memory, checkpointed in the folder's labmate.db.
func TestEvalSuite(t *testing.T) {
	old := suites
	suites = append(suites, suite{"sums", "sums of a number with itself", "benchmarks/sums", func(string) (eval.Benchmark, error) { return sums{3}, nil }})
	t.Cleanup(func() { suites = old })
	t.Chdir(t.TempDir())
	srv := llmtest.NewServer(t)
	for _, kv := range modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	answer := func(int) {
		srv.Add(llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			var a, b int
			fmt.Sscanf(c.Request.Messages[0].Content, "What is %d + %d?", &a, &b)
			return llmtest.Turn{Text: fmt.Sprint(a + b), Usage: llm.Usage{InputTokens: 90, OutputTokens: 10}}
		}})
	}
	for i := range 4 {
		answer(i)
	}
	args := []string{"eval", "sums", "--model", "openai:gpt-test", "--mode", "direct", "--dataset", ".", "--k", "2"}
	out, errOut, code := execute(t, append(args, "--budget-tokens", "350")...)
	folder := filepath.Join("labmate-eval", "sums", "openai_gpt-test", "direct")
	if code != 3 || !strings.Contains(out, "4 of 6 trials") || !strings.Contains(errOut, "stopped at the token budget") || !strings.Contains(errOut, "s1 trial 0: passed, score 100, 100 tokens") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	answer(4)
	answer(5)
	out, errOut, code = execute(t, append(args, "--budget-tokens", "1000", "--json")...)
	if code != 0 || !strings.Contains(out, `"pass_rate": 1,`) || !strings.Contains(errOut, "4 of 6 trials are done; 2 to run") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if trials, _, err := eval.ReadTrials(folder); err != nil || len(trials) != 6 {
		t.Errorf("%s: %d trials, %v", folder, len(trials), err)
	}

	srv.Add(agenttest.Plan("add", "add the numbers and print the sum", "the sum is printed"), agenttest.RunCode("print(1 + 1)"),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "2 is printed", "summary": "1 + 1 = 2"}), agenttest.FinalAnswer("2"))
	out, errOut, code = execute(t, "eval", "sums", "--model", "openai:gpt-test", "--dataset", ".", "--ids", "s1", "--out", "agent")
	if code != 0 || !strings.Contains(out, "mode agent; 1 of 1 trials") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	trials, _, err := eval.ReadTrials("agent")
	if err != nil || len(trials) != 1 || !trials[0].Passed || trials[0].Operations != 1 {
		t.Fatalf("trials %+v, %v", trials, err)
	}
	for _, p := range []string{"labmate.db", "memory.db", filepath.Join("workspaces", "run-"+trials[0].RunID)} {
		if _, err := os.Stat(filepath.Join("agent", p)); err != nil {
			t.Error(err)
		}
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d scripted turns left", srv.Remaining())
	}
}
