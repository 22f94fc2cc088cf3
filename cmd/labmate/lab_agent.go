package main

import (
	"context"
	"fmt"
	"io"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/tool"
)

// agentApproval is why an agent run's commands on a real instrument are refused.
const agentApproval = "an agent run asks nobody; run the protocol with labmate lab run --approve ask"

// serveBench serves the bench of workspace ws while an agent run's kernels work there, so
// that labmate.bench() in a cell works and its state persists across cells and runs. A bench
// that cannot be served (a workspace path too long for a socket) is said on w, and the run
// goes on without it. Call the returned func when the run ends.
func serveBench(ctx context.Context, w io.Writer, ws string) func() {
	served, err := benchrun.Serve(ctx, ws, &benchrun.ServeOptions{Keep: true, Approve: benchrun.Refuse(agentApproval)})
	if err != nil {
		fmt.Fprintf(w, "labmate: the run has no bench: %v\n", err)
		return func() {}
	}
	return func() {
		if err := served.Close(); err != nil {
			fmt.Fprintf(w, "labmate: the bench: %v\n", err)
		}
	}
}

// benchTools are the agent's simulate_protocol and bench_state for a run working in ws.
func benchTools(sb kernel.Sandbox, ws func() (string, error)) []tool.Tool {
	return benchrun.Tools(&benchrun.ToolsOptions{Start: protocolStart(sb),
		Workspace: func(context.Context) (string, error) { return ws() }})
}
