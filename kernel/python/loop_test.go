package python_test

import (
	"context"
	"strings"
	"testing"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/protocol"
)

// TestLoopLooks: while a cell runs a while loop, the kernel's resource samples say how far
// the loop is from each exit it can read — a comparison of values, in its condition or in an
// `if …: break` — innermost loop first, through the cell's own function frames. Comparisons
// of integers, of wall-clock times and of anything that calls the cell's code are left out,
// and looking never calls the cell's code.
func TestLoopLooks(t *testing.T) {
	k, _ := startKernel(t)

	bisect := "import time\n" + // 1
		"def solve(lo, hi):\n" + // 2
		"    it = 0\n" + // 3
		"    while True:\n" + // 4
		"        time.sleep(0.15)\n" + // 5
		"        mid = 0.5 * (lo + hi)\n" + // 6
		"        lo, hi = (mid, hi) if mid * mid < 2 else (lo, mid)\n" + // 7
		"        it += 1\n" + // 8
		"        if hi - lo < 1e-9 or it > 10**6:\n" + // 9
		"            return mid\n" + // 10
		"print(solve(1.0, 2.0))\n"
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: bisect})
	if r.Err != nil || r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("cell failed: %v %+v\n%s", r.Err, r.Res, r.Output())
	}
	var dist []float64
	for _, o := range r.Obs {
		if o.Resource == nil || o.Resource.Loop == nil {
			continue
		}
		l := o.Resource.Loop
		if l.Line != 4 || len(l.Exits) != 1 || l.Exits[0].Line != 9 {
			t.Fatalf("loop %+v, want the loop at line 4 with its one exit of values at line 9 (the counter's cap left out)", l)
		}
		dist = append(dist, l.Exits[0].Distance)
	}
	if len(dist) < 4 {
		t.Fatalf("%d looks at a 4.5 s loop, want one per resource sample", len(dist))
	}
	if dist[len(dist)-1] >= dist[0]/4 {
		t.Errorf("distances %v: the bisection's bracket halves, want them to fall", dist)
	}

	guarded := "import time\n" +
		"calls = 0\n" +
		"def f(x):\n" +
		"    global calls\n" +
		"    calls += 1\n" +
		"    return x\n" +
		"x, n, t0 = 1.0, 0, time.monotonic()\n" +
		"while f(x) > 0.0 and n < 10**9:\n" +
		"    n += 1\n" +
		"    time.sleep(0.01)\n" +
		"    elapsed = time.monotonic() - t0\n" +
		"    if elapsed > 2.0:\n" +
		"        break\n" +
		"print(calls == n + 1 or calls == n, calls, n)\n"
	r = kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: guarded})
	if r.Err != nil || r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("cell failed: %v %+v\n%s", r.Err, r.Res, r.Output())
	}
	if !strings.HasPrefix(strings.Join(r.Stdout, "\n"), "True") {
		t.Errorf("the cell's function was called by the looks: %s", r.Output())
	}
	for _, o := range r.Obs {
		if o.Resource != nil && o.Resource.Loop != nil {
			t.Errorf("looked at %+v: a call, a counter's cap and a wall-clock guard are not exits to judge", o.Resource.Loop)
		}
	}
}
