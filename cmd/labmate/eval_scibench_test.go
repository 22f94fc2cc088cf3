package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/eval/scibench"
	"github.com/labmate/labmate/llm/llmtest"
)

// sciBench is SciBench from shared/ and the items of a set.
func sciBench(t *testing.T, set string) (string, *scibench.Benchmark, []eval.Item) {
	t.Helper()
	dir, err := eval.Find("benchmarks/scibench")
	if err != nil {
		t.Fatal(err)
	}
	b, err := scibench.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	items, err := b.Items(set)
	if err != nil {
		t.Fatal(err)
	}
	return dir, b, items
}

// TestEvalSciBench: through the real CLI and a scripted model over HTTP, a model that answers
// every SciBench problem with its reference scores 100%, one off by 6% scores 0%, and one
// right on every other problem exactly 50%, per textbook as overall.
func TestEvalSciBench(t *testing.T) {
	dir, b, items := sciBench(t, "full")
	refs := make([]float64, len(items))
	for i, it := range items {
		var err error
		if refs[i], err = b.Reference(it.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		right func(i int) bool
		score float64
	}{
		{"oracle", func(int) bool { return true }, 100},
		{"off-by-6%", func(int) bool { return false }, 0},
		{"every-other", func(i int) bool { return i%2 == 0 }, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			var calls atomic.Int64
			for range items {
				srv.Add(llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
					calls.Add(1)
					var prompt strings.Builder
					for _, m := range c.Request.Messages {
						prompt.WriteString(m.Content)
					}
					for i, it := range items {
						if strings.Contains(prompt.String(), it.Goal) {
							v := refs[i]
							switch {
							case tc.right(i):
							case v == 0:
								v = 1 // off, for a reference of 0
							default:
								v *= 1.06
							}
							return llmtest.Text(`Working it through… The answer is therefore \boxed{` + strconv.FormatFloat(v, 'g', -1, 64) + `}`)
						}
					}
					t.Errorf("call %d names no SciBench problem", c.N)
					return llmtest.Text("?")
				}})
			}
			env := modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test")
			out := filepath.Join(t.TempDir(), "out")
			start := time.Now()
			stdout, errOut, code := labmateEnv(t, env, t.TempDir(), "", "eval", "scibench", "--dataset", dir, "--set", "full", "--model", "openai:llmtest",
				"--mode", "direct", "--parallel", "4", "--out", out, "--json")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			var sum eval.Summary
			if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if int(calls.Load()) != len(items) || sum.All.Trials != len(items) || sum.All.Score != tc.score || sum.All.Errors != 0 {
				t.Errorf("%d calls, %d trials, score %v, %d errors; want %d, %d, %v, 0", calls.Load(), sum.All.Trials, sum.All.Score, sum.All.Errors, len(items), len(items), tc.score)
			}
			if len(sum.Groups) != len(scibench.Textbooks) {
				t.Errorf("%d groups, want the %d textbooks", len(sum.Groups), len(scibench.Textbooks))
			}
			for _, g := range sum.Groups {
				if tc.score != 50 && g.Score != tc.score {
					t.Errorf("%s: score %v, want %v", g.Group, g.Score, tc.score)
				}
				if math.Abs(g.Score-50) > 100.0/float64(g.Items) && tc.score == 50 {
					t.Errorf("%s: score %v for every other problem right", g.Group, g.Score)
				}
			}
			t.Log(fmt.Sprintf("%s: %d trials in %v", tc.name, sum.All.Trials, time.Since(start).Round(time.Millisecond)))
		})
	}
}

// TestEvalTasks: labmate eval tasks runs the README's example task file; without --data it
// says what it needs.
func TestEvalTasks(t *testing.T) {
	file, err := filepath.Abs("../../examples/eval/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t)
	for range 2 {
		srv.Add(llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if strings.Contains(c.Request.Messages[len(c.Request.Messages)-1].Content, "stiff") {
				return llmtest.Text("An implicit, variable-order method:\node15s")
			}
			return llmtest.Text(`y(1.5) = exp(-1.5) = \boxed{0.22313}`)
		}})
	}
	env := modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test")
	stdout, errOut, code := labmateEnv(t, env, t.TempDir(), "", "eval", "tasks", "--dataset", file, "--model", "openai:llmtest", "--mode", "direct", "--json")
	var sum eval.Summary
	if code != 0 || json.Unmarshal([]byte(stdout), &sum) != nil || sum.All.Trials != 2 || sum.All.Score != 100 {
		t.Errorf("exit %d, summary %+v\n%s", code, sum.All, errOut)
	}
	if _, errOut, code := labmateEnv(t, env, t.TempDir(), "", "eval", "tasks", "--model", "openai:llmtest"); code != 2 || !strings.Contains(errOut, "eval tasks: give the task file with --dataset FILE") {
		t.Errorf("without --data: exit %d, %s", code, errOut)
	}
}
