package perception

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

func TestParseConstraint(t *testing.T) {
	type parsed struct {
		Name, String string
		Kind         constraintKind
		Op           string
		Lo, Hi       float64
	}
	tests := []struct {
		expr string
		want parsed
	}{
		{"x < 1e6", parsed{"x", "x < 1e+06", compare, "<", 1e6, 0}},
		{"overshoot_pct <= 5", parsed{"overshoot_pct", "overshoot_pct <= 5", compare, "<=", 5, 0}},
		{"snr_gain_db > 3", parsed{"snr_gain_db", "snr_gain_db > 3", compare, ">", 3, 0}},
		{"y>=-0.5", parsed{"y", "y >= -0.5", compare, ">=", -0.5, 0}},
		{"  mode == 2 ", parsed{"mode", "mode == 2", compare, "==", 2, 0}},
		{"err != 0", parsed{"err", "err != 0", compare, "!=", 0, 0}},
		{"N < 1.1e12", parsed{"N", "N < 1.1e+12", compare, "<", 1.1e12, 0}},
		{"mass_error < 1e-6", parsed{"mass_error", "mass_error < 1e-06", compare, "<", 1e-6, 0}},
		{"x < .5", parsed{"x", "x < 0.5", compare, "<", 0.5, 0}},
		{"x < inf", parsed{"x", "x < +Inf", compare, "<", math.Inf(1), 0}},
		{"finite(x)", parsed{"x", "finite(x)", finiteOf, "", 0, 0}},
		{"finite ( energy_J )", parsed{"energy_J", "finite(energy_J)", finiteOf, "", 0, 0}},
		{"residual decreasing", parsed{"residual", "residual decreasing", decreasing, "", 0, 0}},
		{"energy increasing", parsed{"energy", "energy increasing", increasing, "", 0, 0}},
		{"temperature in [15, 27]", parsed{"temperature", "temperature in [15, 27]", within, "", 15, 27}},
		{"x in [-1.01,1.01]", parsed{"x", "x in [-1.01, 1.01]", within, "", -1.01, 1.01}},
		{"radius_m in [1.4e11, 1.6e11]", parsed{"radius_m", "radius_m in [1.4e+11, 1.6e+11]", within, "", 1.4e11, 1.6e11}},
		{"v in [2, 2]", parsed{"v", "v in [2, 2]", within, "", 2, 2}},
		{"pos.x < 3", parsed{"pos.x", "pos.x < 3", compare, "<", 3, 0}},
		{"finite < 3", parsed{"finite", "finite < 3", compare, "<", 3, 0}}, // a series called finite
		{"in in [0, 1]", parsed{"in", "in in [0, 1]", within, "", 0, 1}},
	}
	for _, tt := range tests {
		c, err := ParseConstraint(tt.expr)
		if err != nil {
			t.Errorf("ParseConstraint(%q): %v", tt.expr, err)
			continue
		}
		got := parsed{c.Name, c.String(), c.kind, c.op, c.lo, c.hi}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseConstraint(%q) mismatch (-want +got):\n%s", tt.expr, diff)
		}
		if c.Expr != tt.expr {
			t.Errorf("ParseConstraint(%q).Expr = %q", tt.expr, c.Expr)
		}
	}
}

func TestParseConstraintErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"x <", `watch "x <": expected a number after "<" at column 4`},
		{"", `watch "": empty expression: expected a series name at column 1`},
		{"   ", `watch "   ": empty expression: expected a series name at column 4`},
		{"x < abc", `watch "x < abc": expected a number after "<", found "abc" at column 5`},
		{"x < 1e999", `watch "x < 1e999": number "1e999" is out of range at column 5`},
		{"x < NaN", `watch "x < NaN": NaN is not a bound at column 5`},
		{"3 < x", `watch "3 < x": expected a series name, found "3" at column 1`},
		{"x ~ 3", `watch "x ~ 3": expected a comparison (< <= > >= == !=), "in", "decreasing" or "increasing" after "x", found "~" at column 3`},
		{"x", `watch "x": expected a comparison (< <= > >= == !=), "in", "decreasing" or "increasing" after "x" at column 2`},
		{"x = 3", `watch "x = 3": "=" is not a comparison (use "==") at column 3`},
		{"x < 3 y", `watch "x < 3 y": unexpected "y" after the constraint at column 7`},
		{"x <= 5)", `watch "x <= 5)": unexpected ")" after the constraint at column 7`},
		{"x decreasing fast", `watch "x decreasing fast": unexpected "fast" after the constraint at column 14`},
		{"x shrinking", `watch "x shrinking": expected a comparison (< <= > >= == !=), "in", "decreasing" or "increasing" after "x", found "shrinking" at column 3`},
		{"finite(x", `watch "finite(x": expected ")" after "x" at column 9`},
		{"finite()", `watch "finite()": expected a series name after "finite(", found ")" at column 8`},
		{"finite(1)", `watch "finite(1)": expected a series name after "finite(", found "1" at column 8`},
		{"x in 0, 1", `watch "x in 0, 1": expected "[" after "in", found "0" at column 6`},
		{"x in (0, 1)", `watch "x in (0, 1)": expected "[" after "in", found "(" at column 6`},
		{"x in [0 1]", `watch "x in [0 1]": expected "," after the lower bound, found "1" at column 9`},
		{"x in [0, 1", `watch "x in [0, 1": expected "]" after the upper bound at column 11`},
		{"x in [, 1]", `watch "x in [, 1]": expected a number after "[", found "," at column 7`},
		{"x in [2, 1]", `watch "x in [2, 1]": empty interval: 2 > 1 at column 6`},
		{"x < 1e6 && y < 2", `watch "x < 1e6 && y < 2": unexpected "&& y < 2" after the constraint at column 9`},
	}
	for _, tt := range tests {
		_, err := ParseConstraint(tt.expr)
		if err == nil {
			t.Errorf("ParseConstraint(%q) succeeded, want error %s", tt.expr, tt.want)
			continue
		}
		if got := err.Error(); got != tt.want {
			t.Errorf("ParseConstraint(%q) error\n got %s\nwant %s", tt.expr, got, tt.want)
		}
		if !errors.Is(err, ErrBadConstraint) {
			t.Errorf("ParseConstraint(%q) error does not wrap ErrBadConstraint", tt.expr)
		}
	}
}

func TestNewRejectsBadWatch(t *testing.T) {
	_, err := New(&Config{Watch: []string{"x < 1", "y <", "finite("}})
	if err == nil {
		t.Fatal("New with malformed watch expressions succeeded")
	}
	want := `watch "y <": expected a number after "<" at column 4` + "\n" +
		`watch "finite(": expected a series name after "finite(" at column 8`
	if err.Error() != want {
		t.Errorf("New error\n got %s\nwant %s", err, want)
	}
	if !errors.Is(err, ErrBadConstraint) {
		t.Error("New error does not wrap ErrBadConstraint")
	}
}

// TestConstraintViolations checks each form at the edge of its bound.
func TestConstraintViolations(t *testing.T) {
	tests := []struct {
		name  string
		watch string
		obs   []*protocol.Observation
		want  emitted // the first alarm; zero when the constraint holds
	}{
		{"below bound", "x < 1e6", seriesObs("x", 0.1, []float64{1, 999999.99}), emitted{}},
		{"at strict bound", "x < 1e6", seriesObs("x", 0.1, []float64{1, 1e6}), emitted{1, protocol.Error, DetectorConstraint}},
		{"at inclusive bound", "overshoot_pct <= 5", seriesObs("overshoot_pct", 0.1, []float64{4.9, 5}), emitted{}},
		{"just over inclusive bound", "overshoot_pct <= 5", seriesObs("overshoot_pct", 0.1, []float64{4.9, 5.0000001}), emitted{1, protocol.Error, DetectorConstraint}},
		{"other series ignored", "x < 1", seriesObs("y", 0.1, []float64{5}), emitted{}},
		{"printed sample counts", "x < 1", []*protocol.Observation{printed(0, "x", 2)}, emitted{0, protocol.Error, DetectorConstraint}},
		{"interval edges hold", "t in [15, 27]", seriesObs("t", 1, []float64{15, 27, 20}), emitted{}},
		{"interval below", "t in [15, 27]", seriesObs("t", 1, []float64{15, 14.999}), emitted{1, protocol.Error, DetectorConstraint}},
		{"interval above", "t in [15, 27]", seriesObs("t", 1, []float64{27.001}), emitted{0, protocol.Error, DetectorConstraint}},
		{"vector element", "x < 1", []*protocol.Observation{telVec(0, "x", 0.5, 0.9), telVec(1, "x", 0.5, 1.5)}, emitted{1, protocol.Error, DetectorConstraint}},
		{"not equal", "mode != 0", seriesObs("mode", 1, []float64{1, 2, 0}), emitted{2, protocol.Error, DetectorConstraint}},
		{"finite holds", "finite(x)", seriesObs("x", 1, []float64{1, -1e99}), emitted{}},
		// The first NaN after finite values is an Error for finite(x) (the non-finite detector
		// alone would wait for a second one).
		{"finite violated", "finite(x)", seriesObs("x", 1, []float64{1, math.NaN()}), emitted{1, protocol.Error, DetectorConstraint}},

		{"decreasing", "r decreasing", seriesObs("r", 1, geometric(1, 0.5, 40)), emitted{}},
		{"decreasing, two rises in a row", "r decreasing", seriesObs("r", 1, []float64{5, 4, 3, 3.5, 3.6, 2, 1.9, 2.1, 2.2, 1}), emitted{}},
		{"decreasing, three rises in a row", "r decreasing", seriesObs("r", 1, []float64{5, 4, 3, 3.5, 3.6, 3.7}), emitted{5, protocol.Error, DetectorConstraint}},
		{"decreasing, flat steps neither count nor reset", "r decreasing", seriesObs("r", 1, []float64{5, 4, 4.5, 4.5, 4.6, 4.6, 4.7}), emitted{6, protocol.Error, DetectorConstraint}},
		// Roundoff around a converged value: rises of 1e-16 are within the tolerance.
		{"decreasing, roundoff at convergence", "r decreasing", seriesObs("r", 1, []float64{1, 0.1, 1e-3, 1e-16, 2e-16, 3e-16, 4e-16, 5e-16}), emitted{}},
		{"decreasing, relative tolerance", "e decreasing", seriesObs("e", 1, []float64{0.6931, 0.6931 * (1 + 9e-7), 0.6931 * (1 + 18e-7), 0.6931 * (1 + 27e-7)}), emitted{}},
		{"decreasing, just over relative tolerance", "e decreasing", seriesObs("e", 1, []float64{0.6931, 0.6931 * (1 + 2e-6), 0.6931 * (1 + 4e-6), 0.6931 * (1 + 6e-6)}), emitted{3, protocol.Error, DetectorConstraint}},
		{"increasing", "n increasing", seriesObs("n", 1, []float64{1, 2, 3, 2.9, 2.8, 2.7}), emitted{5, protocol.Error, DetectorConstraint}},
		{"increasing holds", "n increasing", seriesObs("n", 1, []float64{1, 2, 3, 2.9, 3.5, 2.7, 4}), emitted{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := firstAlarm(t, &Config{Watch: []string{tt.watch}}, tt.obs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("first alarm mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConstraintEvidence(t *testing.T) {
	m := newMonitor(t, &Config{Watch: []string{"temperature < 400"}})
	o := tel(3, "temperature", 409.25)
	tv := 61.5
	o.Sample.T = &tv
	v := m.Observe(o)
	want := &protocol.Verdict{
		State:    protocol.Error,
		Detector: DetectorConstraint,
		Message:  `watch "temperature < 400" violated: temperature = 409.25 at t=61.5`,
		Evidence: []string{`watch "temperature < 400": temperature = 409.25 at t=61.5`},
		Severity: 1,
		Action:   protocol.ActionInterrupt,
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("verdict mismatch (-want +got):\n%s", diff)
	}

	m = newMonitor(t, &Config{Watch: []string{"residual decreasing"}})
	feed(m, seriesObs("residual", 1, []float64{1, 0.5, 0.6, 0.7, 0.8}))
	if got, want := m.Verdict().Evidence, []string{`watch "residual decreasing": residual rose 3 times in a row: 0.5 → 0.8`}; !cmp.Equal(got, want) {
		t.Errorf("evidence = %q, want %q", got, want)
	}
}
