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
		got, ok := printedNonFinite(tt.line)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("printedNonFinite(%q) = %q, %v; want %q", tt.line, got, ok, tt.want)
		}
	}
}

func TestNonFiniteSamples(t *testing.T) {
	tests := []struct {
		name string
		obs  *protocol.Observation
		want string // the evidence, "" for none
	}{
		{"finite", tel(0, "x", 1e308), ""},
		{"NaN", tel(0, "x", math.NaN()), "x = NaN"},
		{"+Inf", tel(0, "x", math.Inf(1)), "x = +Inf"},
		{"-Inf", tel(0, "x", math.Inf(-1)), "x = -Inf"},
		{"finite vector", telVec(0, "v", 1, -1e300, 3), ""},
		{"vector", telVec(0, "v", 1, 2, math.NaN()), "v[2] = NaN"},
	}
	for _, tt := range tests {
		f, ok := nonFinite{}.sample(tt.obs.Sample)
		if got := f.evidence; ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s: evidence %q, %v; want %q", tt.name, got, ok, tt.want)
		}
		if ok && f.state != protocol.Error {
			t.Errorf("%s: state %s, want Error", tt.name, f.state)
		}
	}
}

func TestNonFiniteStream(t *testing.T) {
	m := newMonitor(t, nil)
	obs := []*protocol.Observation{
		stdout(0, "t=2.22 prey=0.01 predator=3.1 growth_rate=-0.5"),
		stdout(0.1, "NaN count: 0"),
		stdout(0.2, "t=2.24 prey=0 predator=NaN growth_rate=NaN"),
		tel(0.2, "predator", math.NaN()),
	}
	got := feed(m, obs)
	if diff := cmp.Diff([]emitted{{2, protocol.Error, DetectorNonFinite}}, got); diff != "" {
		t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
	}
	want := []string{"stdout: t=2.24 prey=0 predator=NaN growth_rate=NaN", "predator = NaN"}
	if diff := cmp.Diff(want, m.Verdict().Evidence); diff != "" {
		t.Errorf("evidence mismatch (-want +got):\n%s", diff)
	}
}
