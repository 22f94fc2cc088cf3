package runner_test

import (
	"context"
	"errors"
	"iter"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/runner"
)

// kernelsOf is runner.Kernels that starts every kernel with the function and lists none.
type kernelsOf func(ctx context.Context, name, workspace string) (kernel.Kernel, error)

func (k kernelsOf) Start(ctx context.Context, name, workspace string) (kernel.Kernel, error) {
	return k(ctx, name, workspace)
}

func (kernelsOf) List(context.Context) []runner.KernelInfo { return nil }

// agentsOf is runner.Agents that runs tasks with the function, resumes none and names no model.
type agentsOf func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error]

func (a agentsOf) Run(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] {
	return a(ctx, task)
}

func (agentsOf) Resume(_ context.Context, id string) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) { yield(nil, errors.New("this test resumes no run")) }
}

func (agentsOf) Model() string { return "" }
