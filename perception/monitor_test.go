package perception

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

func TestMonitorInitialVerdict(t *testing.T) {
	m := newMonitor(t, nil)
	want := protocol.Verdict{State: protocol.Normal, Message: "no anomaly", Action: protocol.ActionContinue}
	if diff := cmp.Diff(want, m.Verdict()); diff != "" {
		t.Errorf("Verdict mismatch (-want +got):\n%s", diff)
	}
	if v := m.Observe(nil); v != nil {
		t.Errorf("Observe(nil) = %+v", v)
	}
	if v := m.Observe(stdout(0, "hello")); v != nil {
		t.Errorf("Observe(normal line) = %+v", v)
	}
}

// TestMonitorEmitsOnChange: a verdict per change of (state, detector), not per line.
func TestMonitorEmitsOnChange(t *testing.T) {
	const gib = 1 << 30
	m := newMonitor(t, nil)
	obs := []*protocol.Observation{
		stdout(0, "start"),
		stderr(1, "warning: matrix singular to machine precision, rcond = 1e-18"), // Warning (language)
		stderr(1, "warning: called from"),
		stderr(2, "warning: matrix singular to machine precision, rcond = 2e-18"), // same: no verdict
		resource(3, 1, 7*gib/2, 4*gib),                                            // resources Warning: the tie keeps language
		stdout(4, "x = 3"),
		resource(5, 1, 39*gib/10, 4*gib),                                                 // resources Error
		stderr(6, "error: out of memory or dimension too large for Octave's index type"), // latched: nothing
		tel(7, "x", math.NaN()),
	}
	got := feed(m, obs)
	want := []emitted{{1, protocol.Warning, DetectorLanguage}, {6, protocol.Error, DetectorResources}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
	}
	v := m.Verdict()
	if v.State != protocol.Error || v.Detector != DetectorResources || v.Action != protocol.ActionInterrupt {
		t.Errorf("latched verdict %+v", v)
	}
	// Memory falling back does not unlatch the Error.
	if v := m.Observe(resource(8, 1, 1*gib, 4*gib)); v != nil {
		t.Errorf("after the latch Observe = %+v", v)
	}
	if v := m.Verdict(); v.State != protocol.Error || v.Detector != DetectorResources {
		t.Errorf("verdict after memory fell: %+v", v)
	}
}

// TestMonitorEvidenceBound: at most five items, each at most 200 bytes.
func TestMonitorEvidenceBound(t *testing.T) {
	m := newMonitor(t, nil)
	long := "warning: " + strings.Repeat("é", 300)
	for i := range 10 {
		m.Observe(stderr(float64(i), long))
	}
	v := m.Verdict()
	if len(v.Evidence) != maxEvidence {
		t.Fatalf("%d evidence items, want %d", len(v.Evidence), maxEvidence)
	}
	for _, e := range v.Evidence {
		if len(e) > maxEvidenceLen || !strings.HasSuffix(e, "…") || !strings.HasPrefix(e, "stderr: warning: éé") {
			t.Errorf("evidence item of %d bytes: %q", len(e), e)
		}
	}
	// The returned verdict is a copy.
	v.Evidence[0] = "changed"
	if m.Verdict().Evidence[0] == "changed" {
		t.Error("Verdict shares its evidence with the monitor")
	}
}

func TestSeverityBands(t *testing.T) {
	tests := []struct {
		state protocol.VerdictState
		in    float64
		want  float64
	}{
		{protocol.Normal, 0.9, 0},
		{protocol.Warning, 0, 0.45},
		{protocol.Warning, 0.1, 0.3},
		{protocol.Warning, 0.9, 0.6},
		{protocol.Error, 0, 0.85},
		{protocol.Error, 0.5, 0.7},
		{protocol.Error, 2, 1},
	}
	for _, tt := range tests {
		if got := clampSeverity(tt.state, tt.in); got != tt.want {
			t.Errorf("clampSeverity(%s, %v) = %v, want %v", tt.state, tt.in, got, tt.want)
		}
	}
}

func TestInterrupts(t *testing.T) {
	normal := &protocol.Verdict{State: protocol.Normal}
	warning := &protocol.Verdict{State: protocol.Warning}
	errorV := &protocol.Verdict{State: protocol.Error}
	tests := []struct {
		policy                protocol.Hotfix
		normal, warning, errV bool
	}{
		{protocol.HotfixOff, false, false, false},
		{protocol.HotfixOnError, false, false, true},
		{protocol.HotfixOnWarning, false, true, true},
		{"", false, false, true},      // unset: the default, on_error
		{"bogus", false, false, true}, // unknown: the default
	}
	for _, tt := range tests {
		got := []bool{Interrupts(tt.policy, normal), Interrupts(tt.policy, warning), Interrupts(tt.policy, errorV), Interrupts(tt.policy, nil)}
		want := []bool{tt.normal, tt.warning, tt.errV, false}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Interrupts(%q, Normal/Warning/Error/nil) mismatch (-want +got):\n%s", tt.policy, diff)
		}
	}
}

func TestWindow(t *testing.T) {
	m := newMonitor(t, nil)
	if got := m.Window(); len(got) != 0 {
		t.Errorf("empty Window has %d observations", len(got))
	}
	var obs []*protocol.Observation
	for i := range 40 {
		obs = append(obs, stdout(float64(i), "line"))
	}
	feed(m, obs)
	got := m.Window()
	if len(got) != windowSize || got[0] != obs[40-windowSize] || got[windowSize-1] != obs[39] {
		t.Errorf("Window = %d observations starting at %v", len(got), got[0].Time)
	}
}

func TestConstraints(t *testing.T) {
	m := newMonitor(t, &Config{Watch: []string{"x < 1", "finite(y)"}})
	got := m.Constraints()
	if len(got) != 2 || got[0].String() != "x < 1" || got[1].Name != "y" {
		t.Errorf("Constraints() = %v", got)
	}
}

// TestMonitorManySeries: past maxSeries new series are not tracked, watched ones still are.
func TestMonitorManySeries(t *testing.T) {
	m := newMonitor(t, &Config{Watch: []string{"late < 1"}})
	for i := range maxSeries + 10 {
		m.Observe(tel(0, "s"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)), 1))
	}
	if len(m.series) != maxSeries {
		t.Errorf("%d series tracked, want %d", len(m.series), maxSeries)
	}
	if v := m.Observe(tel(1, "late", 2)); v == nil || v.Detector != DetectorConstraint {
		t.Errorf("watched series past the cap: %+v", v)
	}
}

func TestNewConfig(t *testing.T) {
	if _, err := New(&Config{Expect: Expectation{Silence: -time.Second}}); !errors.Is(err, ErrConfig) {
		t.Errorf("New with a negative silence: %v, want ErrConfig", err)
	}
	m := newMonitor(t, &Config{Expect: Expectation{Silence: time.Minute}})
	if m.th.Silence != time.Minute || m.th.SilenceError != 2*time.Minute {
		t.Errorf("declared silence of 1m: thresholds %v / %v, want 1m / 2m", m.th.Silence, m.th.SilenceError)
	}
	m = newMonitor(t, &Config{Thresholds: Thresholds{Silence: time.Minute, GrowingSwings: 100, SwingGrowth: 0.5}})
	if m.th.SilenceError != time.Minute || m.th.GrowingSwings != maxGrowingSwings || m.th.SwingGrowth != DefaultSwingGrowth {
		t.Errorf("thresholds not normalised: %+v", m.th)
	}
}
