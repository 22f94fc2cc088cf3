package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/internal/tty"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/llm/providers"
)

// evalFlags are the flags every benchmark of labmate eval shares.
type evalFlags struct {
	model, mode, set, data, out, memoryStore string
	ids                                      []string
	k, limit, parallel                       int
	maxTurns, maxRepairs, maxReplans         int
	budgetTokens, trialBudget                int64
	trialTimeout, cellTimeout                time.Duration
	asJSON, noPerception, noReflect          bool
	noMemory                                 bool
	sf                                       sandboxFlags
}

func (f *evalFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.model, "model", "m", "", "the model, e.g. openai:gpt-4.1, anthropic:claude-sonnet-4-5, ollama:qwen3:8b (default $LABMATE_MODEL)")
	fl.StringVar(&f.mode, "mode", string(agent.ModeAgent), "agent (plan, code, perceive, reflect), codeact (one ReAct conversation, 5 turns) or direct (one call, no tools)")
	fl.IntVar(&f.k, "k", 1, "trials per task (pass@k, stability)")
	fl.IntVar(&f.limit, "limit", 0, "run only the first N tasks (0: all)")
	fl.StringSliceVar(&f.ids, "ids", nil, "run only these tasks, e.g. --ids atkins/1.1,atkins/1.3")
	fl.IntVar(&f.parallel, "parallel", 1, "trials at once")
	fl.Int64Var(&f.budgetTokens, "budget-tokens", 0, "most tokens of the whole eval, earlier runs in OUT included: no trial starts once spent (0: none)")
	fl.StringVarP(&f.out, "out", "o", "", "the result folder (default labmate-eval/NAME/MODEL/MODE); rerun with the same one to continue")
	fl.BoolVar(&f.asJSON, "json", false, "print the summary as JSON")
	fl.StringVar(&f.set, "set", "", "the benchmark's set (default its default set)")
	fl.StringVar(&f.data, "dataset", "", "the benchmark's data: its folder, or a task file (default the one under shared/, or $LABMATE_SHARED)")
	alias(fl, "data", "", "dataset")
	fl.BoolVar(&f.noPerception, "no-perception", false, "ablation: cells run blind, without perception's verdicts or the Hot-Fix")
	fl.BoolVar(&f.noReflect, "no-reflect", false, "ablation: every step that ran is accepted without the reflect module")
	fl.BoolVar(&f.noMemory, "no-memory", false, "ablation: no memory recall or learning")
	fl.StringVar(&f.memoryStore, "memory-store", "", "the memory the agent recalls and learns in across the trials (default OUT/memory.db)")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "most model calls per trial (default 40; 5 in codeact mode)")
	fl.IntVar(&f.maxRepairs, "max-repairs", 0, "repairs of a step per trial (default 3)")
	fl.IntVar(&f.maxReplans, "max-replans", 0, "re-plans per trial (default 2)")
	fl.Int64Var(&f.trialBudget, "trial-budget", 0, "most tokens per trial (0: none)")
	fl.DurationVar(&f.trialTimeout, "trial-timeout", 0, "wall-time limit per trial, e.g. 10m (0: none)")
	fl.DurationVar(&f.cellTimeout, "cell-timeout", 0, "default wall-time limit of one cell (default 5m)")
	f.sf.add(cmd)
}

// notInName are the characters of a model's name that make no folder name.
var notInName = regexp.MustCompile(`[^A-Za-z0-9._+-]+`)

// run runs benchmark s as the flags say, prints the summary and exits as evalExit says.
func (f *evalFlags) run(cmd *cobra.Command, s suite) error {
	ctx, stop := interruptible(cmd)
	defer stop()
	stderr := cmd.ErrOrStderr()
	mode := agent.Mode(f.mode)
	switch mode {
	case agent.ModeAgent, agent.ModeDirect, agent.ModeCodeAct:
	default:
		return fmt.Errorf("--mode %q: choose agent, codeact or direct", f.mode)
	}
	b, err := s.load(f.data)
	if err != nil {
		return err
	}
	model, err := providers.NewModel(ctx, f.model)
	if err != nil {
		return err
	}
	o := f.options(stderr)
	o.Model, o.Mode, o.Out = model, mode, f.out
	if o.Out == "" {
		o.Out = filepath.Join("labmate-eval", s.name, notInName.ReplaceAllString(model.Name(), "_"), o.Variant())
	}
	// The result folder is a data directory: the runs (labmate run show ID --data OUT: their
	// checkpoints and their log), their workspaces and the memory live in it.
	runs, runLog, closeRuns, err := evalRuns(o.Out)
	if err != nil {
		return err
	}
	defer closeRuns()
	o.Store, o.RunLog = runs, runLog
	if mode != agent.ModeDirect {
		sb, err := f.sf.open()
		if err != nil {
			return err
		}
		o.StartKernel = kernelsIn(o.Out, sb)
	}
	if mode == agent.ModeAgent && !f.noMemory {
		path := f.memoryStore
		if path == "" {
			path = filepath.Join(o.Out, "memory.db")
		}
		ms, err := (&memoryFlags{store: path}).open(ctx)
		if err != nil {
			return err
		}
		defer ms.Close()
		o.Memory = learn.New(ms, &learn.Options{Model: model.Name()})
	}
	if tty.IsTerminal(stderr) {
		o.Progress = stderr
		o.OnTrial = func(t *eval.Trial) { // above the bar, which redraws on the next trial
			if t.Error != "" {
				fmt.Fprintf(stderr, "\r\033[Klabmate eval: %s trial %d: error: %s\n", t.Task, t.Trial, firstLine(t.Error))
			}
		}
	} else {
		o.OnTrial = func(t *eval.Trial) {
			verdict := "failed"
			switch {
			case t.Error != "":
				verdict = "error: " + t.Error
			case t.Passed:
				verdict = "passed"
			}
			fmt.Fprintf(stderr, "labmate eval: %s trial %d: %s, score %.0f, %d tokens, %.1f s\n", t.Task, t.Trial, verdict, t.Score, t.Tokens, t.WallS)
		}
	}
	sum, err := eval.Run(ctx, b, &o)
	if sum == nil {
		return err
	}
	if e := writeResult(cmd.OutOrStdout(), f.asJSON, sum); e != nil {
		return e
	}
	fmt.Fprintf(stderr, "labmate eval: results in %s (trials.jsonl, summary.md, summary.csv, tokens.csv, score.png, tokens.png)\n", o.Out)
	allErrored := trialErrors(stderr, o.Out, sum)
	switch {
	case err == nil && allErrored:
		fmt.Fprintf(stderr, "labmate eval: every trial errored, so the eval measured nothing (the reasons are above)\n")
		return exitError{1}
	case err == nil && sum.Stopped == "":
		return nil
	case err == nil:
		fmt.Fprintf(stderr, "labmate eval: stopped %s\n", sum.Stopped)
		return exitError{3}
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "labmate eval: %s\n", sum.Stopped)
		return exitError{130}
	}
	fmt.Fprintf(stderr, "labmate eval: %v\n", err)
	return exitError{1}
}

// options are the eval's options the flags set, shared by a benchmark's eval and the rounds.
func (f *evalFlags) options(log io.Writer) eval.Options {
	return eval.Options{NoPerception: f.noPerception, NoReflect: f.noReflect, NoMemory: f.noMemory,
		MaxTurns: f.maxTurns, MaxRepairs: f.maxRepairs, MaxReplans: f.maxReplans, TrialBudget: f.trialBudget,
		TrialTimeout: f.trialTimeout, CellTimeout: f.cellTimeout, K: f.k, Set: f.set, IDs: nilIfEmpty(f.ids), Limit: f.limit,
		Parallel: f.parallel, BudgetTokens: f.budgetTokens, Log: log}
}

// kernelsIn starts the kernels of an eval's agent runs in sb, each run's in its workspace in
// the result folder out (OUT/workspaces/run-ID).
func kernelsIn(out string, sb kernel.Sandbox) func(ctx context.Context, runID, name string) (kernel.Kernel, error) {
	return func(ctx context.Context, runID, name string) (kernel.Kernel, error) {
		ws, err := runWorkspace(out, runID)
		if err != nil {
			return nil, err
		}
		return startKernel(ctx, name, sb, ws)
	}
}

// load opens the suite's benchmark from data (--dataset), else from its folder under shared/.
func (s suite) load(data string) (eval.Benchmark, error) {
	switch {
	case data != "":
	case s.data == "":
		return nil, fmt.Errorf("eval %s: give the task file with --dataset FILE", s.name)
	default:
		var err error
		if data, err = eval.Find(s.data); err != nil {
			return nil, fmt.Errorf("%w (or give --dataset DIR)", err)
		}
	}
	return s.open(data)
}

// writeResult prints an eval's result as indented JSON or as its table.
func writeResult(w io.Writer, asJSON bool, v interface{ WriteText(io.Writer) error }) error {
	if !asJSON {
		return v.WriteText(w)
	}
	return writeJSON(w, v)
}
