package game

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/labmate/labmate/lab"
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

// Planners are the planners NewPlanner builds.
var Planners = []string{"random", "bayes", "bayes-onehot", "llm"}

// LLMPlanners builds an llm planner for one campaign on space, shown the prior rows when given.
type LLMPlanners func(space *lab.Space, prior []lab.Observation) (lab.Planner, error)

// NewPlanner builds the named planner for one campaign on space; prior holds other groups'
// measurements (bayes uses them; llm shows them as prior rows). desc, when set, describes the
// levels by the other groups' data (dataset.Table.Descriptors). llm builds the llm planner; nil:
// there is none.
func NewPlanner(name string, space *lab.Space, seed int64, prior []lab.Observation, desc [][][]float64, llm LLMPlanners) (lab.Planner, error) {
	sp := optSpace(space)
	switch name {
	case "random":
		r, err := random.New(sp, uint64(seed))
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
		b, err := bayes.New(sp, &bayes.Options{Seed: uint64(seed), Prior: po, Descriptors: desc})
		if err != nil {
			return nil, err
		}
		return &optPlanner{space: space, opt: b}, nil
	case "llm":
		if llm == nil {
			return nil, errors.New("the llm planner needs a model")
		}
		return llm(space, prior)
	}
	return nil, KnownPlanner(name)
}

// KnownPlanner says so when name is not one of Planners.
func KnownPlanner(name string) error {
	if !slices.Contains(Planners, name) {
		return fmt.Errorf("unknown planner %q (choose %s)", name, strings.Join(Planners, ", "))
	}
	return nil
}

// CheckBudget says what is wrong with playing planner name for budget turns: the bayes
// planners model at most bayes.MaxMeasurements.
func CheckBudget(name string, budget int) error {
	if strings.HasPrefix(name, "bayes") && budget > bayes.MaxMeasurements {
		return fmt.Errorf("budget %d: the %s planner models at most %d measurements", budget, name, bayes.MaxMeasurements)
	}
	return nil
}
