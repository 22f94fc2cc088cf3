package main

import (
	"context"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/tool"
)

// benchTools are the agent's simulate_protocol and bench_state for a run working in ws.
func benchTools(sb kernel.Sandbox, ws func() (string, error)) []tool.Tool {
	return benchrun.Tools(&benchrun.ToolsOptions{Start: sandboxed{sb}.Start,
		Workspace: func(context.Context) (string, error) { return ws() }})
}
