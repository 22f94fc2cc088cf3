package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/llm/providers"
)

func newEvalRoundsCmd() *cobra.Command {
	var (
		f        evalFlags
		bench    string
		transfer []string
	)
	cmd := &cobra.Command{
		Use:   "rounds",
		Short: "Memory rounds on any benchmark: R1 cold, R2 and R3 with memory, and the transfer matrix between models",
		Long: `eval rounds runs --suite (engdesign, scibench, …) three times per model in agent mode, as the
memory-centric lifelong agent's rounds: R1 cold, R2 and R3 with what the earlier rounds taught
the model's memory. Every model learns in a namespace of its own (its name in lowercase) of one
memory store, OUT/memory.db unless --memory-store. Each round is an eval in OUT/<model>/R1, R2,
R3 (trials.jsonl, summary.md …), so rerunning the command resumes it.

  labmate eval rounds --suite scibench --model openai:gpt-4.1,ollama:qwen3:8b --transfer openai:gpt-4.1,ollama:qwen3:8b

--transfer FROM freezes FROM's namespace after its R3 and runs every other model with that
memory alone, read-only (what it learns goes to a namespace of its own), in
OUT/<model>/from-<FROM>. With two models A and B transferring both ways this is the 2×2
transfer matrix: rows the memory (from A, from B), columns the model evaluated, the diagonal
each model's own R3.

Printed (--json: as JSON) and written as OUT/rounds.md and rounds.csv: per round the mean
score, pass rate, tokens and prompt tokens per trial, the prompt tokens the memory adds and
the percentage points of pass rate it gains against the model's R1 (a transfer round: against
its own R3), and the points gained per 1,000 added tokens. --budget-tokens caps each round.
OUT defaults to labmate-eval/BENCH/rounds.

` + evalExit,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEvalRounds(cmd, &f, bench, transfer) },
	}
	f.add(cmd)
	cmd.Flags().StringVar(&bench, "suite", "", "the benchmark: "+strings.Join(suiteNames(), ", "))
	alias(cmd.Flags(), "bench", "", "suite")
	cmd.Flags().StringSliceVar(&transfer, "transfer", nil, "evaluate every other model with the frozen memory of these models (of --model)")
	cmd.Flag("model").Usage = "the models, comma-separated, e.g. openai:gpt-4.1,ollama:qwen3:8b (default $LABMATE_MODEL)"
	return cmd
}

func suiteNames() []string {
	var names []string
	for _, s := range suites {
		names = append(names, s.name)
	}
	return names
}

func runEvalRounds(cmd *cobra.Command, f *evalFlags, bench string, transfer []string) error {
	ctx, stop := interruptible(cmd)
	defer stop()
	stderr := cmd.ErrOrStderr()
	if f.mode != string(agent.ModeAgent) || f.noMemory {
		return errors.New("eval rounds measure memory: they run in agent mode, with memory (no --mode, no --no-memory)")
	}
	i := slices.IndexFunc(suites, func(s suite) bool { return s.name == bench })
	if i < 0 {
		return fmt.Errorf("--suite %q: choose one of %s", bench, strings.Join(suiteNames(), ", "))
	}
	s := suites[i]
	b, err := s.load(f.data)
	if err != nil {
		return err
	}
	specs := strings.Split(f.model, ",")
	o := &eval.RoundsOptions{Out: f.out, Base: f.options(stderr)}
	for _, spec := range specs {
		m, err := providers.NewModel(ctx, strings.TrimSpace(spec))
		if err != nil {
			return err
		}
		o.Models = append(o.Models, eval.RoundsModel{Name: m.Name(), Model: m})
	}
	for _, from := range transfer {
		j := slices.IndexFunc(o.Models, func(m eval.RoundsModel) bool { return m.Name == from })
		if j < 0 {
			j = slices.Index(specs, from)
		}
		if j < 0 {
			return fmt.Errorf("--transfer %q: not one of --model (%s)", from, f.model)
		}
		o.Transfer = append(o.Transfer, o.Models[j].Name)
	}
	if o.Out == "" {
		o.Out = filepath.Join("labmate-eval", s.name, "rounds")
	}
	path := f.memoryStore
	if path == "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return fmt.Errorf("eval rounds: %w", err)
		}
		path = filepath.Join(o.Out, "memory.db")
	}
	ms, err := (&memoryFlags{store: path}).open(ctx)
	if err != nil {
		return err
	}
	defer ms.Close()
	o.Memory = ms
	sb, err := f.sf.open()
	if err != nil {
		return err
	}
	// Each round's folder is a data directory, as an eval's: its runs and their workspaces.
	o.Prepare = func(_ context.Context, ro *eval.Options) (func(), error) {
		runs, runLog, closeRuns, err := evalRuns(ro.Out)
		if err != nil {
			return nil, err
		}
		ro.Store, ro.RunLog = runs, runLog
		ro.StartKernel = kernelsIn(ro.Out, sb)
		return closeRuns, nil
	}
	var ran int
	reasons := map[string]int{} // of the trials that errored, this time
	o.Base.OnTrial = func(t *eval.Trial) {
		ran++
		verdict := fmt.Sprintf("passed %v", t.Passed)
		if t.Error != "" {
			reasons[firstLine(t.Error)]++
			verdict = "error: " + firstLine(t.Error)
		}
		fmt.Fprintf(stderr, "labmate eval rounds: %s %s trial %d: %s, score %.0f, %d tokens\n", t.Model, t.Task, t.Trial, verdict, t.Score, t.Tokens)
	}
	r, err := eval.RunRounds(ctx, b, o)
	if r == nil {
		return err
	}
	if e := writeResult(cmd.OutOrStdout(), f.asJSON, r); e != nil {
		return e
	}
	fmt.Fprintf(stderr, "labmate eval rounds: results in %s (rounds.md, rounds.csv; a folder per model and round)\n", o.Out)
	errored := 0
	for _, n := range reasons {
		errored += n
	}
	switch {
	case err == nil && ran > 0 && errored == ran:
		fmt.Fprintf(stderr, "labmate eval rounds: every one of the %d trials errored, so it measured nothing:\n", ran)
		writeReasons(stderr, reasons, 0, "")
		return exitError{1}
	case err == nil:
		return nil
	case errors.Is(err, eval.ErrRoundStopped):
		fmt.Fprintf(stderr, "labmate eval rounds: %v\n", err)
		return exitError{3}
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "labmate eval rounds: %v\n", err)
		return exitError{130}
	}
	fmt.Fprintf(stderr, "labmate eval rounds: %v\n", err)
	return exitError{1}
}
