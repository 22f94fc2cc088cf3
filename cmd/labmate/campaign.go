package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/internal/progress"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/campaignlog"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
	labsqlite "github.com/labmate/labmate/lab/sqlite"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner/locallog"
)

func newCampaignCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "campaign",
		Short: "Closed-loop experiment campaigns: the optimization game on a fully mapped dataset",
	}
	cmd.AddCommand(newCampaignRunCmd())
	return cmd
}

func newCampaignRunCmd() *cobra.Command {
	var (
		data, objective, priorFlag, storePath, dataDirFlag, plotPath, refPath, modelSpec, only, refDataset string
		vars, groups, planners, drop                                                                       []string
		budget, seeds                                                                                      int
		asJSON, onBench                                                                                    bool
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Play campaigns on every group of a fully mapped dataset and score them",
		Long: `campaign run serves a fully mapped CSV as a lookup lab and plays one campaign per group
(e.g. per substrate) and seed: the planner proposes conditions, the lab answers with the
measured objective, for --turns turns. Every campaign is a stream of the data directory's log
(DATA/labmate.db, --data-dir), where labmate serve shows it, and every step is recorded there.

The summary gives, per planner, the mean ± sd over groups and seeds of NMA (the normalized
best so far) and of the normalized advantage at turns 1, 5, 10 and 20, the fraction of
repeated turns, and the planner's proposal time (p50, p99).

Planners: random (uniform, no repeats); bayes (a Gaussian process whose level similarity
comes from the other groups' data in the file, never the played group's); bayes-onehot (the
same on one-hot levels); llm (the Coscientist protocol through --model).

--prior memory gives each campaign what earlier campaigns in the log (or in --store) measured on
the OTHER groups of the same dataset (leave-one-group-out); run ordinary campaigns first to fill it.

A dataset may have at most 16 MiB, lines of 64 KiB, 256 columns, 100,000 rows, 1000 levels
per variable (2000 over all the variables), 1000 groups, 16 variable and 8 group columns;
the bayes planners model at most 200 measurements (--turns).

Exit status: 0 every campaign played; 1 every turn of a planner was invalid (each answer of an
llm planner, say: the reasons are printed on stderr with their counts); 2 when they could not be: a bad flag or value, a
dataset it cannot read, a model that cannot be reached, an interrupt (Ctrl-C; or an interrupt of
one campaign from another process — the dashboard's, POST /v1/sessions/C/operations/C/interrupt
— which ends that campaign's stream interrupted while the others play on, left out of the summary).

Example:
  labmate campaign run --dataset suzuki_perera2018.csv --objective yield \
    --vars ligand,reagent,solvent --group reactant_1,reactant_2 --planner random,bayes --turns 20 --seeds 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			if data == "" || len(vars) == 0 {
				return fmt.Errorf("--dataset and --vars are required")
			}
			if priorFlag != "" && priorFlag != "memory" {
				return fmt.Errorf("--prior %q: the only prior is \"memory\"", priorFlag)
			}
			if budget <= 0 || seeds <= 0 {
				return fmt.Errorf("--turns %d, --seeds %d: both must be positive", budget, seeds)
			}
			dropMap, err := parseDrop(drop)
			if err != nil {
				return err
			}
			t, err := dataset.Open(data, &dataset.Options{Objective: objective, Vars: vars, Groups: groups, Drop: dropMap})
			if err != nil {
				return err
			}
			for _, p := range planners {
				if err := game.KnownPlanner(p); err != nil {
					return err
				}
				if err := game.CheckBudget(p, budget); err != nil {
					return fmt.Errorf("--turns %d: %s", budget, strings.TrimPrefix(err.Error(), fmt.Sprintf("budget %d: ", budget)))
				}
			}
			var refs []*game.Reference
			if refPath != "" {
				if refs, err = game.ReadReferences(refPath); err != nil {
					return err
				}
				refs = game.MatchReferences(refs, t.Name, refDataset)
			}
			// Each campaign is a stream of the data directory's log, followed live by labmate
			// serve, and what later campaigns' priors read — unless --store names a file of
			// its own, which then records them too.
			log, host, closeLog := localLog(cmd.ErrOrStderr(), dataDirFlag, "campaign")
			defer closeLog()
			recordedIn := "the data directory's log"
			if ps, ok := log.(*sqlite.Store); ok && storePath == "" { // not the in-memory stand-in
				if dir, err := dataDir(dataDirFlag); err == nil {
					importOld(ctx, dir, ps, cmd.ErrOrStderr())
					recordedIn = filepath.Join(dir, locallog.File)
				}
			}
			var st lab.Store
			if storePath != "" {
				s, err := labsqlite.Open(storePath)
				if err != nil {
					return err
				}
				defer s.Close()
				st, recordedIn = s, storePath
			}
			cl := campaignlog.New(st, log, func(group string) lab.Scale {
				g, err := t.Group(group)
				if err != nil {
					return lab.Scale{}
				}
				return g.Scale
			})
			// Each campaign is held while it plays: the dashboard's Interrupt (another process) stops it alone.
			gm := &game.Game{Table: t, Store: cl, Priors: cl, Hold: host.Hold}
			if onBench {
				spec, err := bench.SpecOf(t.Name)
				if err != nil {
					return fmt.Errorf("--bench: %w", err)
				}
				if gm.Bench, err = bench.LoadReaction(data, spec); err != nil {
					return err
				}
			}
			if slices.Contains(planners, "llm") {
				if gm.LLM, err = llmPlanners(ctx, modelSpec, objective); err != nil {
					return err
				}
			}
			gs := t.Groups
			if only != "" {
				g, err := t.Group(only)
				if err != nil {
					return err
				}
				gs = []*dataset.Group{g}
			}
			label := ""
			if priorFlag != "" {
				label = "+memory"
			}
			bar := progress.OnTerminal(cmd.ErrOrStderr(), "campaigns", len(planners)*len(gs)*seeds)
			var ss []*game.Summary
			var failed []string // planners whose every turn was invalid
			interrupted := 0    // campaigns another process interrupted: left out, the others play on
			for _, p := range planners {
				var rs []*game.Result
				for seed := 1; seed <= seeds; seed++ {
					for _, g := range gs {
						r, err := gm.Play(ctx, g, p, int64(seed), budget, priorFlag != "")
						if e := cl.End(ctx, err); e != nil {
							fmt.Fprintf(cmd.ErrOrStderr(), "labmate campaign: %v\n", e)
						}
						if errors.Is(err, context.Canceled) && ctx.Err() == nil {
							fmt.Fprintf(cmd.ErrOrStderr(), "labmate campaign: %s, group %q, seed %d: %v; left out of the summary\n", p, g.Key, seed, err)
							interrupted++
							bar.Add()
							continue
						}
						if err != nil {
							fmt.Fprintln(cmd.ErrOrStderr())
							return fmt.Errorf("%s, group %q, seed %d: %w", p, g.Key, seed, err)
						}
						rs = append(rs, r)
						bar.Add()
					}
				}
				if len(rs) == 0 {
					continue
				}
				ss = append(ss, game.Summarize(p+label, rs, budget))
				if invalidTurns(cmd.ErrOrStderr(), p+label, rs) {
					failed = append(failed, p+label)
				}
			}
			defer func() {
				if interrupted > 0 && err == nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "labmate campaign: %d campaigns were interrupted (the summary leaves them out)\n", interrupted)
					err = exitError{2}
				}
				if len(failed) > 0 && err == nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "labmate campaign: every turn of %s was invalid, so it measured nothing (the reasons are above)\n", strings.Join(failed, ", "))
					err = exitError{1}
				}
			}()
			fmt.Fprintf(cmd.ErrOrStderr(), "recorded in %s\n", recordedIn)
			if plotPath != "" {
				if err := game.Plot(plotPath, t.Name, ss, refs); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "plot: %s\n", plotPath)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"dataset": t.Name, "groups": len(gs), "seeds": seeds, "budget": budget, "planners": ss})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d groups × %d seeds, budget %d\n", t.Name, len(gs), seeds, budget)
			game.WriteSummaries(cmd.OutOrStdout(), ss, budget)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "dataset", "", "the fully mapped dataset (CSV with a header)")
	alias(f, "data", "", "dataset")
	f.StringVar(&objective, "objective", game.DefaultObjective, "the column to maximize")
	f.StringSliceVar(&vars, "vars", nil, "the condition columns the planner chooses")
	f.StringSliceVar(&groups, "group", nil, "the columns that split the data into campaigns (one per substrate)")
	f.StringSliceVar(&drop, "drop", nil, "skip rows where COLUMN=VALUE (repeatable), e.g. aryl_halide=None")
	f.StringSliceVar(&planners, "planner", []string{"bayes"}, "planners to play: random, bayes, bayes-onehot, llm (comma-separated)")
	f.StringVarP(&modelSpec, "model", "m", "", "the llm planner's model, e.g. openai:gpt-4.1 or ollama:qwen3:8b (default $LABMATE_MODEL or the config file)")
	f.IntVar(&budget, "turns", game.DefaultBudget, "turns per campaign (measurements)")
	alias(f, "budget", "", "turns")
	f.IntVar(&seeds, "seeds", 10, "campaigns per group (seeds 1..N)")
	f.StringVar(&priorFlag, "prior", "", `"memory": learn from earlier campaigns on the other groups in the store`)
	f.StringVar(&only, "only", "", "play only this group (its values joined with \" / \")")
	f.StringVar(&dataDirFlag, "data-dir", "", "the data directory DATA whose log (labmate.db) the campaigns are written to, where labmate serve shows them (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)")
	f.StringVar(&storePath, "store", "", "a campaign store of its own (a SQLite file) that records the campaigns and gives the priors (default: the data directory's log)")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	f.BoolVar(&onBench, "bench", false, "run each experiment as a protocol on the bench twin's heater-shaker plate (Suzuki, Buchwald–Hartwig)")
	f.StringVar(&plotPath, "plot", "", "draw the mean NMA curves to this PNG")
	f.StringVar(&refPath, "reference", "", "reference curves CSV to overlay on --plot")
	f.StringVar(&refDataset, "reference-dataset", "", "the reference file's dataset to overlay (default: the data file's name, else every curve)")
	return cmd
}

func parseDrop(drop []string) (map[string][]string, error) {
	m := map[string][]string{}
	for _, d := range drop {
		k, v, ok := strings.Cut(d, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--drop %q: want COLUMN=VALUE", d)
		}
		m[k] = append(m[k], v)
	}
	return m, nil
}
