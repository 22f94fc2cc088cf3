package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	labsqlite "github.com/labmate/labmate/lab/sqlite"
	"github.com/labmate/labmate/optimize"
	"github.com/labmate/labmate/optimize/bayes"
	"github.com/labmate/labmate/optimize/random"
)

// optPlanner adapts an optimize.Optimizer to a lab.Planner: every step the campaign recorded
// since the last call is told, then the optimizer is asked.
type optPlanner struct {
	space *lab.Space
	opt   optimize.Optimizer
	told  int
}

func (p *optPlanner) Next(ctx context.Context, steps []lab.Step) (*lab.Proposal, error) {
	for _, s := range steps[p.told:] {
		idx, err := p.space.Index(s.Conditions)
		if err != nil {
			continue // nothing was run; an optimizer never proposes outside the space
		}
		y := math.NaN()
		if s.OK {
			y = s.Value
		}
		if err := p.opt.Tell(idx, y); err != nil {
			return nil, err
		}
	}
	p.told = len(steps)
	x, err := p.opt.Ask(ctx)
	if errors.Is(err, optimize.ErrExhausted) {
		return nil, fmt.Errorf("%w: %w", lab.ErrExhausted, err)
	}
	if err != nil {
		return nil, err
	}
	return &lab.Proposal{Conditions: p.space.Conditions(x)}, nil
}

func optSpace(s *lab.Space) *optimize.Space {
	o := &optimize.Space{Points: s.Feasible}
	for _, v := range s.Vars {
		o.Names = append(o.Names, v.Name)
		o.Levels = append(o.Levels, v.Levels)
	}
	return o
}

// plannerNames are the planners campaign run accepts.
var plannerNames = []string{"random", "bayes", "bayes-onehot", "llm"}

// newPlanner builds the named planner for one campaign on space; prior holds other groups'
// measurements (bayes uses them; llm shows them as prior rows).
//
// desc, when set, describes the levels by the other groups' data (dataset.Table.Descriptors).
func newPlanner(name string, space *lab.Space, seed int64, prior []lab.Observation, desc [][][]float64, llmp func(*lab.Space, []lab.Observation) (lab.Planner, error)) (lab.Planner, error) {
	os := optSpace(space)
	switch name {
	case "random":
		r, err := random.New(os, uint64(seed))
		if err != nil {
			return nil, err
		}
		return &optPlanner{space: space, opt: r}, nil
	case "bayes", "bayes-onehot":
		var po []optimize.Observation
		for _, o := range prior {
			idx, err := space.Index(o.Conditions)
			if err != nil {
				continue // a level this space lacks
			}
			po = append(po, optimize.Observation{Task: o.Group, X: idx, Y: o.Value})
		}
		b, err := bayes.New(os, &bayes.Options{Seed: uint64(seed), Prior: po, Descriptors: desc})
		if err != nil {
			return nil, err
		}
		return &optPlanner{space: space, opt: b}, nil
	case "llm":
		if llmp == nil {
			return nil, fmt.Errorf("--planner llm needs --model")
		}
		return llmp(space, prior)
	}
	return nil, fmt.Errorf("unknown planner %q (choose %s)", name, strings.Join(plannerNames, ", "))
}

// game is one dataset played as the optimization game.
type game struct {
	table  *dataset.Table
	store  lab.Store // records the campaigns; nil: not recorded
	priors lab.Store // where --prior memory reads earlier campaigns
	llm    func(*lab.Space, []lab.Observation) (lab.Planner, error)
}

// result is one finished campaign.
type result struct {
	Planner string          `json:"planner"`
	Group   string          `json:"group"`
	Seed    int64           `json:"seed"`
	Prior   int             `json:"prior_rows,omitempty"`
	Steps   []lab.Step      `json:"steps"`
	Scale   lab.Scale       `json:"scale"`
	Curves  lab.Curves      `json:"curves"`
	Repeats int             `json:"repeats"`
	Invalid int             `json:"invalid"`
	Propose []time.Duration `json:"-"`
	Setup   time.Duration   `json:"-"` // building the planner (fitting the prior)
}

// play runs one campaign of planner on group g. With prior set, the planner is given what the
// store holds about the other groups.
func (gm *game) play(ctx context.Context, g *dataset.Group, planner string, seed int64, budget int, prior bool) (*result, error) {
	var obs []lab.Observation
	label := planner
	if prior && planner != "random" {
		var err error
		obs, err = lab.Prior(ctx, gm.priors, gm.table.Name, gm.table.Objective, g.Key)
		if err != nil {
			return nil, err
		}
		label += "+memory"
	}
	var desc [][][]float64
	if planner == "bayes" {
		desc = gm.table.Descriptors(g.Key) // the other groups' data only
	}
	t0 := time.Now()
	p, err := newPlanner(planner, g.Space(), seed, obs, desc, gm.llm)
	if err != nil {
		return nil, err
	}
	setup := time.Since(t0)
	c := &lab.Campaign{ID: newCampaignID(), Space: gm.table.Name, Objective: gm.table.Objective, Group: g.Key,
		Planner: planner, Seed: seed, Budget: budget}
	if prior && planner != "random" {
		c.Prior = "memory"
	}
	r := &result{Planner: label, Group: g.Key, Seed: seed, Prior: len(obs), Scale: g.Scale, Setup: setup}
	seen := map[string]bool{}
	for st, err := range lab.Run(ctx, g, p, c, &lab.Options{Store: gm.store}) {
		if err != nil {
			return nil, err
		}
		r.Steps = append(r.Steps, *st)
		r.Propose = append(r.Propose, st.Propose)
		if st.Conditions != nil {
			if seen[st.Conditions.Key()] {
				r.Repeats++
			}
			seen[st.Conditions.Key()] = true
		}
		if !st.OK {
			r.Invalid++
		}
	}
	r.Curves = lab.Score(r.Steps, g.Scale, budget)
	return r, nil
}

var idMu sync.Mutex
var idN int

func newCampaignID() string {
	idMu.Lock()
	defer idMu.Unlock()
	idN++
	return fmt.Sprintf("c%s-%d-%d", time.Now().UTC().Format("20060102T150405.000000"), os.Getpid(), idN)
}

// progress draws a one-line progress bar on w (stderr).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	done  int
	total int
	start time.Time
	quiet bool
}

func newProgress(w io.Writer, label string, total int, quiet bool) *progress {
	p := &progress{w: w, label: label, total: total, start: time.Now(), quiet: quiet}
	p.draw()
	return p
}

func (p *progress) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.total < 200 || p.done*200/p.total != (p.done-1)*200/p.total || p.done == p.total {
		p.draw() // at most 200 redraws
	}
}

func (p *progress) draw() {
	if p.quiet {
		return
	}
	const width = 30
	n := 0
	if p.total > 0 {
		n = width * p.done / p.total
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d %s", p.label, strings.Repeat("#", n), strings.Repeat(" ", width-n),
		p.done, p.total, time.Since(p.start).Round(time.Second))
	if p.done == p.total {
		fmt.Fprintln(p.w)
	}
}

// campaignStorePath is the default campaign store.
func campaignStorePath() (string, error) {
	d, err := defaultDataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "campaigns.db"), nil
}

var summaryTurns = []int{1, 5, 10, 20}

// summary is the mean and spread of NMA and normalized advantage at a few turns for one planner.
type summary struct {
	Planner   string              `json:"planner"`
	Dataset   string              `json:"dataset,omitempty"`
	Campaigns int                 `json:"campaigns"`
	NMA       map[int]lab.Summary `json:"nma"`
	Advantage map[int]lab.Summary `json:"advantage"`
	Repeats   float64             `json:"repeat_fraction"`
	Invalid   float64             `json:"invalid_fraction"`
	P50       time.Duration       `json:"propose_p50_ns"`
	P99       time.Duration       `json:"propose_p99_ns"`
	SetupP99  time.Duration       `json:"setup_p99_ns"`
	NMACurve  []lab.Summary       `json:"nma_curve"`
	AdvCurve  []lab.Summary       `json:"advantage_curve"`
}

func summarize(planner string, rs []*result, budget int) *summary {
	var nma, adv [][]float64
	var prop []time.Duration
	rep, inv, turns := 0, 0, 0
	for _, r := range rs {
		nma = append(nma, r.Curves.NMA)
		adv = append(adv, r.Curves.Advantage)
		prop = append(prop, r.Propose...)
		rep += r.Repeats
		inv += r.Invalid
		turns += len(r.Steps)
	}
	s := &summary{Planner: planner, Campaigns: len(rs), NMA: map[int]lab.Summary{}, Advantage: map[int]lab.Summary{},
		NMACurve: lab.Summarize(nma), AdvCurve: lab.Summarize(adv)}
	for _, t := range summaryTurns {
		if t <= budget && t <= len(s.NMACurve) {
			s.NMA[t], s.Advantage[t] = s.NMACurve[t-1], s.AdvCurve[t-1]
		}
	}
	if turns > 0 {
		s.Repeats, s.Invalid = float64(rep)/float64(turns), float64(inv)/float64(turns)
	}
	s.P50, s.P99 = quantile(prop, 0.5), quantile(prop, 0.99)
	var setup []time.Duration
	for _, r := range rs {
		setup = append(setup, r.Setup)
	}
	s.SetupP99 = quantile(setup, 0.99)
	return s
}

// quantile is the q-quantile (nearest rank) of d; 0 for none.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[max(0, min(len(d)-1, int(math.Ceil(q*float64(len(d))))-1))]
}

func printSummaries(w io.Writer, ss []*summary, budget int) {
	fmt.Fprintf(w, "%-28s %5s", "planner", "runs")
	for _, t := range summaryTurns {
		if t <= budget {
			fmt.Fprintf(w, "  %-13s", fmt.Sprintf("NMA@%d", t))
		}
	}
	for _, t := range summaryTurns {
		if t <= budget {
			fmt.Fprintf(w, "  %-13s", fmt.Sprintf("adv@%d", t))
		}
	}
	fmt.Fprintf(w, "  %7s  %9s  %9s  %9s\n", "repeats", "p50", "p99", "setup p99")
	for _, s := range ss {
		name := s.Planner
		if s.Dataset != "" {
			name = s.Dataset + " " + name
		}
		fmt.Fprintf(w, "%-28s %5d", name, s.Campaigns)
		for _, t := range summaryTurns {
			if t <= budget {
				fmt.Fprintf(w, "  %-13s", fmtSummary(s.NMA[t]))
			}
		}
		for _, t := range summaryTurns {
			if t <= budget {
				fmt.Fprintf(w, "  %-13s", fmtSummary(s.Advantage[t]))
			}
		}
		if s.Campaigns == 0 { // a reference curve
			fmt.Fprintf(w, "  %7s  %9s  %9s  %9s\n", "-", "-", "-", "-")
			continue
		}
		fmt.Fprintf(w, "  %6.1f%%  %9s  %9s  %9s\n", 100*s.Repeats, fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.SetupP99))
	}
}

func fmtSummary(s lab.Summary) string {
	if s.N == 0 || math.IsNaN(s.Mean) {
		return "-"
	}
	if s.N == 1 && s.SD == 0 { // a reference value
		return fmt.Sprintf("%.3f", s.Mean)
	}
	return fmt.Sprintf("%.3f ± %.3f", s.Mean, s.SD)
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < 10*time.Microsecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	default:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
}

// reference is one curve of a reference curves file.
type reference struct {
	Dataset, Method string
	NMA, Advantage  []float64 // by iteration-1; NaN where missing
}

// readReferences reads a reference curves CSV (dataset, method, iteration, …, mean_normalized_advantage, mean_nma).
func readReferences(path string) ([]*reference, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"dataset", "method", "iteration", "mean_normalized_advantage", "mean_nma"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s:1: no column %q", path, need)
		}
	}
	var out []*reference
	byKey := map[string]*reference{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		key := rec[col["dataset"]] + "\x00" + rec[col["method"]]
		ref := byKey[key]
		if ref == nil {
			ref = &reference{Dataset: rec[col["dataset"]], Method: rec[col["method"]]}
			byKey[key] = ref
			out = append(out, ref)
		}
		it, err := strconv.Atoi(rec[col["iteration"]])
		if err != nil || it < 1 {
			return nil, fmt.Errorf("%s:%d: column iteration: %q is not a positive integer", path, line, rec[col["iteration"]])
		}
		num := func(c string) (float64, error) {
			v := rec[col[c]]
			if v == "" {
				return math.NaN(), nil
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("%s:%d: column %s: %q is not a number", path, line, c, v)
			}
			return x, nil
		}
		nma, err := num("mean_nma")
		if err != nil {
			return nil, err
		}
		adv, err := num("mean_normalized_advantage")
		if err != nil {
			return nil, err
		}
		for len(ref.NMA) < it {
			ref.NMA = append(ref.NMA, math.NaN())
			ref.Advantage = append(ref.Advantage, math.NaN())
		}
		ref.NMA[it-1], ref.Advantage[it-1] = nma, adv
	}
	return out, nil
}

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
		data, objective, priorFlag, storePath, plotPath, refPath, modelSpec, only, refDataset string
		vars, groups, planners, drop                                                          []string
		budget, seeds                                                                         int
		asJSON                                                                                bool
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Play campaigns on every group of a fully mapped dataset and score them",
		Long: `campaign run serves a fully mapped CSV as a lookup lab and plays one campaign per group
(e.g. per substrate) and seed: the planner proposes conditions, the lab answers with the
measured objective, for --budget turns. Every step is recorded in the campaign store.

The summary gives, per planner, the mean ± sd over groups and seeds of NMA (the normalized
best so far) and of the normalized advantage at turns 1, 5, 10 and 20, the fraction of
repeated turns, and the planner's proposal time (p50, p99).

Planners: random (uniform, no repeats); bayes (a Gaussian process whose level similarity
comes from the other groups' data in the file, never the played group's); bayes-onehot (the
same on one-hot levels); llm (the Coscientist protocol through --model).

--prior memory gives each campaign what earlier campaigns in the store measured on the OTHER
groups of the same dataset (leave-one-group-out); run ordinary campaigns first to fill it.

A dataset may have at most 16 MiB, lines of 64 KiB, 256 columns, 100,000 rows, 1000 levels
per variable (2000 over all the variables), 1000 groups, 16 variable and 8 group columns;
the bayes planners model at most 200 measurements (--budget).

Example:
  labmate campaign run --data suzuki_perera2018.csv --objective yield \
    --vars ligand,reagent,solvent --group reactant_1,reactant_2 --planner random,bayes --seeds 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if data == "" || len(vars) == 0 {
				return fmt.Errorf("--data and --vars are required")
			}
			if priorFlag != "" && priorFlag != "memory" {
				return fmt.Errorf("--prior %q: the only prior is \"memory\"", priorFlag)
			}
			if budget <= 0 || seeds <= 0 {
				return fmt.Errorf("--budget and --seeds must be positive")
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
				if !slices.Contains(plannerNames, p) {
					return fmt.Errorf("unknown planner %q (choose %s)", p, strings.Join(plannerNames, ", "))
				}
				if strings.HasPrefix(p, "bayes") && budget > bayes.MaxMeasurements {
					return fmt.Errorf("--budget %d: the %s planner models at most %d measurements", budget, p, bayes.MaxMeasurements)
				}
			}
			var refs []*reference
			if refPath != "" {
				if refs, err = readReferences(refPath); err != nil {
					return err
				}
				refs = matchReferences(refs, t.Name, refDataset)
			}
			if storePath == "" {
				if storePath, err = campaignStorePath(); err != nil {
					return err
				}
			}
			st, err := labsqlite.Open(storePath)
			if err != nil {
				return err
			}
			defer st.Close()
			gm := &game{table: t, store: st, priors: st}
			if slices.Contains(planners, "llm") {
				if gm.llm, err = llmPlannerFactory(ctx, modelSpec, objective); err != nil {
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
			bar := newProgress(cmd.ErrOrStderr(), "campaigns", len(planners)*len(gs)*seeds, false)
			var ss []*summary
			for _, p := range planners {
				var rs []*result
				for seed := 1; seed <= seeds; seed++ {
					for _, g := range gs {
						r, err := gm.play(ctx, g, p, int64(seed), budget, priorFlag != "")
						if err != nil {
							fmt.Fprintln(cmd.ErrOrStderr())
							return fmt.Errorf("%s, group %q, seed %d: %w", p, g.Key, seed, err)
						}
						rs = append(rs, r)
						bar.add()
					}
				}
				ss = append(ss, summarize(p+label, rs, budget))
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "recorded in %s\n", storePath)
			if plotPath != "" {
				if err := plotCurves(plotPath, t.Name, ss, refs); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "plot: %s\n", plotPath)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"dataset": t.Name, "groups": len(gs), "seeds": seeds, "budget": budget, "planners": ss})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d groups × %d seeds, budget %d\n", t.Name, len(gs), seeds, budget)
			printSummaries(cmd.OutOrStdout(), ss, budget)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "the fully mapped dataset (CSV with a header)")
	f.StringVar(&objective, "objective", "yield", "the column to maximize")
	f.StringSliceVar(&vars, "vars", nil, "the condition columns the planner chooses")
	f.StringSliceVar(&groups, "group", nil, "the columns that split the data into campaigns (one per substrate)")
	f.StringSliceVar(&drop, "drop", nil, "skip rows where COLUMN=VALUE (repeatable), e.g. aryl_halide=None")
	f.StringSliceVar(&planners, "planner", []string{"bayes"}, "planners to play: random, bayes, bayes-onehot, llm (comma-separated)")
	f.StringVar(&modelSpec, "model", "", "the llm planner's model, e.g. openai:gpt-4.1 or ollama:qwen3:8b (default $LABMATE_MODEL or the config file)")
	f.IntVar(&budget, "budget", 20, "turns per campaign")
	f.IntVar(&seeds, "seeds", 10, "campaigns per group (seeds 1..N)")
	f.StringVar(&priorFlag, "prior", "", `"memory": learn from earlier campaigns on the other groups in the store`)
	f.StringVar(&only, "only", "", "play only this group (its values joined with \" / \")")
	f.StringVar(&storePath, "store", "", "campaign store (default ~/.local/share/labmate/campaigns.db)")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	f.StringVar(&plotPath, "plot", "", "draw the mean NMA curves to this PNG")
	f.StringVar(&refPath, "reference", "", "reference curves CSV to overlay on --plot")
	f.StringVar(&refDataset, "reference-dataset", "", "the reference file's dataset to overlay (default: the data file's name, else every curve)")
	return cmd
}

// matchReferences keeps the curves of dataset want (default name); all when none match.
func matchReferences(refs []*reference, name, want string) []*reference {
	if want == "" {
		want = name
	}
	var out []*reference
	for _, r := range refs {
		if r.Dataset == want {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return refs
	}
	return out
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

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
