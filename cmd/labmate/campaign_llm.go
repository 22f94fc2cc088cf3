package main

import (
	"context"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/game"
	"github.com/labmate/labmate/lab/llmplanner"
	"github.com/labmate/labmate/llm/providers"
)

// llmPlanners resolves the model spec once (with its preflight) and returns a constructor
// of llm planners, one per campaign, that show the prior rows when given.
func llmPlanners(ctx context.Context, spec, objective string) (game.LLMPlanners, error) {
	m, err := providers.NewModel(ctx, spec)
	if err != nil {
		return nil, err
	}
	return func(s *lab.Space, prior []lab.Observation) (lab.Planner, error) {
		return llmplanner.New(m, s, &llmplanner.Options{Objective: objective, Prior: prior}), nil
	}, nil
}
