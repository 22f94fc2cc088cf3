package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/server"
)

// campaignSetup sets up a campaign for labmate serve and labmate mcp (the dashboard's
// campaign page, the MCP campaign tools): a dataset group as the lookup lab and a random or
// Bayesian planner (bayes describes each level by the other groups' data, as campaign run does).
func campaignSetup(_ context.Context, spec *server.CampaignSpec) (*server.CampaignSetup, error) {
	opts := &dataset.Options{Objective: spec.Objective, Vars: spec.Vars, Groups: spec.Groups}
	var (
		t   *dataset.Table
		err error
	)
	switch {
	case spec.CSV != "" && spec.CSVData != "":
		return nil, errors.New("campaign: give csv (a path) or csv_data, not both")
	case spec.CSVData != "":
		name := "csv_data"
		if spec.Name != "" {
			name = filepath.Base(spec.Name)
		}
		t, err = dataset.Read(strings.NewReader(spec.CSVData), name, opts)
	case spec.CSV != "":
		t, err = dataset.Open(spec.CSV, opts)
	default:
		return nil, errors.New("campaign: give csv (a path on the server) or csv_data (the CSV itself)")
	}
	if err != nil {
		return nil, err
	}
	if len(t.Groups) == 0 {
		return nil, fmt.Errorf("campaign: %s has no rows", t.Name)
	}
	g := t.Groups[0]
	if spec.Group != "" {
		if g, err = t.Group(spec.Group); err != nil {
			return nil, err
		}
	}
	name := spec.Planner
	if name == "" {
		name = "bayes"
	}
	var desc [][][]float64
	switch name {
	case "random", "bayes-onehot":
	case "bayes":
		desc = t.Descriptors(g.Key) // levels described by the other groups' data only
	default:
		return nil, fmt.Errorf("campaign: planner %q: choose random, bayes or bayes-onehot (the llm planner runs with labmate campaign run --planner llm)", name)
	}
	p, err := newPlanner(name, g.Space(), spec.Seed, nil, desc, nil)
	if err != nil {
		return nil, err
	}
	c := &lab.Campaign{ID: newCampaignID(), Space: t.Name, Objective: t.Objective, Group: g.Key, Planner: name, Seed: spec.Seed}
	return &server.CampaignSetup{Instrument: g, Planner: p, Campaign: c, Scale: g.Scale}, nil
}
