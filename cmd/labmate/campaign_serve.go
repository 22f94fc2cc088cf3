package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/runner"
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
func (f *campaignFlags) setup() (runner.Campaigns, error) {
	roots, err := dataset.NewRoots(f.dataRoots)
	if err != nil {
		return nil, fmt.Errorf("--data-root: %w", err)
	}
	return runner.Datasets{Roots: roots}, nil
}
