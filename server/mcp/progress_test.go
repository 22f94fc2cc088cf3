package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestMCPProgressPacing, with the official go-sdk client over streamable HTTP: a cell that
// prints 200,000 lines sends at most one progress notification per 100 ms, the last lines
// among them; a cell silent for 90 s completes under a client that gives up after 60 s
// without progress (the TypeScript SDK's default timeout with resetTimeoutOnProgress), because
// keep-alive progress keeps coming.
func TestMCPProgressPacing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cs, p := f.connect(t, "http")

	t.Run("200000 lines", func(t *testing.T) {
		start := time.Now()
		r := call(t, context.Background(), cs, "flood", "exec", map[string]any{"kernel": "python",
			"code": "import sys\nfor i in range(200000):\n    sys.stdout.write('line %d\\n' % i)\nsys.stdout.flush()\n"})
		elapsed := time.Since(start)
		if r.IsError {
			t.Fatalf("exec: %s", text(r))
		}
		p.mu.Lock()
		n := p.count["flood"]
		p.mu.Unlock()
		if most := int(elapsed/(100*time.Millisecond)) + 2; n > most || n < 2 {
			t.Errorf("%d notifications in %v; want 2 to %d", n, elapsed, most)
		}
		if got := p.get("flood"); !strings.Contains(strings.Join(got, "\n"), "line 199999") || !strings.Contains(strings.Join(got, "\n"), "earlier lines not shown") {
			t.Errorf("the notifications lack the last line or the count of the lines left out: %q", got[max(0, len(got)-5):])
		}
	})

	t.Run("90 s silent", func(t *testing.T) {
		if testing.Short() {
			t.Skip("90 s")
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The client's timeout: 60 s without a notification, restarted by each one.
		go func() {
			last := 0
			timer := time.NewTimer(60 * time.Second)
			defer timer.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-p.seen:
					p.mu.Lock()
					n := p.count["silent"]
					p.mu.Unlock()
					if n > last {
						last = n
						timer.Reset(60 * time.Second)
					}
				case <-timer.C:
					t.Error("60 s without a progress notification: the client timed out")
					cancel()
					return
				}
			}
		}()
		r := call(t, ctx, cs, "silent", "exec", map[string]any{"kernel": "python", "timeout_s": 120,
			"code": "import time\nprint('start', flush=True)\ntime.sleep(90)\nprint('done', flush=True)\n"})
		if r.IsError || structured(t, r)["output"] != "start\ndone\n" {
			t.Fatalf("exec: %s", text(r))
		}
		if alive := strings.Count(strings.Join(p.get("silent"), "\n"), "still running after"); alive < 5 {
			t.Errorf("%d keep-alive notifications in a 90 s silent cell; want one every 15 s", alive)
		}
	})
}
