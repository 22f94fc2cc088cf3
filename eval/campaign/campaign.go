// Package campaign is the campaign benchmark: the optimization game of Coscientist on every
// Suzuki substrate pair and every Buchwald–Hartwig aryl halide, played by random, bayes-onehot,
// bayes, bayes with a memory prior and, given a model, the llm planner, beside the reference
// curves of GPT-4 and exact random.
package campaign

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/internal/progress"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
	labsqlite "github.com/labmate/labmate/lab/sqlite"
)

// Dataset is one dataset of the campaign benchmark.
type Dataset struct {
	Name      string // as in the reference curves file
	File      string
	Vars      []string
	Groups    []string
	Drop      map[string][]string
	GPT4      []string // reference methods to print beside ours
	RandomRef string
}

// Datasets are the benchmark's: the Suzuki and Buchwald–Hartwig games of Coscientist.
var Datasets = []Dataset{
	{
		Name: "suzuki_perera2018", File: "suzuki_perera2018.csv",
		Vars: []string{"ligand", "reagent", "solvent"}, Groups: []string{"reactant_1", "reactant_2"},
		GPT4:      []string{"coscientist_log_gpt-4_no_prior", "coscientist_log_gpt-4_prior_10_random_rows"},
		RandomRef: "random_uniform_without_replacement_exact",
	},
	{
		Name: "buchwald_hartwig_game_space", File: "buchwald_hartwig_ahneman2018_with_controls.csv",
		Vars: []string{"ligand", "additive", "base"}, Groups: []string{"aryl_halide"},
		Drop:      map[string][]string{"aryl_halide": {"None"}},
		GPT4:      []string{"coscientist_log_gpt-4_no_prior"},
		RandomRef: "random_uniform_without_replacement_exact",
	},
}

// FindReactions finds shared/data/reactions (eval.Find).
func FindReactions() (string, error) { return eval.Find("data/reactions") }

// Options tune Run.
type Options struct {
	// Dir is the reactions data folder (default: FindReactions).
	Dir string
	// Seeds are the campaigns per group and planner (seeds 1…N); Budget the turns of each.
	Seeds, Budget int
	// Plot, when set, is a folder to draw each dataset's NMA curves into.
	Plot string
	// LLM, when set, builds the llm planner (Coscientist's protocol through a model), played
	// after the others and recorded nowhere: it adds a row.
	LLM game.LLMPlanners
	// Log gets the progress bars and the names of the plots drawn.
	Log io.Writer
}

// Run plays every dataset's groups with the four planners (and llm, given Options.LLM) and
// returns their summaries, each dataset's followed by its reference curves (GPT-4, exact random).
func Run(ctx context.Context, o *Options) ([]*game.Summary, error) {
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = FindReactions(); err != nil {
			return nil, err
		}
	}
	refs, err := game.ReadReferences(filepath.Join(dir, "optimization_game_reference_curves.csv"))
	if err != nil {
		return nil, err
	}
	if o.Plot != "" {
		if err := os.MkdirAll(o.Plot, 0o755); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "labmate-bench-campaign-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var all []*game.Summary
	for _, ds := range Datasets {
		t, err := dataset.Open(filepath.Join(dir, ds.File), &dataset.Options{Objective: "yield", Vars: ds.Vars, Groups: ds.Groups, Drop: ds.Drop})
		if err != nil {
			return nil, err
		}
		planners := []string{"random", "bayes-onehot", "bayes", "bayes+memory"}
		if o.LLM != nil {
			planners = append(planners, "llm")
		}
		bar := progress.OnTerminal(o.Log, ds.Name, len(planners)*o.Seeds*len(t.Groups))
		res, err := benchDataset(ctx, t, filepath.Join(tmp, t.Name), o, bar)
		if err != nil {
			return nil, err
		}
		var ss []*game.Summary
		for _, p := range planners {
			s := game.Summarize(p, res[p], o.Budget)
			s.Dataset = ds.Name
			ss = append(ss, s)
		}
		mine := ds.references(refs)
		for _, ref := range mine {
			ss = append(ss, ref.Summary(ds.Name, o.Budget))
		}
		if o.Plot != "" {
			p := filepath.Join(o.Plot, ds.Name+".png")
			if err := game.Plot(p, ds.Name, ss[:len(planners)], mine); err != nil {
				return nil, err
			}
			fmt.Fprintf(o.Log, "plot: %s\n", p)
		}
		all = append(all, ss...)
	}
	return all, nil
}

// references are the curves of ds printed beside ours: exact random and GPT-4.
func (ds *Dataset) references(refs []*game.Reference) []*game.Reference {
	var out []*game.Reference
	for _, r := range refs {
		if r.Dataset == ds.Name && (r.Method == ds.RandomRef || slices.Contains(ds.GPT4, r.Method)) {
			out = append(out, r)
		}
	}
	return out
}

// benchDataset plays every group and seed with the planners, one worker per CPU, each seed
// with a fresh store.
func benchDataset(ctx context.Context, t *dataset.Table, dir string, o *Options, bar *progress.Bar) (map[string][]*game.Result, error) {
	seeds := o.Seeds
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	type out struct {
		seed int
		res  map[string][]*game.Result
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
				r, err := benchSeed(ctx, t, filepath.Join(dir, fmt.Sprintf("seed%d.db", seed)), int64(seed), o, bar)
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
	bySeed := make([]map[string][]*game.Result, seeds+1)
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
	res := map[string][]*game.Result{}
	for _, m := range bySeed[1:] {
		for k, v := range m {
			res[k] = append(res[k], v...)
		}
	}
	return res, nil
}

// benchSeed is the honest protocol for one seed: ordinary campaigns on every group (random and
// bayes), recorded; then every group again with the others' recorded campaigns as its prior;
// then the llm planner's campaigns, given a model, unrecorded and without a prior.
func benchSeed(ctx context.Context, t *dataset.Table, path string, seed int64, o *Options, bar *progress.Bar) (map[string][]*game.Result, error) {
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
	res := map[string][]*game.Result{}
	type phase struct {
		planner string
		record  lab.Store
		prior   bool
	}
	phases := []phase{{"random", mem, false}, {"bayes-onehot", nil, false}, {"bayes", mem, false}, {"bayes", later, true}}
	if o.LLM != nil {
		phases = append(phases, phase{"llm", nil, false})
	}
	for _, phase := range phases {
		gm := &game.Game{Table: t, Store: phase.record, Priors: mem, LLM: o.LLM}
		for _, g := range t.Groups {
			r, err := gm.Play(ctx, g, phase.planner, seed, o.Budget, phase.prior)
			if err != nil {
				return nil, fmt.Errorf("%s on %q: %w", phase.planner, g.Key, err)
			}
			res[r.Planner] = append(res[r.Planner], r)
			bar.Add()
		}
	}
	return res, nil
}
