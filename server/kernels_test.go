package server_test

import (
	"context"
	"errors"
	"iter"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// kernelFuncs is runner.Kernels of two functions; a nil list lists none.
type kernelFuncs struct {
	start func(ctx context.Context, name, workspace string) (kernel.Kernel, error)
	list  func(context.Context) []runner.KernelInfo
}

func (k kernelFuncs) Start(ctx context.Context, name, workspace string) (kernel.Kernel, error) {
	return k.start(ctx, name, workspace)
}

func (k kernelFuncs) List(ctx context.Context) []runner.KernelInfo {
	if k.list == nil {
		return nil
	}
	return k.list(ctx)
}

// setKernels sets c's kernels to k; with no start, c's runner runs no kernels at all.
func setKernels(c *server.Config, k kernelFuncs) {
	c.Kernels = nil
	if k.start != nil {
		c.Kernels = k
	}
}

// setStart sets how c's runner starts kernels (nil: it starts none), keeping how it lists them.
func setStart(c *server.Config, start func(ctx context.Context, name, workspace string) (kernel.Kernel, error)) {
	k, _ := c.Kernels.(kernelFuncs)
	k.start = start
	setKernels(c, k)
}

// setList sets how c's runner lists its kernels, keeping how it starts them.
func setList(c *server.Config, list func(context.Context) []runner.KernelInfo) {
	k, _ := c.Kernels.(kernelFuncs)
	k.list = list
	setKernels(c, k)
}

// agentFuncs is runner.Agents of two functions (a nil resume resumes no run) and a model's name.
type agentFuncs struct {
	run    func(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error]
	resume func(ctx context.Context, id string) iter.Seq2[*agent.Event, error]
	model  string
}

func (a *agentFuncs) Run(ctx context.Context, task *agent.Task) iter.Seq2[*agent.Event, error] {
	return a.run(ctx, task)
}

func (a *agentFuncs) Resume(ctx context.Context, id string) iter.Seq2[*agent.Event, error] {
	if a.resume == nil {
		return func(yield func(*agent.Event, error) bool) { yield(nil, errors.New("this test resumes no run")) }
	}
	return a.resume(ctx, id)
}

func (a *agentFuncs) Model() string { return a.model }

// setModel names the model of c's agents.
func setModel(c *server.Config, model string) { c.Agents.(*agentFuncs).model = model }

// cliRuns is runner.LocalRuns of no process, a run resumed by "labmate run --resume ID".
type cliRuns struct{}

func (cliRuns) Owner(string) (int, bool, bool) { return 0, false, false }
func (cliRuns) ResumeCommand(id string) string { return "labmate run --resume " + id }
