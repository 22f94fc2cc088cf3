package main

import (
	"fmt"

	"github.com/labmate/labmate/lab"
)

// llmPlannerFactory returns a constructor of llm planners for the model spec.
func llmPlannerFactory(spec string) (func(*lab.Space, []lab.Observation) (lab.Planner, error), error) {
	return nil, fmt.Errorf("--model %q: no model providers are built into this labmate yet", spec)
}
