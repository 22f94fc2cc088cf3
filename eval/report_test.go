package eval_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

// A report puts the rows of two folders side by side — a model in one; another model in two
// modes in the other — each row summarised as its eval's summary.
func TestReport(t *testing.T) {
	q := newQuiz(4)
	alpha, beta := t.TempDir(), t.TempDir()
	run := func(dir, model string, mode agent.Mode, answer func(string, int) llmtest.Turn) *eval.Summary {
		o := newOracle(t, 4, answer)
		s, err := eval.Run(context.Background(), q, &eval.Options{Model: o.model(), ModelName: model, Mode: mode, Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sa := run(alpha, "alpha", agent.ModeDirect, mixed)
	sb := run(beta, "beta", agent.ModeDirect, func(goal string, _ int) llmtest.Turn { return llmtest.Text(right(goal)) })
	sc := run(beta, "beta", agent.ModeCodeAct, func(goal string, _ int) llmtest.Turn { return llmtest.Text("no idea") })
	r, err := eval.NewReport([]string{alpha, beta}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(r.Rows))
	}
	for i, want := range []*eval.Summary{sa, sc, sb} { // a folder's rows by model, then mode
		got := *r.Rows[i].Summary
		got.Expected = want.Expected
		if d := cmp.Diff(want, &got); d != "" {
			t.Errorf("row %d (-the eval's summary +the report's):\n%s", i, d)
		}
	}
	out := t.TempDir()
	if err := r.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(out, "report.md"))
	for _, w := range []string{
		"| folder | benchmark | model | mode | k | items | trials | errors | score | pass | stability |",
		"| " + alpha + " | quiz | alpha | direct | 1 | 4 | 4 | 0 | 50.0 | 50.0% |",
		"| " + beta + " | quiz | beta | codeact | 1 | 4 | 4 | 0 | 0.0 | 0.0% |",
		"| " + beta + " | quiz | beta | direct | 1 | 4 | 4 | 0 | 100.0 | 100.0% |",
		"| " + beta + " | quiz | beta | codeact | 1 | codeact | 1.00 |",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("report.md lacks %q:\n%s", w, md)
		}
	}
	if csv := readFile(t, filepath.Join(out, "report.csv")); strings.Count(csv, "\n") != 4 || !strings.Contains(csv, beta+",quiz,beta,direct,1,4,4,0,100.0000,1.0000,1.0000,1.0000,1.0000,") {
		t.Errorf("report.csv:\n%s", csv)
	}
	for _, f := range []string{"report-score.png", "report-tokens.png", "report-tokens.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "tokens per module") {
		t.Errorf("text: %v\n%s", err, text.String())
	}
	if _, err := eval.NewReport([]string{t.TempDir()}, nil); err == nil || !strings.Contains(err.Error(), "holds no trials") {
		t.Errorf("an empty folder: %v", err)
	}
}

func ExampleSummarize() {
	trial := func(task, group string, n int, passed bool, tokens int64) *eval.Trial {
		t := &eval.Trial{Benchmark: "quiz", Task: task, Group: group, Mode: "direct", Model: "ollama:qwen3:8b", Trial: n, Passed: passed, Tokens: tokens,
			Modules: []llm.ModuleUsage{{Module: "direct", Calls: 1, Usage: llm.Usage{InputTokens: tokens - 10, OutputTokens: 10}}}}
		if passed {
			t.Score = 100
		}
		return t
	}
	s := eval.Summarize([]*eval.Trial{
		trial("q1", "algebra", 0, true, 110), trial("q1", "algebra", 1, false, 130),
		trial("q2", "calculus", 0, false, 210), trial("q2", "calculus", 1, false, 190),
	})
	s.WriteText(os.Stdout)
	// Output:
	// quiz: ollama:qwen3:8b, mode direct; 4 trials, up to 2 per item
	//
	// group     items  trials  errors  score  pass   pass@2  stability    tokens  operations  hot-fixes  repairs  re-plans
	// algebra   1      2       0       50.0   50.0%  100.0%  0.0%–100.0%  120     0.00        0.00       0.00     0.00
	// calculus  1      2       0       0.0    0.0%   0.0%    0.0%–0.0%    200     0.00        0.00       0.00     0.00
	// all       2      4       0       25.0   25.0%  50.0%   0.0%–50.0%   160     0.00        0.00       0.00     0.00
	//
	// tokens per module (means per trial):
	// module  calls  input  output  share
	// direct  1.00   150    10      100.0%
}
