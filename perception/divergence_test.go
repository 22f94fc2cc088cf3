package perception

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

func TestDivergence(t *testing.T) {
	logistic := func(n0, k, rate float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = k / (1 + (k/n0-1)*math.Exp(-rate*float64(i)))
		}
		return out
	}
	dips := func(every, n int) []float64 { // ×2 per step, ×0.99 every `every` steps
		out := make([]float64, n)
		x := 1.0
		for i := range out {
			if i%every == every-1 {
				x *= 0.99
			} else {
				x *= 2
			}
			out[i] = x
		}
		return out
	}
	power := func(p float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Pow(float64(i+1), p)
		}
		return out
	}
	tests := []struct {
		name string
		vs   []float64
		want []emitted
	}{
		// |y| = 9^(i+1) passes 10¹⁰ × 9 (its initial scale) at i = 11.
		{"growth ×9 per step", geometric(9, 9, 30), []emitted{{11, protocol.Error, DetectorDivergence}}},
		// Explicit Euler on y' = -1000y with h = 0.01: y ← -9y, a period-2 oscillation whose
		// swings grow ×9 each: the oscillation detector sees it first.
		{"explicit Euler on a stiff system", geometric(9, -9, 30), []emitted{{9, protocol.Error, DetectorOscillation}}},
		// Growth per sample at the three-decades-per-15-steps edge: 10^0.2 ≈ 1.585.
		{"growth just below the rise", geometric(1, 1.58, 60), nil},
		{"growth just above the rise", geometric(1, 1.59, 60), []emitted{{15, protocol.Warning, DetectorDivergence}, {50, protocol.Error, DetectorDivergence}}},
		// Consistency: 12 rises in 15 steps (80%) is not enough, 13 (87%) is.
		{"too many dips", dips(5, 100), nil},
		{"few dips", dips(8, 100), []emitted{{15, protocol.Warning, DetectorDivergence}, {38, protocol.Error, DetectorDivergence}}},
		// Bounded.
		{"constant 1e12", geometric(1e12, 1, 100), nil},
		{"logistic saturating at 1e12", logistic(2e11, 1e12, 0.05, 300), nil},
		{"logistic over nine decades", logistic(1, 1e9, 0.5, 120), []emitted{{15, protocol.Warning, DetectorDivergence}}},
		{"slow convergence", func() []float64 {
			out := make([]float64, 500)
			for i := range out {
				out[i] = 1 + 1/float64(i+1)
			}
			return out
		}(), nil},
		{"exponential decay", geometric(1, 0.5, 100), nil},
		// Polynomial growth from the first step rises fast, then slows.
		{"cubic", power(3, 300), nil},
		{"quintic", power(5, 300), nil},
		{"from zero", append([]float64{0, 0, 0}, power(2, 100)...), nil},
		// The absolute bound.
		{"just below the bound", []float64{1, 2, 1e99}, nil},
		{"at the bound", []float64{1, 2, 1e100}, []emitted{{2, protocol.Error, DetectorDivergence}}},
		{"negative at the bound", []float64{1, -1e100}, []emitted{{1, protocol.Error, DetectorDivergence}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := feed(newMonitor(t, nil), seriesObs("y", 0.05, tt.vs))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDivergenceVectorAndEvidence(t *testing.T) {
	m := newMonitor(t, nil)
	var got []emitted
	for i := range 14 {
		x := math.Pow(-9, float64(i+1))
		if v := m.Observe(telVec(float64(i), "state", 0.5, x)); v != nil {
			got = append(got, emitted{i, v.State, v.Detector})
		}
	}
	if diff := cmp.Diff([]emitted{{11, protocol.Error, DetectorDivergence}}, got); diff != "" {
		t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
	}
	v := m.Verdict()
	want := protocol.Verdict{
		State:    protocol.Error,
		Detector: DetectorDivergence,
		Message:  "state diverges: |state| grew ×3.13811e+10 over 12 samples to 2.8243e+11",
		Evidence: []string{"|state| = 2.8243e+11, ×3.13811e+10 in 12 samples"},
		Severity: 0.9,
		Action:   protocol.ActionInterrupt,
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("verdict mismatch (-want +got):\n%s", diff)
	}
}

// TestDivergenceSources keeps a helper series and its printed copy apart.
func TestDivergenceSources(t *testing.T) {
	m := newMonitor(t, nil)
	var got []emitted
	for i, x := range geometric(9, 9, 14) {
		for _, o := range []*protocol.Observation{tel(float64(i), "A", x), printed(float64(i), "A", float64(float32(x)))} {
			if v := m.Observe(o); v != nil {
				got = append(got, emitted{i, v.State, v.Detector})
			}
		}
	}
	if diff := cmp.Diff([]emitted{{11, protocol.Error, DetectorDivergence}}, got); diff != "" {
		t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
	}
}
