package perception

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

// zigzag draws a triangle wave: from 0 up by swings[0], down by swings[1], … with per samples
// per swing.
func zigzag(per int, swings ...float64) []float64 {
	out := []float64{0}
	x, dir := 0.0, 1.0
	for _, s := range swings {
		for i := 1; i <= per; i++ {
			out = append(out, x+dir*s*float64(i)/float64(per))
		}
		x += dir * s
		dir = -dir
	}
	return out
}

// swingsOf returns n swings starting at a and multiplied by the ratios in turn (cycling).
func swingsOf(a float64, n int, ratios ...float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = a
		a *= ratios[i%len(ratios)]
	}
	return out
}

func concat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestOscillation(t *testing.T) {
	steady := swingsOf(2, 6, 1)
	tests := []struct {
		name   string
		vs     []float64
		oscErr bool // a growing-oscillation Error is expected
	}{
		// The swing ratio at its threshold (1.2), from the first swing on.
		{"growth just below 1.2", zigzag(5, swingsOf(1, 20, 1.1999)...), false},
		{"growth just above 1.2", zigzag(5, swingsOf(1, 20, 1.2001)...), true},
		{"unstable loop after a steady phase", zigzag(5, concat(steady, swingsOf(2, 8, 1.5))...), true},
		{"growth for two swings only", zigzag(5, concat(steady, []float64{3, 4.5, 4.5, 4.5, 4.5})...), false},
		// Steadiness: the ratios may differ by a factor 1.5 at most.
		{"ratios 1.3 and 1.9 alternating", zigzag(5, concat(steady, swingsOf(2, 10, 1.3, 1.9))...), true},
		{"ratios 1.3 and 2.0 alternating", zigzag(5, concat(steady, swingsOf(2, 10, 1.3, 2.0))...), false},
		// Deceleration: the newest ratio's excess over 1 at least half the oldest's.
		{"slowing 1.8, 1.5, 1.45", zigzag(5, concat(steady, []float64{2, 3.6, 5.4, 7.83, 7.83, 7.83})...), true},
		{"slowing 1.8, 1.4, 1.3", zigzag(5, concat(steady, []float64{2, 3.6, 5.04, 6.552, 6.552, 6.552})...), false},
		// History: the newest swing must be twice any swing before the four judged.
		{"growth below an earlier transient", zigzag(5, concat(swingsOf(20, 6, 1), []float64{11}, swingsOf(2, 6, 1.5))...), false},
		{"growth past an earlier transient", zigzag(5, concat(swingsOf(20, 6, 1), []float64{11}, swingsOf(2, 12, 1.5))...), true},
		{"steady", zigzag(5, swingsOf(2, 40, 1)...), false},
		{"damped", zigzag(5, swingsOf(2, 40, 0.8)...), false},
		// Build-up to a steady amplitude: a driven oscillator from rest, 1 - q^k.
		{"build-up q=0.8", buildUp(0.8, 300), false},
		{"build-up q=0.9", buildUp(0.9, 300), false},
		{"build-up q=0.97", buildUp(0.97, 600), false},
		// Sign-alternating growth (explicit Euler past its stability limit).
		{"period-2 growth", geometric(1, -3, 30), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := oscillationAlarm(t, tt.vs) >= 0
			if got != tt.oscErr {
				t.Errorf("growing oscillation = %v, want %v", got, tt.oscErr)
			}
		})
	}
}

// buildUp is a sampled (1 - q^(n/10)) sin(πn/10): an oscillation building up to amplitude 1.
func buildUp(q float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = (1 - math.Pow(q, float64(i)/10)) * math.Sin(math.Pi*(float64(i)+0.5)/10)
	}
	return out
}

// oscillationAlarm is the index of the sample on which the oscillation detector fired, or -1.
func oscillationAlarm(t *testing.T, vs []float64) int {
	t.Helper()
	m := newMonitor(t, nil)
	for i, o := range seriesObs("y", 0.01, vs) {
		m.Observe(o)
		if m.slots[detOscillation].state == protocol.Error {
			return i
		}
	}
	return -1
}

// TestOscillationNoise feeds stationary and non-stationary noise, with and without a steady
// oscillation under it: never a growing oscillation.
func TestOscillationNoise(t *testing.T) {
	gens := map[string]func(r *rand.Rand) []float64{
		"gaussian": func(r *rand.Rand) []float64 {
			out := make([]float64, 1000)
			for i := range out {
				out[i] = 5 + r.NormFloat64()
			}
			return out
		},
		"AR(1)": func(r *rand.Rand) []float64 {
			out, x := make([]float64, 1000), 0.0
			for i := range out {
				x = 0.9*x + r.NormFloat64()
				out[i] = x
			}
			return out
		},
		"sine plus noise": func(r *rand.Rand) []float64 {
			out := make([]float64, 1000)
			for i := range out {
				out[i] = math.Sin(0.3*float64(i)) + 0.5*r.NormFloat64()
			}
			return out
		},
	}
	for name, gen := range gens {
		for seed := range uint64(20) {
			vs := gen(rand.New(rand.NewPCG(seed, 1)))
			if i := oscillationAlarm(t, vs); i >= 0 {
				t.Errorf("%s, seed %d: growing oscillation at sample %d", name, seed, i)
			}
		}
	}
}

// TestOscillationNoisyGrowth: noise riding on a growing oscillation does not hide it.
func TestOscillationNoisyGrowth(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vs := make([]float64, 400)
	for i := range vs {
		amp := math.Pow(1.5, float64(i)/10) // ×1.5 per half-period of 10 samples
		vs[i] = amp*math.Sin(math.Pi*(float64(i)+0.5)/10) + 0.02*amp*r.NormFloat64()
	}
	i := oscillationAlarm(t, vs)
	if i < 0 || i > 120 {
		t.Errorf("growing oscillation at sample %d, want within 12 half-periods", i)
	}
}

// TestOscillationRecorded replays series recorded from real kernels running the test corpus.
func TestOscillationRecorded(t *testing.T) {
	tests := []struct {
		file     string
		from, to int // the alarm's sample index must be in [from, to]; -1, -1 for none
	}{
		// Retuned at sample 79; the loop's swings grow ×1.7 per half-period (≈ 17 samples) from
		// then on: eight swings (four of history, four judged) take ≈ 7 half-periods.
		{"f_pid_unstable_m_y.txt", 79, 79 + 8*17},
		{"f_pid_unstable_py_level.txt", 0, 400},
		{"h_pid_good_m_y.txt", -1, -1},
		{"h_pid_good_py_temperature.txt", -1, -1},
		{"h_damped_oscillator_m_x.txt", -1, -1},
		{"h_damped_pendulum_py_theta.txt", -1, -1},
		{"h_symplectic_harmonic_m_x.txt", -1, -1},
		{"h_lotka_volterra_m_prey.txt", -1, -1},
		{"h_ou_setpoint_m_temperature.txt", -1, -1},
		{"h_kalman_setpoint_py_reading.txt", -1, -1},
		{"h_fft_filter_py_snr_gain_db.txt", -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			i := oscillationAlarm(t, readSeries(t, tt.file))
			if i < tt.from || i > tt.to {
				t.Errorf("growing oscillation at sample %d, want in [%d, %d]", i, tt.from, tt.to)
			}
		})
	}
}

// TestOscillationEvidence checks the verdict of the recorded unstable loop.
func TestOscillationEvidence(t *testing.T) {
	m := newMonitor(t, nil)
	var got []emitted
	for i, o := range seriesObs("y", 0.0125, readSeries(t, "f_pid_unstable_m_y.txt")) {
		if v := m.Observe(o); v != nil {
			got = append(got, emitted{i, v.State, v.Detector})
		}
	}
	if diff := cmp.Diff([]emitted{{oscillationAlarm(t, readSeries(t, "f_pid_unstable_m_y.txt")), protocol.Error, DetectorOscillation}}, got); diff != "" {
		t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
	}
	v := m.Verdict()
	if !strings.HasPrefix(v.Message, "growing oscillation in y: 3 swings in a row grew ×1.") || len(v.Evidence) != 1 || !strings.HasPrefix(v.Evidence[0], "y swing ") {
		t.Errorf("verdict %+v", v)
	}
}

// readSeries reads testdata/series/name: one number a line, # comments.
func readSeries(t *testing.T, name string) []float64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "series", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' {
			continue
		}
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
