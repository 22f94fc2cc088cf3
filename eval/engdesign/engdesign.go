// Package engdesign is the EngDesign benchmark's open control and signal-processing subset
// (shared/benchmarks/engdesign): each task's prompt goes to the agent with its response schema,
// and a grader per task, written here in Octave (control and signal packages) or Python
// (numpy/scipy), does what the task's grading section describes, quirks included. A task's
// grading and grader_expected are never shown to the agent.
package engdesign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
)

// Task is one EngDesign task as its JSON file holds it.
type Task struct {
	ID       string          `json:"id"`
	Domain   string          `json:"domain_topic"`
	Prompt   string          `json:"prompt"`
	Schema   json.RawMessage `json:"response_schema"`
	Images   []string        `json:"images"`
	Grading  json.RawMessage `json:"grading"`         // never shown to the agent
	Expected json.RawMessage `json:"grader_expected"` // never shown to the agent
}

// Load reads every task file (*.json) of dir.
func Load(dir string) ([]*Task, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("engdesign: no task files (*.json) in %s", dir)
	}
	var tasks []*Task
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("engdesign: %w", err)
		}
		t := new(Task)
		if err := json.Unmarshal(b, t); err != nil {
			return nil, fmt.Errorf("engdesign: %s: %w", f, err)
		}
		if t.ID == "" || t.Prompt == "" || len(t.Schema) == 0 {
			return nil, fmt.Errorf("engdesign: %s: a task needs id, prompt and response_schema", f)
		}
		tasks = append(tasks, t)
	}
	slices.SortFunc(tasks, func(a, b *Task) int { return strings.Compare(a.ID, b.ID) })
	return tasks, nil
}

// Goal is what the agent is given: the prompt and the response schema, as EngDesign's harness
// gives them (its pydantic Response_structure: reasoning and config).
func (t *Task) Goal() string {
	return t.Prompt + "\n\n## Response format\nEnd your answer with one JSON object in this schema (types as in Python; config holds the design):\n" +
		string(t.Schema)
}

// Answer reads the design out of an answer: the last JSON object in it that has a "config"
// member (fenced or not). It returns the config member.
func Answer(answer string) (json.RawMessage, error) {
	for i := strings.LastIndexByte(answer, '{'); i >= 0; i = strings.LastIndexByte(answer[:i], '{') {
		var v struct {
			Config json.RawMessage `json:"config"`
		}
		dec := json.NewDecoder(strings.NewReader(answer[i:]))
		if err := dec.Decode(&v); err == nil && len(v.Config) > 0 && string(v.Config) != "null" {
			return v.Config, nil
		}
		if i == 0 {
			break
		}
	}
	return nil, errors.New(`the answer has no JSON object with a "config" member`)
}

// runTimeout bounds one grader script.
const runTimeout = 2 * time.Minute

// Octave runs script in octave-cli with the control and signal packages loaded and the variable
// in set to in (decoded from JSON by jsondecode), and decodes into out the JSON of the variable
// out that the script sets (encoded by jsonencode). The answer's values reach Octave as data,
// never as code.
func Octave(ctx context.Context, script string, in, out any) error {
	prelude := "pkg load control signal; in = jsondecode(fileread(getenv('LABMATE_IN')));\n"
	epilogue := "\nfid = fopen(getenv('LABMATE_OUT'), 'w'); fputs(fid, jsonencode(out)); fclose(fid);\n"
	return runScript(ctx, "octave", []string{octave.Binary, "--no-gui", "--norc", "--quiet", "--eval", prelude + script + epilogue}, in, out)
}

// Python runs script in Python 3 (numpy, scipy) with the variable inp set to in (from JSON), and
// decodes into out the JSON of the variable out that the script sets.
func Python(ctx context.Context, script string, in, out any) error {
	prelude := "import json, os\ninp = json.load(open(os.environ['LABMATE_IN']))\n"
	epilogue := "\njson.dump(out, open(os.environ['LABMATE_OUT'], 'w'))\n"
	return runScript(ctx, "python", []string{python.Binary, "-I", "-c", prelude + script + epilogue}, in, out)
}

func runScript(ctx context.Context, lang string, argv []string, in, out any) error {
	dir, err := os.MkdirTemp("", "labmate-grader-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("engdesign: encoding the grader's input: %w", err)
	}
	inPath, outPath := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(inPath, b, 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LABMATE_IN="+inPath, "LABMATE_OUT="+outPath, "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("engdesign: the %s grader failed: %w: %s", lang, err, strings.TrimSpace(tail(stderr.String(), 2000)))
	}
	res, err := os.ReadFile(outPath)
	if err != nil {
		return fmt.Errorf("engdesign: the %s grader wrote no result: %w: %s", lang, err, strings.TrimSpace(tail(stderr.String(), 2000)))
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("engdesign: the %s grader's result %.200q: %w", lang, res, err)
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Grader grades one task's design (the answer's config member).
type Grader func(ctx context.Context, config json.RawMessage) (*eval.Grade, error)

// graders are the tasks' graders by task id; each task's file registers its own.
var graders = map[string]Grader{}

// Benchmark is the EngDesign subset as an eval.Benchmark.
type Benchmark struct {
	tasks map[string]*Task
	order []string
}

var _ eval.Benchmark = (*Benchmark)(nil)

// New loads the tasks of dir; every task needs a grader.
func New(dir string) (*Benchmark, error) {
	tasks, err := Load(dir)
	if err != nil {
		return nil, err
	}
	b := &Benchmark{tasks: map[string]*Task{}}
	for _, t := range tasks {
		if graders[t.ID] == nil {
			return nil, fmt.Errorf("engdesign: task %s has no grader", t.ID)
		}
		b.tasks[t.ID] = t
		b.order = append(b.order, t.ID)
	}
	return b, nil
}

// Name implements eval.Benchmark.
func (b *Benchmark) Name() string { return "engdesign" }

// Items implements eval.Benchmark: the one set is every task.
func (b *Benchmark) Items(set string) ([]eval.Item, error) {
	if set != "" && set != "open" {
		return nil, fmt.Errorf("engdesign: unknown set %q (the one set is open)", set)
	}
	items := make([]eval.Item, 0, len(b.order))
	for _, id := range b.order {
		t := b.tasks[id]
		items = append(items, eval.Item{ID: id, Group: t.Domain, Goal: t.Goal(), Kernel: "octave"})
	}
	return items, nil
}

// Grade implements eval.Benchmark.
func (b *Benchmark) Grade(ctx context.Context, it eval.Item, answer string) (*eval.Grade, error) {
	g := graders[it.ID]
	if g == nil || b.tasks[it.ID] == nil {
		return nil, fmt.Errorf("engdesign: unknown task %q", it.ID)
	}
	cfg, err := Answer(answer)
	if err != nil {
		return &eval.Grade{Details: map[string]any{"error": err.Error()}}, nil
	}
	return g(ctx, cfg)
}
