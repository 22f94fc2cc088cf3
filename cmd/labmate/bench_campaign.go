package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	labsqlite "github.com/labmate/labmate/lab/sqlite"
)

// benchGame is one dataset of the campaign benchmark.
type benchGame struct {
	name      string // as in the reference curves file
	file      string
	vars      []string
	groups    []string
	drop      map[string][]string
	gpt4      []string // reference methods to print beside ours
	randomRef string
}

var benchGames = []benchGame{
	{
		name: "suzuki_perera2018", file: "suzuki_perera2018.csv",
		vars: []string{"ligand", "reagent", "solvent"}, groups: []string{"reactant_1", "reactant_2"},
		gpt4:      []string{"coscientist_log_gpt-4_no_prior", "coscientist_log_gpt-4_prior_10_random_rows"},
		randomRef: "random_uniform_without_replacement_exact",
	},
	{
		name: "buchwald_hartwig_game_space", file: "buchwald_hartwig_ahneman2018_with_controls.csv",
		vars: []string{"ligand", "additive", "base"}, groups: []string{"aryl_halide"},
		drop:      map[string][]string{"aryl_halide": {"None"}},
		gpt4:      []string{"coscientist_log_gpt-4_no_prior"},
		randomRef: "random_uniform_without_replacement_exact",
	},
}

// findReactions finds shared/data/reactions above the working directory.
func findReactions() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "shared", "data", "reactions")
		if _, err := os.Stat(filepath.Join(p, "suzuki_perera2018.csv")); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no shared/data/reactions above the working directory: pass --data-dir")
		}
		dir = parent
	}
}

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Benchmarks"}
	cmd.AddCommand(newBenchCampaignCmd(), newBenchMaterialsCmd())
	return cmd
}

func newBenchCampaignCmd() *cobra.Command {
	var (
		dataDir, plotDir string
		seeds, budget    int
		asJSON           bool
	)
	cmd := &cobra.Command{
		Use:   "campaign",
		Short: "The optimization game: random, bayes and bayes with a memory prior vs GPT-4 (Coscientist)",
		Long: `bench campaign plays the Coscientist optimization game on every Suzuki substrate pair (15)
and every Buchwald–Hartwig aryl halide (15, the game space with no-additive wells), --seeds
campaigns each, --budget turns, with four planners:

  random         uniform picks without repeats
  bayes-onehot   the Gaussian-process planner on one-hot levels
  bayes          the same with level descriptors from the OTHER groups' data (never the
                 target's): levels that helped or hurt the same substrates count as similar
  bayes+memory   bayes given, leave-one-group-out, what the random and bayes campaigns of the
                 same seed recorded on the other groups (run first, into a fresh store per
                 seed): 40 measured steps per other group, never one of the target's

and prints mean ± sd NMA and normalized advantage at turns 1/5/10/20, repeats and proposal
time p50/p99, beside the reference curves of GPT-4 and of exact random.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var err error
			if dataDir == "" {
				if dataDir, err = findReactions(); err != nil {
					return err
				}
			}
			refs, err := readReferences(filepath.Join(dataDir, "optimization_game_reference_curves.csv"))
			if err != nil {
				return err
			}
			if plotDir != "" {
				if err := os.MkdirAll(plotDir, 0o755); err != nil {
					return err
				}
			}
			tmp, err := os.MkdirTemp("", "labmate-bench-campaign-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			var all []*summary
			for _, bg := range benchGames {
				t, err := dataset.Open(filepath.Join(dataDir, bg.file), &dataset.Options{Objective: "yield", Vars: bg.vars, Groups: bg.groups, Drop: bg.drop})
				if err != nil {
					return err
				}
				bar := newProgress(cmd.ErrOrStderr(), bg.name, 4*seeds*len(t.Groups), false)
				res, err := benchDataset(ctx, t, filepath.Join(tmp, t.Name), seeds, budget, bar)
				if err != nil {
					return err
				}
				var ss []*summary
				for _, p := range []string{"random", "bayes-onehot", "bayes", "bayes+memory"} {
					s := summarize(p, res[p], budget)
					s.Dataset = bg.name
					ss = append(ss, s)
				}
				for _, ref := range refs {
					if ref.Dataset == bg.name && (ref.Method == bg.randomRef || contains(bg.gpt4, ref.Method)) {
						ss = append(ss, refSummary(bg.name, ref, budget))
					}
				}
				if plotDir != "" {
					p := filepath.Join(plotDir, bg.name+".png")
					if err := plotCurves(p, bg.name, ss[:4], refsFor(refs, bg)); err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "plot: %s\n", p)
				}
				all = append(all, ss...)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"seeds": seeds, "budget": budget, "rows": all})
			}
			printBench(cmd.OutOrStdout(), all, budget)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", "", "the reactions data folder (default: shared/data/reactions above the working directory)")
	f.IntVar(&seeds, "seeds", 60, "campaigns per group and planner (seeds 1…N)")
	f.IntVar(&budget, "budget", 20, "turns per campaign")
	f.BoolVar(&asJSON, "json", false, "print the table as JSON")
	f.StringVar(&plotDir, "plot", "", "draw each dataset's NMA curves into this folder")
	return cmd
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func refsFor(refs []*reference, bg benchGame) []*reference {
	var out []*reference
	for _, r := range refs {
		if r.Dataset == bg.name && (r.Method == bg.randomRef || contains(bg.gpt4, r.Method)) {
			out = append(out, r)
		}
	}
	return out
}

func refSummary(ds string, r *reference, budget int) *summary {
	s := &summary{Planner: r.Method, Dataset: ds, NMA: map[int]lab.Summary{}, Advantage: map[int]lab.Summary{}}
	for _, t := range summaryTurns {
		if t <= budget && t <= len(r.NMA) {
			s.NMA[t] = lab.Summary{Mean: r.NMA[t-1], N: 1}
			s.Advantage[t] = lab.Summary{Mean: r.Advantage[t-1], N: 1}
		}
	}
	return s
}

// benchDataset plays every group and seed with random, bayes, and bayes with the memory prior,
// one worker per CPU, each seed with a fresh store.
func benchDataset(ctx context.Context, t *dataset.Table, dir string, seeds, budget int, bar *progress) (map[string][]*result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	type out struct {
		seed int
		res  map[string][]*result
		err  error
	}
	jobs := make(chan int)
	outs := make(chan out)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range jobs {
				r, err := benchSeed(ctx, t, filepath.Join(dir, fmt.Sprintf("seed%d.db", seed)), int64(seed), budget, bar)
				outs <- out{seed, r, err}
			}
		}()
	}
	go func() {
		for s := 1; s <= seeds; s++ {
			jobs <- s
		}
		close(jobs)
		wg.Wait()
		close(outs)
	}()
	bySeed := make([]map[string][]*result, seeds+1)
	var firstErr error
	for o := range outs {
		if o.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s, seed %d: %w", t.Name, o.seed, o.err)
		}
		bySeed[o.seed] = o.res
	}
	if firstErr != nil {
		return nil, firstErr
	}
	res := map[string][]*result{}
	for _, m := range bySeed[1:] {
		for k, v := range m {
			res[k] = append(res[k], v...)
		}
	}
	return res, nil
}

// benchSeed is the honest protocol for one seed: ordinary campaigns on every group (random and
// bayes), recorded; then every group again with the others' recorded campaigns as its prior.
func benchSeed(ctx context.Context, t *dataset.Table, path string, seed int64, budget int, bar *progress) (map[string][]*result, error) {
	mem, err := labsqlite.Open(path)
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	later, err := labsqlite.Open(path + ".memory")
	if err != nil {
		return nil, err
	}
	defer later.Close()
	res := map[string][]*result{}
	for _, phase := range []struct {
		planner string
		record  lab.Store
		prior   bool
	}{{"random", mem, false}, {"bayes-onehot", nil, false}, {"bayes", mem, false}, {"bayes", later, true}} {
		gm := &game{table: t, store: phase.record, priors: mem}
		for _, g := range t.Groups {
			r, err := gm.play(ctx, g, phase.planner, seed, budget, phase.prior)
			if err != nil {
				return nil, fmt.Errorf("%s on %q: %w", phase.planner, g.Key, err)
			}
			res[r.Planner] = append(res[r.Planner], r)
			bar.add()
		}
	}
	return res, nil
}

func printBench(w io.Writer, ss []*summary, budget int) {
	printSummaries(w, ss, budget)
}
