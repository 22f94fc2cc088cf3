package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/optimize/bayes"
	"github.com/labmate/labmate/server"
)

// campaignFlags are the campaign flags of labmate serve and labmate mcp.
type campaignFlags struct {
	dataRoots []string
}

func (f *campaignFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.dataRoots, "data-root", nil,
		"a directory whose CSV files clients may name by path for campaigns (repeatable; everything under it becomes readable through campaigns); none: campaign CSVs are uploaded only")
}

// setup is the campaign setup over the flags' data roots, which must exist.
func (f *campaignFlags) setup() (func(context.Context, *server.CampaignSpec) (*server.CampaignSetup, error), error) {
	roots, err := dataset.NewRoots(f.dataRoots)
	if err != nil {
		return nil, fmt.Errorf("--data-root: %w", err)
	}
	return newCampaignSetup(roots), nil
}

// campaignSetup is the campaign setup of a server without data roots: CSVs are uploaded only.
func campaignSetup(ctx context.Context, spec *server.CampaignSpec) (*server.CampaignSetup, error) {
	return newCampaignSetup(&dataset.Roots{})(ctx, spec)
}

// notUnderRoot is the refusal of a csv path outside the data roots.
type notUnderRoot struct {
	path string
	none bool // the server has no data root
}

func (e *notUnderRoot) Error() string {
	s := fmt.Sprintf("campaign: csv path %q is not under a data root (--data-root)", e.path)
	if e.none {
		s += "; this server has none: upload the CSV (csv_data) instead"
	}
	return s
}

func (e *notUnderRoot) Unwrap() error { return dataset.ErrNotUnderRoot }

// newCampaignSetup sets campaigns up for labmate serve and labmate mcp (the dashboard's
// campaign page, the MCP campaign tools): a dataset group as the lookup lab and a random or
// Bayesian planner (bayes describes each level by the other groups' data, as campaign run
// does). A CSV comes uploaded (spec.CSVData: errors may quote it, the client sent it) or by a
// path under roots (errors quote nothing of the file: see dataset.Roots). Everything is
// bounded before it is built: the table by dataset.DefaultLimits, the budget by the group's
// space and, for bayes, by bayes.MaxMeasurements.
func newCampaignSetup(roots *dataset.Roots) func(context.Context, *server.CampaignSpec) (*server.CampaignSetup, error) {
	return func(_ context.Context, spec *server.CampaignSpec) (*server.CampaignSetup, error) {
		name := spec.Planner
		if name == "" {
			name = "bayes"
		}
		switch name {
		case "random":
		case "bayes", "bayes-onehot":
			if spec.Budget > bayes.MaxMeasurements {
				return nil, fmt.Errorf("campaign: budget %d: the %s planner models at most %d measurements", spec.Budget, name, bayes.MaxMeasurements)
			}
		default:
			return nil, fmt.Errorf("campaign: planner %q: choose random, bayes or bayes-onehot (the llm planner runs with labmate campaign run --planner llm)", name)
		}
		opts := &dataset.Options{Objective: spec.Objective, Vars: spec.Vars, Groups: spec.Groups}
		var (
			t   *dataset.Table
			err error
		)
		switch {
		case spec.CSV != "" && spec.CSVData != "":
			return nil, errors.New("campaign: give csv (a path) or csv_data, not both")
		case spec.CSVData != "":
			file := "csv_data"
			if spec.Name != "" {
				file = filepath.Base(spec.Name)
			}
			t, err = dataset.Read(strings.NewReader(spec.CSVData), file, opts)
		case spec.CSV != "":
			t, err = roots.Open(spec.CSV, opts)
			if errors.Is(err, dataset.ErrNotUnderRoot) {
				return nil, &notUnderRoot{path: spec.CSV, none: len(roots.Dirs()) == 0}
			}
		default:
			return nil, errors.New("campaign: give csv (a path under a data root of the server) or csv_data (the CSV itself)")
		}
		if err != nil {
			return nil, err
		}
		g := t.Groups[0]
		if spec.Group != "" {
			if g, err = t.Group(spec.Group); err != nil {
				return nil, err
			}
		}
		if n := g.Space().Size(); spec.Budget > n {
			return nil, fmt.Errorf("campaign: budget %d: the group's space has only %d conditions", spec.Budget, n)
		}
		var desc [][][]float64
		if name == "bayes" {
			desc = t.Descriptors(g.Key) // levels described by the other groups' data only
		}
		p, err := newPlanner(name, g.Space(), spec.Seed, nil, desc, nil)
		if err != nil {
			return nil, err
		}
		c := &lab.Campaign{ID: newCampaignID(), Space: t.Name, Objective: t.Objective, Group: g.Key, Planner: name, Seed: spec.Seed}
		return &server.CampaignSetup{Instrument: g, Planner: p, Campaign: c, Scale: g.Scale}, nil
	}
}
