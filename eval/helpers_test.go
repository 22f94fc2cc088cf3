package eval_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
)

// quiz is an in-memory benchmark: item qN asks for N * 7 and passes with exactly that number.
// An answer "grader, break" makes its grader fail.
type quiz struct{ items []eval.Item }

func newQuiz(n int) *quiz {
	q := &quiz{}
	for i := 1; i <= n; i++ {
		g := "odd"
		if i%2 == 0 {
			g = "even"
		}
		q.items = append(q.items, eval.Item{ID: fmt.Sprintf("q%d", i), Group: g, Goal: fmt.Sprintf("What is %d * 7?", i), Kernel: "python"})
	}
	return q
}

func (q *quiz) Name() string { return "quiz" }

func (q *quiz) Items(set string) ([]eval.Item, error) {
	if set != "" {
		return nil, fmt.Errorf("quiz: unknown set %q", set)
	}
	return q.items, nil
}

func (q *quiz) Grade(ctx context.Context, it eval.Item, answer string) (*eval.Grade, error) {
	if answer == "grader, break" {
		return nil, errors.New("the grader's interpreter crashed")
	}
	var n int
	fmt.Sscanf(it.ID, "q%d", &n)
	want := fmt.Sprint(7 * n)
	if strings.TrimSpace(answer) == want {
		return &eval.Grade{Score: 100, Passed: true, Details: map[string]any{"want": want}}, nil
	}
	return &eval.Grade{Details: map[string]any{"want": want, "got": answer}}, nil
}

// right is the right answer to a quiz goal ("What is N * 7?").
func right(goal string) string {
	var n int
	fmt.Sscanf(goal, "What is %d * 7?", &n)
	return fmt.Sprint(7 * n)
}

// oracle is a scripted model over HTTP with turns answers, each the text answer(goal, i) for
// the i-th call (0-based) about that goal: in direct mode, a goal's i-th call is its trial i
// when its trials run in order.
type oracle struct {
	srv *llmtest.Server
	mu  sync.Mutex
	n   map[string]int
}

func newOracle(t *testing.T, turns int, answer func(goal string, i int) llmtest.Turn) *oracle {
	o := &oracle{srv: llmtest.NewServer(t), n: map[string]int{}}
	o.add(turns, answer)
	return o
}

// add scripts turns more calls.
func (o *oracle) add(turns int, answer func(goal string, i int) llmtest.Turn) {
	for range turns {
		o.srv.Add(llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			goal := c.Request.Messages[0].Content
			o.mu.Lock()
			i := o.n[goal]
			o.n[goal]++
			o.mu.Unlock()
			return answer(goal, i)
		}})
	}
}

func (o *oracle) model() llm.Model {
	return openai.New("quizzer", &openai.Options{Provider: "fake", BaseURL: o.srv.OpenAIBaseURL()})
}

func (o *oracle) calls() int { return len(o.srv.Calls()) }

// mixed answers the quiz differently per item and trial: q1 always right, q2 right at its
// first trial only, q3 always wrong, q4 right from its second trial on, q5's first answer
// breaks the grader.
func mixed(goal string, i int) llmtest.Turn {
	r := right(goal)
	switch r {
	case "14":
		if i > 0 {
			r = "15"
		}
	case "21":
		r = "I do not know"
	case "28":
		if i == 0 {
			r = "27"
		}
	case "35":
		if i == 0 {
			r = "grader, break"
		}
	}
	return llmtest.Text(r)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameSummaries fails t unless the summary files of two result folders are equal.
func sameSummaries(t *testing.T, a, b string) {
	t.Helper()
	for _, f := range []string{"summary.md", "summary.csv", "tokens.csv"} {
		if x, y := readFile(t, filepath.Join(a, f)), readFile(t, filepath.Join(b, f)); x != y {
			t.Errorf("%s differs:\n%s\n---- vs ----\n%s", f, x, y)
		}
	}
}
