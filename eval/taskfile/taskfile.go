// Package taskfile is a benchmark a user writes: tasks in a JSON file, each with its goal and
// the answer that is right, so that labmate eval (and the memory rounds) run on one's own
// problems.
//
//	{"tasks": [
//	  {"id": "decay", "goal": "…; give y(1.5)", "kernel": "python", "answer": 0.2231, "rel_tol": 0.01},
//	  {"id": "solver", "group": "octave", "goal": "Which Octave solver suits stiff ODEs?", "answer": "ode15s"}
//	]}
//
// (a bare list of tasks works too). A numeric answer is right when the answer's last
// \boxed{…}, else the last number it writes, is within rel_tol of it (|a−b| ≤ rel_tol·max(|a|,|b|),
// default 0.05, SciBench's tolerance). A text answer is right when the last \boxed{…}, else
// the answer's last line, equals it, ignoring case, spaces and surrounding punctuation. Goals
// should say how to answer (e.g. "end with \boxed{value}").
package taskfile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/labmate/labmate/eval"
)

// Task is one task of the file.
type Task struct {
	ID     string          `json:"id"`
	Group  string          `json:"group,omitempty"`
	Goal   string          `json:"goal"`
	Kernel string          `json:"kernel,omitempty"` // python (default) or octave
	Answer json.RawMessage `json:"answer"`           // a number or a string; never shown to the agent
	RelTol *float64        `json:"rel_tol,omitempty"`
}

// Benchmark is a task file as an eval.Benchmark.
type Benchmark struct {
	path  string
	tasks []*Task
	byID  map[string]*Task
}

var _ eval.Benchmark = (*Benchmark)(nil)

// New reads the task file at path; every problem is an error naming the file, the task and
// the field.
func New(path string) (*Benchmark, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("taskfile: %w", err)
	}
	var doc struct {
		Tasks []*Task `json:"tasks"`
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		err = json.Unmarshal(data, &doc.Tasks)
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		err = dec.Decode(&doc)
	}
	if err != nil {
		return nil, fmt.Errorf("taskfile: %s: %w", path, err)
	}
	if len(doc.Tasks) == 0 {
		return nil, fmt.Errorf("taskfile: %s has no tasks", path)
	}
	b := &Benchmark{path: path, byID: map[string]*Task{}}
	for i, t := range doc.Tasks {
		where := fmt.Sprintf("%s: task %d", path, i+1)
		if t.ID != "" {
			where += fmt.Sprintf(" (%s)", t.ID)
		}
		switch {
		case t.ID == "":
			return nil, fmt.Errorf("taskfile: %s: no id", where)
		case b.byID[t.ID] != nil:
			return nil, fmt.Errorf("taskfile: %s: the id is used twice", where)
		case strings.TrimSpace(t.Goal) == "":
			return nil, fmt.Errorf("taskfile: %s: no goal", where)
		case t.Kernel != "" && t.Kernel != "python" && t.Kernel != "octave":
			return nil, fmt.Errorf("taskfile: %s: kernel %q (python or octave)", where, t.Kernel)
		case t.RelTol != nil && !(*t.RelTol >= 0 && *t.RelTol < 1):
			return nil, fmt.Errorf("taskfile: %s: rel_tol %v (from 0 to below 1)", where, *t.RelTol)
		}
		if _, _, err := t.expected(); err != nil {
			return nil, fmt.Errorf("taskfile: %s: answer: %w", where, err)
		}
		if t.Kernel == "" {
			t.Kernel = "python"
		}
		b.tasks = append(b.tasks, t)
		b.byID[t.ID] = t
	}
	return b, nil
}

// expected is the task's answer: a number (isNum) or a text.
func (t *Task) expected() (num float64, text string, err error) {
	var v any
	if err := json.Unmarshal(t.Answer, &v); err != nil || v == nil {
		return 0, "", fmt.Errorf("want a number or a string, got %s", orMissing(t.Answer))
	}
	switch v := v.(type) {
	case float64:
		return v, "", nil
	case string:
		if strings.TrimSpace(v) == "" {
			return 0, "", fmt.Errorf("an empty string")
		}
		return math.NaN(), v, nil
	}
	return 0, "", fmt.Errorf("want a number or a string, got %s", t.Answer)
}

func orMissing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return string(raw)
}

// Name implements eval.Benchmark.
func (b *Benchmark) Name() string { return "tasks" }

// Items implements eval.Benchmark: the one set is every task, in the file's order.
func (b *Benchmark) Items(set string) ([]eval.Item, error) {
	if set != "" && set != "all" {
		return nil, fmt.Errorf("taskfile: unknown set %q (a task file has one set, all)", set)
	}
	items := make([]eval.Item, len(b.tasks))
	for i, t := range b.tasks {
		items[i] = eval.Item{ID: t.ID, Group: t.Group, Goal: t.Goal, Kernel: t.Kernel}
	}
	return items, nil
}

var lastNumber = regexp.MustCompile(`[-+−]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?`)

// Grade implements eval.Benchmark.
func (b *Benchmark) Grade(_ context.Context, it eval.Item, answer string) (*eval.Grade, error) {
	t := b.byID[it.ID]
	if t == nil {
		return nil, fmt.Errorf("taskfile: %s has no task %q", b.path, it.ID)
	}
	num, text, _ := t.expected()
	got, boxed := lastBoxed(answer)
	if text != "" {
		if !boxed {
			lines := strings.Split(strings.TrimSpace(answer), "\n")
			got = lines[len(lines)-1]
		}
		ok := normal(got) == normal(text)
		return &eval.Grade{Score: score(ok), Passed: ok, Details: map[string]any{"answer": strings.TrimSpace(got), "expected": text}}, nil
	}
	if !boxed {
		all := lastNumber.FindAllString(answer, -1)
		if len(all) == 0 {
			return &eval.Grade{Details: map[string]any{"error": "the answer has no number", "expected": num}}, nil
		}
		got = all[len(all)-1]
	}
	v, err := strconv.ParseFloat(strings.NewReplacer(",", "", "−", "-", " ", "").Replace(strings.TrimSpace(got)), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return &eval.Grade{Details: map[string]any{"error": fmt.Sprintf("the answer %q is not a number", got), "expected": num}}, nil
	}
	tol := 0.05
	if t.RelTol != nil {
		tol = *t.RelTol
	}
	ok := math.Abs(v-num) <= tol*math.Max(math.Abs(v), math.Abs(num))
	return &eval.Grade{Score: score(ok), Passed: ok, Details: map[string]any{"answer": v, "expected": num, "rel_tol": tol}}, nil
}

func score(ok bool) float64 {
	if ok {
		return 100
	}
	return 0
}

// lastBoxed is what the answer's last \boxed{…} holds (braces balanced), when it has one.
func lastBoxed(answer string) (string, bool) {
	i := strings.LastIndex(answer, `\boxed{`)
	if i < 0 {
		return "", false
	}
	open := i + len(`\boxed{`)
	depth := 1
	for j := open; j < len(answer); j++ {
		switch answer[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return answer[open:j], true
			}
		}
	}
	return "", false
}

// normal is a text answer for comparison: lower case, inner spaces collapsed, surrounding
// spaces, quotes and punctuation gone.
func normal(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.Trim(s, " \t.,;:!?\"'`*()[]")), " "))
}
