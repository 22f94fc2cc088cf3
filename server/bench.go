package server

import (
	"context"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/tool"
)

// BenchTools are simulate_protocol and bench_state (lab/benchrun) over the server's Python
// kernels and sessions: bench_state shows the bench of the calling session
// (tool.OriginOf(ctx).Session), what labmate.bench() in its cells works on. Nil when the
// server starts no kernels.
func (s *Server) BenchTools() []tool.Tool {
	if s.cfg.Start == nil {
		return nil
	}
	return benchrun.Tools(&benchrun.ToolsOptions{
		Start: func(ctx context.Context, ws string) (kernel.Kernel, error) { return s.cfg.Start(ctx, "python", ws) },
		Workspace: func(ctx context.Context) (string, error) {
			ss := s.lookup(tool.OriginOf(ctx).Session)
			if ss == nil {
				return "", nil
			}
			ss.mu.Lock()
			defer ss.mu.Unlock()
			return ss.ws, nil
		},
	})
}
