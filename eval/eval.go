// Package eval runs the benchmarks of the seed papers against any model: a Benchmark is a set of
// items (tasks as the agent sees them) and a grader for an answer to each. Sub-packages hold
// the benchmarks (scibench, engdesign, rounds, campaign, materials).
//
// Run is the harness every Benchmark shares: K trials per item, each a fresh agent run (agent,
// codeact or direct mode, with the ablations of the agent mode) graded by the benchmark, and
// each appended to the result folder's trials.jsonl as it ends, in one synced write. A rerun on
// the same folder reads it and runs only the trials left, so an eval stopped by Ctrl-C, a kill,
// its provider or its token budget continues where it stopped. The Summary — per group and
// overall, mean score, pass rate, pass@k, stability over the trials, the run's counts, tokens
// per module — is computed from trials.jsonl alone: a resumed eval's is an uninterrupted one's.
// Report puts several result folders side by side.
package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Item is one task of a benchmark as the agent is given it. It never holds the answer or how
// the answer is graded.
type Item struct {
	// ID is unique within the benchmark, e.g. "atkins/1.1" or "XG_13".
	ID string `json:"id"`
	// Group is what results are summarised by besides overall: a textbook, a domain.
	Group string `json:"group,omitempty"`
	// Goal is the task given to the agent: the benchmark's prompt, exactly.
	Goal string `json:"goal"`
	// Kernel is the default kernel for the agent's code: "python" or "octave".
	Kernel string `json:"kernel"`
}

// Grade is the grade of one answer.
type Grade struct {
	Score  float64 `json:"score"` // 0–100
	Passed bool    `json:"passed"`
	// Details say what each check found, by check name (values JSON-encodable), and, for an
	// answer that could not be read, why under "error".
	Details map[string]any `json:"details,omitempty"`
}

// Benchmark is a set of items and how to grade an answer to each.
type Benchmark interface {
	// Name is the benchmark's name on the command line and in results ("scibench").
	Name() string
	// Items returns the items of a set ("" is the benchmark's default set).
	Items(set string) ([]Item, error)
	// Grade grades answer, the agent's final answer to it, as text. An answer that is wrong or
	// cannot be read is a Grade (score 0 with the reason in Details), not an error: an error
	// means the grader itself could not run.
	Grade(ctx context.Context, it Item, answer string) (*Grade, error)
}

// WorkspaceBenchmark is a Benchmark whose trials need their run's workspace: to set it up
// before the agent's code runs (a bench its protocols run on) and to grade what the run left
// there. Run uses it when the benchmark implements it: the workspace is that of the trial's
// first kernel, prepared as soon as that kernel has started, and "" for a trial that starts
// none (GradeIn then grades without one).
type WorkspaceBenchmark interface {
	Benchmark
	// Prepare sets up workspace for a trial of it; release is called once the trial is graded.
	Prepare(ctx context.Context, it Item, workspace string) (release func(), err error)
	// GradeIn grades as Grade does, with the trial's workspace.
	GradeIn(ctx context.Context, it Item, answer, workspace string) (*Grade, error)
}

// Find finds the shared folder rel (such as "benchmarks/scibench") in $LABMATE_SHARED when set,
// else in a "shared" directory beside the working directory or one of its parents, else
// beside the executable or one of its parents.
func Find(rel string) (string, error) {
	if d := os.Getenv("LABMATE_SHARED"); d != "" {
		p := filepath.Join(d, rel)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("eval: $LABMATE_SHARED=%s has no %s: %w", d, rel, err)
		}
		return p, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			p := filepath.Join(dir, "shared", rel)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("eval: shared/%s not found above the working directory or the executable; set $LABMATE_SHARED to the folder that holds it", rel)
}
