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
		// Sustained growth at any rate: slower than three decades in 16 samples, it is seen
		// over a longer window.
		{"growth below the short window's rise", geometric(1, 1.58, 60), []emitted{{31, protocol.Warning, DetectorDivergence}, {51, protocol.Error, DetectorDivergence}}},
		{"growth just above the rise", geometric(1, 1.59, 60), []emitted{{15, protocol.Warning, DetectorDivergence}, {50, protocol.Error, DetectorDivergence}}},
		{"slow growth ×1.1 per step", geometric(1, 1.1, 400), []emitted{{76, protocol.Warning, DetectorDivergence}, {242, protocol.Error, DetectorDivergence}}},
		// Consistency: growth with a dip every fifth step is still growth over a long window.
		{"dips every fifth step", dips(5, 100), []emitted{{31, protocol.Warning, DetectorDivergence}, {42, protocol.Error, DetectorDivergence}}},
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
		// No absolute bound by default: a single huge value is no growth.
		{"a huge value", []float64{1, 2, 1e300, 3}, nil},
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
		State:      protocol.Error,
		Detector:   DetectorDivergence,
		Message:    "state diverges: |state| grew ×4.78297e+06 over 8 samples to 2.8243e+11",
		Evidence:   []string{"|state| = 2.8243e+11, ×4.78297e+06 in 8 samples"},
		Severity:   0.9,
		Action:     protocol.ActionInterrupt,
		Correction: "if this is a time-stepping scheme, reduce the step below its stability limit (explicit schemes: CFL r ≤ 0.5, h·|λ| < 2), or use an implicit method",
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

// TestDivergenceBound: an absolute bound, when one is set, is an Error at once.
func TestDivergenceBound(t *testing.T) {
	for _, c := range []struct {
		name string
		vs   []float64
		want []emitted
	}{
		{"just below the bound", []float64{1, 2, 1e99}, nil},
		{"at the bound", []float64{1, 2, 1e100}, []emitted{{2, protocol.Error, DetectorDivergence}}},
		{"negative at the bound", []float64{1, -1e100}, []emitted{{1, protocol.Error, DetectorDivergence}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := feed(newMonitor(t, &Config{Thresholds: Thresholds{DivergenceBound: 1e100}}), seriesObs("y", 0.05, c.vs))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDivergenceRoles: a residual or a loss is held to a lower bar than a series whose role
// is unknown — the loss growing ×1.4 every two iterations from 1e4 is an Error once
// it is 100 times its best over a dozen samples, while the same numbers named y are only an
// Error ten decades above their start.
func TestDivergenceRoles(t *testing.T) {
	slow := make([]float64, 320)
	x := 1e4
	for i := range slow {
		if i%2 == 1 {
			x *= 1.4
		}
		slow[i] = x
	}
	for _, c := range []struct {
		name string
		want []emitted
	}{
		{"loss", []emitted{{32, protocol.Error, DetectorDivergence}}},
		{"||F||", []emitted{{32, protocol.Error, DetectorDivergence}}},
		{"y", []emitted{{44, protocol.Warning, DetectorDivergence}, {137, protocol.Error, DetectorDivergence}}},
		{"max|u|", []emitted{{44, protocol.Error, DetectorDivergence}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := feed(newMonitor(t, nil), seriesObs(c.name, 0.05, slow))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// A residual that rises linearly from its start (conjugate gradients on a nonsymmetric
	// matrix: 3 → 84 over 150 iterations) never converges: an Error once it has risen tenfold
	// over 64 samples; the same numbers named y are not judged by a role.
	linear := make([]float64, 150)
	for i := range linear {
		linear[i] = 3.1 + 0.54*float64(i)
	}
	for _, c := range []struct {
		name string
		want []emitted
	}{
		{"rel. residual", []emitted{{63, protocol.Error, DetectorDivergence}}},
		{"loss", []emitted{{63, protocol.Error, DetectorDivergence}}},
		{"y", nil},
	} {
		if diff := cmp.Diff(c.want, feed(newMonitor(t, nil), seriesObs(c.name, 0.05, linear))); diff != "" {
			t.Errorf("linear rise named %s: verdicts mismatch (-want +got):\n%s", c.name, diff)
		}
	}
	// Healthy: a loss that falls, rises briefly (a spike) and falls again; a residual whose
	// transient growth (a non-normal system) turns over.
	spike := make([]float64, 200)
	for i := range spike {
		spike[i] = math.Exp(-float64(i) / 30)
		if i >= 50 && i < 60 {
			spike[i] *= math.Pow(3, float64(i-50))
		}
	}
	transient := make([]float64, 200)
	for i := range transient {
		tt := float64(i) / 10
		transient[i] = 1e-3 * (1 + 400*tt*tt*tt*math.Exp(-tt))
	}
	for name, vs := range map[string][]float64{"loss spike": spike, "transient": transient} {
		for _, series := range []string{"loss", "res", "y", "|x|", "max|u|"} {
			if got := feed(newMonitor(t, nil), seriesObs(series, 0.05, vs)); len(got) > 0 && got[len(got)-1].State == protocol.Error {
				t.Errorf("%s named %s: %v", name, series, got)
			}
		}
	}
}
