package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/lab/benchrun"
)

// addBenchTools serves the bench tools the agent has too (lab/benchrun): simulate_protocol, on
// a fresh twin, and bench_state, the bench of this connection's session.
func (l *Lab) addBenchTools() {
	for _, t := range l.srv.BenchTools() {
		var ann *sdk.ToolAnnotations
		if t.Spec().Name == benchrun.BenchState {
			ann = &sdk.ToolAnnotations{ReadOnlyHint: true}
		}
		l.addTool(t, ann)
	}
}
