package taskfile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/eval/taskfile"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tasks.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGrade(t *testing.T) {
	b, err := taskfile.New(write(t, `{"tasks": [
		{"id": "decay", "goal": "y(1.5)? End with \\boxed{value}.", "answer": 0.2231, "rel_tol": 0.01},
		{"id": "big", "group": "g", "goal": "N?", "kernel": "octave", "answer": -1.5e6},
		{"id": "solver", "goal": "Which solver?", "answer": "ode15s"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	items, err := b.Items("")
	if err != nil || len(items) != 3 || items[1].Kernel != "octave" || items[0].Kernel != "python" || items[1].Group != "g" {
		t.Fatalf("items %+v, %v", items, err)
	}
	for _, it := range items {
		if strings.Contains(it.Goal, "0.2231") || strings.Contains(it.Goal, "ode15s") {
			t.Errorf("%s: the goal shows the answer", it.ID)
		}
	}
	for _, tc := range []struct {
		id, answer string
		pass       bool
	}{
		{"decay", `so y = 0.2 at first, then \boxed{0.2235}`, true},
		{"decay", `\boxed{0.2260}`, false}, // 1.3% off, beyond 1%
		{"decay", "y(1.5) is about 0.22309", true},
		{"decay", "I could not compute it", false},
		{"big", `\boxed{−1,500,000}`, true},
		{"big", "it is -1.6e6", false},
		{"solver", "Stiff problems need an implicit method.\nODE15s.", true},
		{"solver", `\boxed{ode45}`, false},
		{"solver", "ode15s or ode45", false},
	} {
		g, err := b.Grade(context.Background(), eval.Item{ID: tc.id}, tc.answer)
		if err != nil || g.Passed != tc.pass || (g.Score == 100) != tc.pass {
			t.Errorf("%s %q: %+v, %v; want passed %t", tc.id, tc.answer, g, err, tc.pass)
		}
	}
}

func TestBadFiles(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"tasks": []}`, "has no tasks"},
		{`{"taks": [{"id": "a"}]}`, `unknown field "taks"`},
		{`[{"goal": "g", "answer": 1}]`, "task 1: no id"},
		{`[{"id": "a", "goal": "g", "answer": 1}, {"id": "a", "goal": "g", "answer": 2}]`, "task 2 (a): the id is used twice"},
		{`[{"id": "a", "answer": 1}]`, "task 1 (a): no goal"},
		{`[{"id": "a", "goal": "g"}]`, "task 1 (a): answer: want a number or a string, got nothing"},
		{`[{"id": "a", "goal": "g", "answer": [1]}]`, "task 1 (a): answer: want a number or a string, got [1]"},
		{`[{"id": "a", "goal": "g", "answer": 1, "kernel": "julia"}]`, `kernel "julia"`},
		{`[{"id": "a", "goal": "g", "answer": 1, "rel_tol": 2}]`, "rel_tol 2"},
		{`{"tasks": [`, "unexpected EOF"},
	} {
		p := write(t, tc.body)
		if _, err := taskfile.New(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v; want the file and %q", tc.body, err, tc.want)
		}
	}
}
