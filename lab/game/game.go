// Package game plays the optimization game of Coscientist on fully mapped datasets: a planner
// chooses conditions in a dataset group served as a lookup lab, for a budget of turns, scored
// by normalized advantage and NMA. It builds the planners by name (random, bayes and
// bayes-onehot over package optimize, llm through a factory), plays and summarizes campaigns,
// reads and plots reference curves, and sets up the campaigns a server runs on request.
package game

import (
	"context"
	"fmt"
	"maps"
	"os"
	"sync"
	"time"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/dataset"
)

// Game is one dataset played as the optimization game.
type Game struct {
	Table  *dataset.Table
	Store  lab.Store // records the campaigns; nil: not recorded
	Priors lab.Store // where a prior of memory reads earlier campaigns
	LLM    LLMPlanners
	// Bench, when set, maps the table's reaction onto the bench twin (lab/bench), and every
	// experiment is run as a protocol on a plate there (Reaction.Instrument) rather than
	// looked up: the table's groups must be the reaction's reactants, its variables some of
	// the reaction's components, the others of one level each.
	Bench        *bench.Reaction
	BenchOptions *bench.InstrumentOptions
	// Hold, when set, holds each campaign while it is played, by its id (runner.Host.Hold):
	// the context it returns is the campaign's, cancelled when another process interrupts it
	// through the log its Store writes (the campaign's stream). Play then fails with the
	// context's cause. release is called when the campaign ends.
	Hold func(ctx context.Context, session, id string) (hctx context.Context, release func())
}

// Result is one finished campaign.
type Result struct {
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

// Play runs one campaign of planner on group g. With prior set, the planner is given what
// Priors holds about the other groups, and the result is labelled PLANNER+memory.
func (gm *Game) Play(ctx context.Context, g *dataset.Group, planner string, seed int64, budget int, prior bool) (*Result, error) {
	var obs []lab.Observation
	label := planner
	if prior && planner != "random" {
		var err error
		obs, err = lab.Prior(ctx, gm.Priors, gm.Table.Name, gm.Table.Objective, g.Key)
		if err != nil {
			return nil, err
		}
		label += "+memory"
	}
	var desc [][][]float64
	if planner == "bayes" {
		desc = gm.Table.Descriptors(g.Key) // the other groups' data only
	}
	t0 := time.Now()
	p, err := NewPlanner(planner, g.Space(), seed, obs, desc, gm.LLM)
	if err != nil {
		return nil, err
	}
	setup := time.Since(t0)
	c := &lab.Campaign{ID: NewCampaignID(), Space: gm.Table.Name, Objective: gm.Table.Objective, Group: g.Key,
		Planner: planner, Seed: seed, Budget: budget, Bench: gm.Bench != nil}
	if prior && planner != "random" {
		c.Prior = "memory"
	}
	if gm.Hold != nil {
		var release func()
		ctx, release = gm.Hold(ctx, c.ID, c.ID)
		defer release()
	}
	r := &Result{Planner: label, Group: g.Key, Seed: seed, Prior: len(obs), Scale: g.Scale, Setup: setup}
	seen := map[string]bool{}
	var inst lab.Instrument = g
	if gm.Bench != nil {
		if inst, err = onBench(gm.Bench, g, gm.BenchOptions); err != nil {
			return nil, err
		}
	}
	for st, err := range lab.Run(ctx, inst, p, c, &lab.Options{Store: gm.Store}) {
		if err != nil {
			if ctx.Err() != nil && context.Cause(ctx) != ctx.Err() { // what stopped it, rather than how it broke off
				err = context.Cause(ctx)
			}
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

func NewCampaignID() string {
	idMu.Lock()
	defer idMu.Unlock()
	idN++
	return fmt.Sprintf("c%s-%d-%d", time.Now().UTC().Format("20060102T150405.000000"), os.Getpid(), idN)
}

// benchGroup is a dataset group played on the bench: the group's space, each experiment a
// protocol on the bench instrument with the components the space leaves out at their one
// level.
type benchGroup struct {
	space *lab.Space
	inst  *bench.Instrument
	fixed lab.Conditions
}

func onBench(rx *bench.Reaction, g *dataset.Group, o *bench.InstrumentOptions) (*benchGroup, error) {
	inst, err := rx.Instrument(g.Key, o)
	if err != nil {
		return nil, err
	}
	b := &benchGroup{space: g.Space(), inst: inst, fixed: lab.Conditions{}}
	own, known := map[string]bool{}, map[string]bool{}
	for _, v := range inst.Space().Vars {
		known[v.Name] = true
	}
	for _, v := range b.space.Vars {
		if !known[v.Name] {
			return nil, fmt.Errorf("game: on the bench, %s is no component of reaction %s", v.Name, rx.Name)
		}
		own[v.Name] = true
	}
	for _, v := range inst.Space().Vars {
		switch {
		case own[v.Name]:
		case len(v.Levels) == 1:
			b.fixed[v.Name] = v.Levels[0]
		default:
			return nil, fmt.Errorf("game: on the bench, %s has %d levels, and the table does not choose one: make it a variable", v.Name, len(v.Levels))
		}
	}
	return b, nil
}

func (b *benchGroup) Space() *lab.Space { return b.space }

func (b *benchGroup) Run(ctx context.Context, c lab.Conditions) (lab.Measurement, error) {
	full := maps.Clone(c)
	maps.Copy(full, b.fixed)
	return b.inst.Run(ctx, full)
}
