package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
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

// newCampaignSetup is server.Config.Campaign over game.NewSetup with roots.
func newCampaignSetup(roots *dataset.Roots) func(context.Context, *server.CampaignSpec) (*server.CampaignSetup, error) {
	return func(_ context.Context, spec *server.CampaignSpec) (*server.CampaignSetup, error) {
		s, err := game.NewSetup(roots, spec)
		if err != nil {
			return nil, err
		}
		return &server.CampaignSetup{Instrument: s.Instrument, Planner: s.Planner, Campaign: s.Campaign, Scale: s.Group.Scale}, nil
	}
}
