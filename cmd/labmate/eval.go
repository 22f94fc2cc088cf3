package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/eval/benchtasks"
	"github.com/labmate/labmate/eval/engdesign"
	"github.com/labmate/labmate/eval/scibench"
	"github.com/labmate/labmate/eval/taskfile"
)

// suite is a benchmark labmate eval runs through the shared flags (evalFlags).
type suite struct {
	name, short string
	data        string // its folder under shared/ (eval.Find), unless --dataset
	open        func(dir string) (eval.Benchmark, error)
}

// suites are the benchmarks of labmate eval NAME, one line each.
var suites = []suite{
	{"engdesign", "EngDesign's open control and signal-processing tasks, graded in Octave and Python", "benchmarks/engdesign", opener(engdesign.New)},
	{"tasks", "Your own tasks from a JSON file (--dataset FILE; see the README): each goal with its right answer", "", opener(taskfile.New)},
	{"bench", "Coscientist's four bench tasks on the lab twin (colour rows, draw a shape, identify dyes, a Suzuki screen), graded on its final state", "data/reactions", opener(benchtasks.New)},
	{"scibench", "SciBench's textbook problems (the fixed 107-problem subset, or --set full), scored as upstream's equiv", "benchmarks/scibench", opener(scibench.New)},
}

// opener adapts a benchmark's constructor to suite.open (no typed nil on failure).
func opener[B eval.Benchmark](open func(string) (B, error)) func(string) (eval.Benchmark, error) {
	return func(dir string) (eval.Benchmark, error) {
		b, err := open(dir)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}

// evalExit documents the exit status of the eval commands.
const evalExit = `Exit status: 0 every trial done (the distinct reasons of trials that errored, if any, are
printed on stderr with their counts); 1 every trial errored (it measured nothing), or failed (the
model's provider, or writing the results; rerun to continue); 3 stopped at --budget-tokens (a
partial result: rerun with a larger budget to continue); 130 interrupted (rerun to continue); 2
could not start (flags, data, a result folder of another benchmark or in use by another eval).`

func newEvalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Benchmarks: run a model on a suite, resumably; compare result folders; campaigns and materials",
		Long: `labmate eval runs a benchmark against a model and keeps every trial, so that an eval can be
stopped and continued, and result folders compared:

  labmate eval engdesign --model openai:gpt-4.1 --k 3
  labmate eval engdesign --model openai:gpt-4.1 --mode codeact
  labmate eval engdesign --model openai:gpt-4.1 --no-reflect
  labmate eval report labmate-eval/engdesign/*/*

Each trial is a fresh agent run on one of the benchmark's tasks, its final answer graded by
the benchmark. It is appended to OUT/trials.jsonl as it ends (task, mode, model, trial,
score, tokens per module, wall time, operations, hot-fixes, repairs, re-plans, the run id),
so rerunning the same command (Ctrl-C, a crash, kill -9, the budget) runs the trials left and
never repeats a finished one; the summary, computed from trials.jsonl alone, is the same as
an uninterrupted run's. It is printed (--json: as JSON) and written as OUT/summary.md,
summary.csv, tokens.csv, score.png and tokens.png: per group and overall, the mean score, the
pass rate, pass@k (unbiased, over --k trials per task), the lowest and highest pass rate of
one round of trials (stability), and the means of tokens, operations, hot-fixes, repairs and
re-plans; and the tokens per module (plan, code, perceive, reflect; input, output, calls).

Modes: agent (plan, code, perceive, reflect, with memory), codeact (the same model and tools
in one ReAct conversation of 5 turns, EmbodiedAct's Table 5 baseline) and direct (one call, no
tools). Ablations of the agent mode: --no-perception, --no-reflect, --no-memory.

` + evalExit,
	}
	for _, s := range suites {
		cmd.AddCommand(newEvalSuiteCmd(s))
	}
	cmd.AddCommand(newEvalReportCmd(), newEvalCampaignCmd(), newEvalMaterialsCmd(), newEvalWorkflowsCmd(), newEvalRoundsCmd())
	return cmd
}

func newEvalSuiteCmd(s suite) *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   s.name,
		Short: s.short,
		Long: fmt.Sprintf(`eval %s runs %s against --model, --k trials per task, in OUT (--out, default
labmate-eval/%s/MODEL/MODE), resumably; the data come from --dataset, default shared/%s.
See labmate eval --help for the results.

`, s.name, s.name, s.name, s.data) + evalExit,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd, s) },
	}
	f.add(cmd)
	return cmd
}

func newEvalReportCmd() *cobra.Command {
	var (
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "report DIR...",
		Short: "Put result folders side by side: one table and one set of plots (models × modes)",
		Long: `eval report reads the trials.jsonl of each result folder and prints one table with a row per
folder, benchmark, model and mode they hold — the scores as labmate eval summarises them, then
the tokens per module. --out DIR writes report.md, report.csv, report-tokens.csv,
report-score.png (mean score by group, a bar per row) and report-tokens.png (tokens per trial
by module) there. Exit status: 0 done, 2 a folder could not be read.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			r, err := eval.NewReport(dirs, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if out != "" {
				if err := r.WriteFiles(out); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "labmate eval report: written to %s\n", out)
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			return r.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write report.md, report.csv and the plots into this folder")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
