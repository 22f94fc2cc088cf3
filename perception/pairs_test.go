package perception_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

func TestParseSamples(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := func(name string, v float64, t *float64) *protocol.Sample {
		return &protocol.Sample{Name: name, Value: v, T: t, Source: protocol.FromStdout}
	}
	for _, c := range []struct {
		line string
		want []*protocol.Sample
	}{
		{"x = 3.2", []*protocol.Sample{s("x", 3.2, nil)}},
		{"x: 3.2", []*protocol.Sample{s("x", 3.2, nil)}},
		{"x = 3.2000", []*protocol.Sample{s("x", 3.2, nil)}}, // Octave's display
		{"t=0.1 y=2e5", []*protocol.Sample{s("y", 2e5, f(0.1))}},
		{"time: 2, energy: -1.5e-3; err_norm=4", []*protocol.Sample{s("energy", -1.5e-3, f(2)), s("err_norm", 4, f(2))}},
		{"t = 5", []*protocol.Sample{s("t", 5, nil)}},
		{"iter 12: residual = 1e-8", []*protocol.Sample{s("residual", 1e-8, nil)}},
		{"x = Inf", []*protocol.Sample{s("x", math.Inf(1), nil)}},
		{"step(3) dt=0.5", []*protocol.Sample{s("dt", 0.5, nil)}},
		{"", nil},
		{"no separators here", nil},
		{"error: 'f' undefined near line 1, column 5", nil},
		{"a == 3", nil},
		{"x = [1 2 3]", nil},
		{"x =", nil},
		{"ratio = 3/4", nil},
		{"url: http://example.org", nil},
		{"2x = 5", nil},
		// Prose pairs: a line of name-number pairs only, at least two.
		{"epoch 8 | loss nan", []*protocol.Sample{s("epoch", 8, nil), s("loss", math.NaN(), nil)}},
		{"epoch 8 loss nan", []*protocol.Sample{s("epoch", 8, nil), s("loss", math.NaN(), nil)}},
		{"iter 12, residual 3e-5; step -Inf", []*protocol.Sample{s("iter", 12, nil), s("residual", 3e-5, nil), s("step", math.Inf(-1), nil)}},
		{"t 0.5 x 2", []*protocol.Sample{s("x", 2, f(0.5))}},
		{"epoch 8", nil},                   // one pair: too little to tell from prose
		{"between 3 and", nil},             // not all pairs
		{"found 3 errors in 2 files", nil}, // a word where a number should be
		{"Step 100 of 200 done", nil},
		{"0 300 -906.24 0", nil},
		{"x 1e", nil},
		// Names with punctuation, and non-finite values in any spelling.
		{"iter 7: ||F|| = 2.5e-01", []*protocol.Sample{s("||F||", 0.25, nil)}},
		{"k=3 |r|=1e-4 dE/E0=-2e-3", []*protocol.Sample{s("k", 3, nil), s("|r|", 1e-4, nil), s("dE/E0", -2e-3, nil)}},
		{"iter 3 ||F|| 2.5 |dx| 0.1", []*protocol.Sample{s("iter", 3, nil), s("||F||", 2.5, nil), s("|dx|", 0.1, nil)}},
		{"c_msd[4] = 0.5, f(x) = 2", []*protocol.Sample{s("c_msd[4]", 0.5, nil), s("f(x)", 2, nil)}},
		{"logL = -inf", []*protocol.Sample{s("logL", math.Inf(-1), nil)}},
		{"logL: -Infinity", []*protocol.Sample{s("logL", math.Inf(-1), nil)}},
		{"step 40 loglik -Inf", []*protocol.Sample{s("step", 40, nil), s("loglik", math.Inf(-1), nil)}},
		{"Temp = -nan", []*protocol.Sample{s("Temp", math.NaN(), nil)}},
		{"E = NaN, H = Infinity", []*protocol.Sample{s("E", math.NaN(), nil), s("H", math.Inf(1), nil)}},
		{"|x = 3", nil},
		{"it 3 ||F||_2 = 0.5, |r|_inf: 2e-3", []*protocol.Sample{s("||F||_2", 0.5, nil), s("|r|_inf", 2e-3, nil)}},
		{"k 3 ||F||_2 0.5", []*protocol.Sample{s("k", 3, nil), s("||F||_2", 0.5, nil)}},
		{`{"step": 40, "logZ": -Infinity, "note": "underflow"}`, []*protocol.Sample{s("step", 40, nil), s("logZ", math.Inf(-1), nil)}},
		{"{'loss': 0.5, 'acc': 0.9}", []*protocol.Sample{s("loss", 0.5, nil), s("acc", 0.9, nil)}},
		{"print('x = 3')", nil},
		{"a|b = 3", nil},
	} {
		got := perception.ParseSamples(c.line)
		if d := cmp.Diff(c.want, got, cmp.Comparer(func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) })); d != "" {
			t.Errorf("ParseSamples(%q) (-want +got):\n%s", c.line, d)
		}
	}
}

func TestParseSamplesNoAllocWithoutPairs(t *testing.T) {
	for _, line := range []string{"plain output line with no pairs", "iteration information Inf done", "epoch 8 loss", "  0 300 -906.24 0 -896.35 3493.3"} {
		if n := testing.AllocsPerRun(100, func() { perception.ParseSamples(line) }); n != 0 {
			t.Errorf("%v allocations for %q, a line without pairs", n, line)
		}
	}
}

func BenchmarkParseSamples(b *testing.B) {
	for b.Loop() {
		perception.ParseSamples("t=0.1 y=2e5 residual = 1.5e-3")
	}
}
