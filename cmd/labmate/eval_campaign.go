package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/eval/campaign"
	"github.com/labmate/labmate/lab/game"
)

func newEvalCampaignCmd() *cobra.Command {
	var (
		dataDir, plotDir, modelSpec string
		seeds, budget               int
		asJSON                      bool
	)
	cmd := &cobra.Command{
		Use:   "campaign",
		Short: "The optimization game: random, bayes, bayes with a memory prior and, with --model, llm vs GPT-4 (Coscientist)",
		Long: `eval campaign plays the Coscientist optimization game on every Suzuki substrate pair (15)
and every Buchwald–Hartwig aryl halide (15, the game space with no-additive wells), --seeds
campaigns each, --turns turns, with four planners, and a fifth given --model:

  random         uniform picks without repeats
  bayes-onehot   the Gaussian-process planner on one-hot levels
  bayes          the same with level descriptors from the OTHER groups' data (never the
                 target's): levels that helped or hurt the same substrates count as similar
  bayes+memory   bayes given, leave-one-group-out, what the random and bayes campaigns of the
                 same seed recorded on the other groups (run first, into a fresh store per
                 seed): 40 measured steps per other group, never one of the target's
  llm            with --model: Coscientist's protocol played by the model (a call per turn),
                 without a prior

and prints mean ± sd NMA and normalized advantage at turns 1/5/10/20, repeats and proposal
time p50/p99, beside the reference curves of GPT-4 and of exact random; --out draws each
dataset's mean NMA curves there. Exit status: 0 done; 1 failed, or every turn of a planner
was invalid (every answer of --model's, say); 2 could not start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := &campaign.Options{Dir: dataDir, Seeds: seeds, Budget: budget, Plot: plotDir, Log: cmd.ErrOrStderr()}
			if modelSpec != "" {
				var err error
				if o.LLM, err = llmPlanners(cmd.Context(), modelSpec, "yield"); err != nil {
					return err
				}
			}
			all, err := campaign.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), map[string]any{"seeds": seeds, "budget": budget, "rows": all}); err != nil {
					return err
				}
				return failedPlanners(cmd, all)
			}
			game.WriteSummaries(cmd.OutOrStdout(), all, budget)
			return failedPlanners(cmd, all)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "dataset", "", "the reactions data folder (default: shared/data/reactions above the working directory)")
	alias(f, "data", "", "dataset")
	f.StringVarP(&modelSpec, "model", "m", "", "add the llm planner played by this model, e.g. openai:gpt-4.1 or ollama:qwen3:8b")
	f.IntVar(&seeds, "seeds", 60, "campaigns per group and planner (seeds 1…N)")
	f.IntVar(&budget, "turns", 20, "turns per campaign (measurements)")
	alias(f, "budget", "", "turns")
	f.BoolVar(&asJSON, "json", false, "print the table as JSON")
	f.StringVarP(&plotDir, "out", "o", "", "draw each dataset's NMA curves into this folder")
	return cmd
}

// failedPlanners is an exit status 1, saying which, when every turn of a planner of all was
// invalid.
func failedPlanners(cmd *cobra.Command, all []*game.Summary) error {
	if bad := allInvalid(all); len(bad) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "labmate eval campaign: every turn of %s was invalid, so it measured nothing (labmate campaign run --planner llm prints the reasons)\n", strings.Join(bad, ", "))
		return exitError{1}
	}
	return nil
}
