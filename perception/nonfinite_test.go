package perception

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

func TestPrintedNonFinite(t *testing.T) {
	tests := []struct {
		line string
		want string // the token found, "" for none
	}{
		// Octave displays.
		{"v = NaN", "NaN"},
		{"w = Inf", "Inf"},
		{"ans = -Inf", "-Inf"},
		{"     1   NaN     3", "NaN"},
		{"   1.0000e+300           Inf          -Inf", "Inf"},
		{"   Inf   Inf", "Inf"},
		{"NaN", "NaN"},
		{"z = NaN - NaNi", "NaN"},
		// printf'd pairs and Python reprs.
		{"t=2.24 prey=0 predator=NaN growth_rate=NaN", "NaN"},
		{"x=Inf", "Inf"},
		{"loss: nan", "nan"},
		{"loss: nan at epoch 3", ""}, // the value is followed by prose
		{"[ 1. nan inf]", "nan"},
		{"array([nan,  1.])", "nan"},
		{"{'x': -inf, 'y': 2.0}", "-inf"},
		{"(nan, 3)", "nan"},
		{"1.0 | inf | 2", "inf"},
		{"y = 1e+308 inf", "inf"},
		{"residual = INF", "INF"},
		{"x = infinity", "infinity"},
		{"c = (nan+nanj)", ""}, // complex repr as one token: not recognised
		// Prose and names.
		{"information about the run", ""},
		{"Infinity is the limit", ""},
		{"NaN count: 0", ""},
		{"NaN: 0", ""},
		{"checking for NaN values", ""},
		{"the NaN column is empty", ""},
		{"isnan(x) = 0", ""},
		{"nan_count = 0", ""},
		{"inflow = 3.2", ""},
		{"nanometers = 12", ""},
		{"x = 3 (no NaN)", ""},
		{"values, NaN and Inf are rejected", ""},
		{"colloc: N cannot be NaN", ""},
		{"step 10 x NaN", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := printedNonFinite(tt.line, false)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("printedNonFinite(%q) = %q, %v; want %q", tt.line, got, ok, tt.want)
		}
	}
}

func TestPrintedNonFiniteNamed(t *testing.T) {
	// On stdout a value assigned to a plain name is a sample (the kernel parses it), so the
	// line itself does not count; other numbers on it still do.
	for line, want := range map[string]string{
		"x = NaN":               "",
		"loss: nan":             "",
		"t=2.24 predator=NaN":   "",
		"gain_margin = Inf":     "",
		"{'x': -inf, 'y': 2.0}": "-inf",
		"x = 3, [1 NaN 2]":      "NaN",
		"     1   NaN     3":    "NaN",
	} {
		got, ok := printedNonFinite(line, true)
		if ok != (want != "") || got != want {
			t.Errorf("printedNonFinite(%q, named) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

func TestNonFiniteInContext(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		obs  []*protocol.Observation
		want []emitted
	}{
		{"finite", seriesObs("x", 0.1, []float64{1, 1e30, -3}), nil},
		// A series that had finite values and turns NaN: Warning, then Error if it stays.
		{"turns NaN", seriesObs("x", 0.1, []float64{1, 2, nan, nan}),
			[]emitted{{2, protocol.Warning, DetectorNonFinite}, {3, protocol.Error, DetectorNonFinite}}},
		// Inf is a value (an infinite margin); overflow on the way up is divergence's.
		{"turns Inf", seriesObs("x", 0.1, []float64{1, 2, inf, inf}), []emitted{{2, protocol.Warning, DetectorNonFinite}}},
		{"Inf then NaN", seriesObs("x", 0.1, []float64{1, 2, inf, nan, nan}),
			[]emitted{{2, protocol.Warning, DetectorNonFinite}, {4, protocol.Error, DetectorNonFinite}}},
		// One non-finite result in a sweep, then finite again: a Warning only.
		{"sweep", seriesObs("gain_margin", 0.5, []float64{12, inf, 8, 9}), []emitted{{1, protocol.Warning, DetectorNonFinite}}},
		{"crossover sweep", seriesObs("Wcg", 0.5, []float64{1.7, nan, 2.2, nan}), []emitted{{1, protocol.Warning, DetectorNonFinite}}},
		// Non-finite from the start: a printed result (margin's Gm = Inf, Wcg = NaN).
		{"Inf result", seriesObs("gain_margin", 0.5, []float64{inf}), nil},
		{"Inf throughout", seriesObs("best", 0.5, []float64{inf, inf, inf, inf, inf}), nil},
		{"NaN result", seriesObs("Wcg", 0.5, []float64{nan}), nil},
		{"best starts at inf", seriesObs("best", 0.5, []float64{inf, 3, 2, 1}), nil},
		// NaN from the start is a result too (margin over a sweep of designs, none crossing).
		{"NaN throughout", seriesObs("Wcg", 0.5, []float64{nan, nan, nan, nan}), nil},
		{"vector", []*protocol.Observation{telVec(0, "v", 1, 2), telVec(0.1, "v", 1, nan), telVec(0.2, "v", nan, 1)},
			[]emitted{{1, protocol.Warning, DetectorNonFinite}, {2, protocol.Error, DetectorNonFinite}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, feed(newMonitor(t, nil), tt.obs)); diff != "" {
				t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNonFinitePrintedAnonymous(t *testing.T) {
	// A matrix printed once with a NaN in it: a Warning. Rows with NaN again and again over
	// more than a second: an Error; with Inf: a Warning still.
	once := []*protocol.Observation{stdout(0, "A ="), stdout(0, "   1   NaN"), stdout(0, "   NaN   2")}
	if diff := cmp.Diff([]emitted{{1, protocol.Warning, DetectorNonFinite}}, feed(newMonitor(t, nil), once)); diff != "" {
		t.Errorf("a matrix printed once (-want +got):\n%s", diff)
	}
	var again []*protocol.Observation
	for i := range 5 {
		again = append(again, stdout(float64(i)*0.5, "[ 1. nan 3.]"))
	}
	want := []emitted{{0, protocol.Warning, DetectorNonFinite}, {2, protocol.Error, DetectorNonFinite}}
	if diff := cmp.Diff(want, feed(newMonitor(t, nil), again)); diff != "" {
		t.Errorf("rows printed again and again (-want +got):\n%s", diff)
	}
	for i := range again {
		again[i] = stdout(float64(i)*0.5, "   Inf   60.0")
	}
	if diff := cmp.Diff([]emitted{{0, protocol.Warning, DetectorNonFinite}}, feed(newMonitor(t, nil), again)); diff != "" {
		t.Errorf("Inf rows (-want +got):\n%s", diff)
	}
}

func TestNonFiniteStream(t *testing.T) {
	m := newMonitor(t, nil)
	obs := []*protocol.Observation{
		stdout(0, "t=2.22 prey=0.01 phase=3.1 growth_rate=-0.5"), // read as samples at t=2.22
		stdout(0.1, "NaN count: 0"),
		stdout(0.2, "t=2.24 prey=0 phase=NaN growth_rate=NaN"),
		stdout(0.3, "t=2.26 prey=0 phase=NaN growth_rate=NaN"),
	}
	got := feed(m, obs)
	if diff := cmp.Diff([]emitted{{2, protocol.Warning, DetectorNonFinite}, {3, protocol.Error, DetectorNonFinite}}, got); diff != "" {
		t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
	}
	want := []string{"phase = NaN at t=2.26", "growth_rate = NaN at t=2.26"}
	if diff := cmp.Diff(want, m.Verdict().Evidence); diff != "" {
		t.Errorf("evidence mismatch (-want +got):\n%s", diff)
	}
}

// TestNonFiniteStartsOver: a profile log-likelihood is -inf below the data's range at the start
// of each scan: a series returning to the non-finite value it started with is Normal; one that
// started finite and turns -inf is an Error.
func TestNonFiniteStartsOver(t *testing.T) {
	scan := []float64{negInf, negInf, -30, -28, -29}
	var twice []*protocol.Observation
	for i, v := range append(append([]float64{}, scan...), scan...) {
		twice = append(twice, printed(float64(i)*0.1, "loglik", v))
	}
	if e := firstAlarm(t, nil, twice); e.State != "" {
		t.Errorf("a scan that starts over: %+v, want Normal", e)
	}
	var broke []*protocol.Observation
	for i, v := range []float64{-30, -28, -29, negInf} {
		broke = append(broke, printed(float64(i)*0.1, "loglik", v))
	}
	if e := firstAlarm(t, nil, broke); e.State != protocol.Error || e.Detector != DetectorNonFinite {
		t.Errorf("a log-likelihood underflowing: %+v, want a nonfinite Error", e)
	}
}

// TestNonFiniteSpellings: every spelling of a non-finite value codes print is read as one —
// in a pair, in a table row, and as a role's value turning non-finite mid-run.
func TestNonFiniteSpellings(t *testing.T) {
	inf, ninf := math.Inf(1), math.Inf(-1)
	for _, tt := range []struct {
		tok  string
		want float64 // NaN for any NaN
	}{
		{"nan", math.NaN()}, {"NaN", math.NaN()}, {"-nan", math.NaN()}, {"+NaN", math.NaN()},
		{"inf", inf}, {"-Inf", ninf}, {"Infinity", inf}, {"-Infinity", ninf}, {"INF", inf},
		{"1.#INF", inf}, {"-1.#INF", ninf}, {"1.#INF00", inf}, {"-1.#IND", math.NaN()}, {"-1.#IND00", math.NaN()},
		{"1.#QNAN", math.NaN()}, {"1.#SNAN0", math.NaN()},
		{"****", inf}, {"**************", inf},
	} {
		v, ok := nonFiniteValue(tt.tok)
		if !ok || math.IsNaN(tt.want) != math.IsNaN(v) || !math.IsNaN(v) && v != tt.want {
			t.Errorf("nonFiniteValue(%q) = %v, %v; want %v", tt.tok, v, ok, tt.want)
		}
		if got := parseNumber(tt.tok); math.IsNaN(tt.want) != math.IsNaN(got) || !math.IsNaN(got) && got != tt.want {
			t.Errorf("parseNumber(%q) = %v, want %v", tt.tok, got, tt.want)
		}
		s := ParseSamples("energy = " + tt.tok)
		if len(s) != 1 || math.IsNaN(tt.want) != math.IsNaN(s[0].Value) || !math.IsNaN(s[0].Value) && s[0].Value != tt.want {
			t.Errorf("ParseSamples(energy = %s) = %v, want one sample %v", tt.tok, s, tt.want)
		}
	}
	for _, tok := range []string{"***", "1.#", "1.#XYZ", "nano", "info", "1.5"} {
		if _, ok := nonFiniteValue(tok); ok {
			t.Errorf("nonFiniteValue(%q) = ok, want not a non-finite value", tok)
		}
	}
	// A Fortran overflow in a thermo column, a MSVC infinity for a loss, a -Infinity for a
	// log-likelihood: the role's quantity turned non-finite mid-run, an Error at once.
	runs := map[string][]string{
		"asterisks in a column": {"   Step     Temp      PotEng     TotEng", "      0    300.0   -1000.00   -900.00", "     10    310.0   -1001.00   -900.10",
			"     20    330.0   -1002.00   -900.30", "     30 ********** ********** **********", "     40 ********** ********** **********", "     50 ********** ********** **********"},
		"MSVC infinity": {"epoch 1 loss = 0.9", "epoch 2 loss = 0.7", "epoch 3 loss = 1.#INF"},
		"-Infinity":     {"iter 1 logL = -1523.2", "iter 2 logL = -1490.7", "iter 3 logL = -Infinity"},
	}
	for name, lines := range runs {
		m := newMonitor(t, nil)
		for i, l := range lines {
			m.Observe(stdout(float64(i)*0.1, l))
		}
		if v := m.Verdict(); v.State != protocol.Error || v.Detector != DetectorNonFinite {
			t.Errorf("%s: verdict %s/%s (%s), want a non-finite Error", name, v.State, v.Detector, v.Message)
		}
	}
	// A banner of asterisks is not a row.
	m := newMonitor(t, nil)
	for i, l := range []string{"iter  residual", "1  0.5", "2  0.25", "**************************", "3  0.125", "4  0.06"} {
		m.Observe(stdout(float64(i)*0.1, l))
	}
	if v := m.Verdict(); v.State != protocol.Normal {
		t.Errorf("banner: verdict %s/%s (%s), want Normal", v.State, v.Detector, v.Message)
	}
}
