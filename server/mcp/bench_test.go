package mcp_test

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/protocol"
)

// BenchmarkExec is the round trip of one exec tool call of a trivial Python cell (one printed
// line, so one progress notification) through the MCP server, per transport: the MCP layer's
// cost on top of the protocol server's.
func BenchmarkExec(b *testing.B) {
	b.Run("direct", func(b *testing.B) { // the baseline: server.Exec in-process, no MCP
		f := newFixture(b)
		req := &protocol.Request{Kind: "exec", Kernel: "python", Code: "print(1)"}
		run := func() {
			for _, err := range f.srv.Run(context.Background(), "bench", req) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		run()
		for b.Loop() {
			run()
		}
	})
	for _, transport := range []string{"memory", "http"} {
		b.Run(transport, func(b *testing.B) {
			f := newFixture(b)
			cs, _ := f.connect(b, transport)
			ctx := context.Background()
			params := &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"kernel": "python", "code": "print(1)"}}
			params.SetProgressToken("bench")
			if r, err := cs.CallTool(ctx, params); err != nil || r.IsError { // the kernel starts
				b.Fatal(err, r)
			}
			for b.Loop() {
				r, err := cs.CallTool(ctx, params)
				if err != nil || r.IsError {
					b.Fatal(err, r)
				}
			}
		})
	}
}
