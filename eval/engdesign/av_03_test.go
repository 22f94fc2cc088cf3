package engdesign

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
)

// The expected values of these tests come from scipy's freqz run on the same designs, built
// there with scipy's firwin.
func TestAV03(t *testing.T) {
	h250 := kaiserLowpass(251, 3725, 4.5)
	h300 := kaiserLowpass(301, 3725, 5)
	// ok is the Details of a design whose every check passed but those named in failed.
	ok := func(pass, stop, trans number, order float64, n int, failed ...string) map[string]any {
		d := map[string]any{
			"pass_ok":      check{pass, true, 20, 20},
			"stop_ok":      check{stop, true, 20, 20},
			"trans_ok":     check{trans, true, 10, 10},
			"order_ok":     check{order, true, 10, 10},
			"ord_coeff_ok": check{n, true, 10, 10},
			"stpbnd_ok":    check{3900.0, true, 20, 20},
			"decim_ok":     check{6.0, true, 10, 10},
		}
		return failing(d, failed)
	}
	type testCase struct {
		name            string
		order           float64
		coeffs          []float64
		stopband, decim float64
		want            *eval.Grade
	}
	tests := []testCase{
		{"Kaiser, order 250 (the rubric asks below 60, the grader 350)", 250, h250, 3900, 6, &eval.Grade{Score: 100, Passed: true,
			Details: ok(-0.26717316387218254, -47.90268480326564, -0.4853374294785796, 250, 251)}},
		{"Kaiser, order 300", 300, h300, 3900, 6, &eval.Grade{Score: 100, Passed: true,
			Details: ok(-0.11586268550719538, -54.24597611501732, -0.27117849470191313, 300, 301)}},
		{"a second passband at 12-20 kHz, above the 10 kHz the grader looks at", 300, add(h300, modulated(h300, 16000)), 3900, 6, &eval.Grade{Score: 100, Passed: true,
			Details: ok(-0.11722462333836968, -54.72911845267092, -0.27244942176233655, 300, 301)}},
		{"scaled by 0.6, 4.4 dB down", 300, scaled(h300, 0.6), 3900, 6, &eval.Grade{Score: 80,
			Details: ok(-4.552837677834324, -58.68295110734421, -4.708153487029043, 300, 301, "pass_ok")}},
		{"cut off at 3 kHz", 300, kaiserLowpass(301, 3000, 5), 3900, 6, &eval.Grade{Score: 80,
			Details: ok(-94.79130382792883, -66.31872295883629, -60.59831644946459, 300, 301, "pass_ok")}},
		{"a leak at 5-13 kHz", 300, add(h300, scaled(modulated(h300, 9000), 0.03)), 3900, 6, &eval.Grade{Score: 80,
			Details: ok(-0.1159878469449615, -30.367957623392435, -0.2712902029975273, 300, 301, "stop_ok")}},
		{"a Kaiser window of beta 2", 300, kaiserLowpass(301, 3600, 2), 3900, 6, &eval.Grade{Score: 80,
			Details: ok(-0.7284608124931848, -36.546338310032034, -1.5739775810451748, 300, 301, "stop_ok")}},
		{"5 % gain", 300, scaled(h300, 1.05), 3900, 6, &eval.Grade{Score: 90,
			Details: ok(0.3079232958915666, -53.822190133618705, 0.15260748669684762, 300, 301, "trans_ok")}},
		{"10 % gain", 300, scaled(kaiserLowpass(301, 3725, 4.5), 1.1), 3900, 6, &eval.Grade{Score: 90,
			Details: ok(0.7743457115457912, -48.89919149089244, 0.6430761380165095, 300, 301, "trans_ok")}},
		{"order 400", 400, kaiserLowpass(401, 3675, 5), 3900, 6, &eval.Grade{Score: 90,
			Details: ok(-0.0825507587933969, -59.28391561309297, -0.27450676221745335, 400, 401, "order_ok")}},
		{"order 360, zeros appended", 360, append(h300[:301:301], make([]float64, 60)...), 3900, 6, &eval.Grade{Score: 90,
			Details: ok(-0.11586268550719538, -54.24597611501732, -0.27117849470191313, 360, 361, "order_ok")}},
		{"order 299 for 301 coefficients", 299, h300, 3900, 6, &eval.Grade{Score: 90,
			Details: ok(-0.11586268550719538, -54.24597611501732, -0.27117849470191313, 299, 301, "ord_coeff_ok")}},
		{"order 300.5", 300.5, h300, 3900, 6, &eval.Grade{Score: 90,
			Details: ok(-0.11586268550719538, -54.24597611501732, -0.27117849470191313, 300.5, 301, "ord_coeff_ok")}},
	}
	for _, stopband := range []float64{4500, 3000} {
		d := ok(-0.11586268550719538, -54.24597611501732, -0.27117849470191313, 300, 301, "stpbnd_ok")
		d["stpbnd_ok"] = check{stopband, false, 0, 20}
		tests = append(tests, testCase{fmt.Sprintf("the stopband at %g Hz", stopband), 300, h300, stopband, 6, &eval.Grade{Score: 80, Details: d}})
	}
	for _, decim := range []float64{8, 5.5} {
		d := ok(-0.11586268550719538, -54.24597611501732, -0.27117849470191313, 300, 301, "decim_ok")
		d["decim_ok"] = check{decim, false, 0, 10}
		tests = append(tests, testCase{fmt.Sprintf("decimation by %g", decim), 300, h300, 3900, decim, &eval.Grade{Score: 90, Details: d}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			config := jsonConfig(t, map[string]any{"order": tt.order, "coeffs": tt.coeffs, "stpbnd": tt.stopband, "decim": tt.decim})
			got := gradeConfig(t, gradeAV03, config)
			if diff := cmp.Diff(tt.want, got, approxNumbers); diff != "" {
				t.Errorf("grade of %.200s (-want +got):\n%s", config, diff)
			}
		})
	}
}

func TestAV03Malformed(t *testing.T) {
	long := make([]float64, 1_000_000)
	long[0] = 1
	testMalformed(t, gradeAV03, []string{
		`{"order": 2, "coeffs": [0.25, 0.5, 0.25], "stpbnd": 3900}`,
		`{"order": 2, "coeffs": [0.25, 0.5, 0.25], "stpbnd": 3900, "decim": "6"}`,
		`{"order": 2, "coeffs": null, "stpbnd": 3900, "decim": 6}`,
		`{"order": 2, "coeffs": [0.25, Infinity, 0.25], "stpbnd": 3900, "decim": 6}`,
		`{"order": 2, "coeffs": [], "stpbnd": 3900, "decim": 6}`,
		`{"order": 2, "coeffs": {"0": 0.25}, "stpbnd": 3900, "decim": 6}`,
		jsonConfig(t, map[string]any{"order": 999_999, "coeffs": long, "stpbnd": 3900, "decim": 6}),
	})
}

func BenchmarkGradeAV03(b *testing.B) {
	config := jsonConfig(b, map[string]any{"order": 300, "coeffs": kaiserLowpass(301, 3725, 5), "stpbnd": 3900, "decim": 6})
	for b.Loop() {
		if g := gradeConfig(b, gradeAV03, config); !g.Passed {
			b.Fatalf("grade = %+v, want passed", g)
		}
	}
}

// kaiserLowpass is scipy's firwin(taps, cutoff, window=('kaiser', beta), fs=48000): the ideal
// low-pass response through a Kaiser window, scaled to unit gain at 0 Hz.
func kaiserLowpass(taps int, cutoff, beta float64) []float64 {
	h := make([]float64, taps)
	fc := cutoff / 24000
	mid := float64(taps-1) / 2
	sum := 0.0
	for n := range h {
		x := float64(n) - mid
		sinc := 1.0
		if x != 0 {
			sinc = math.Sin(math.Pi*fc*x) / (math.Pi * fc * x)
		}
		r := 2*float64(n)/float64(taps-1) - 1
		h[n] = fc * sinc * besselI0(beta*math.Sqrt(1-r*r)) / besselI0(beta)
		sum += h[n]
	}
	return scaled(h, 1/sum)
}

// besselI0 is the modified Bessel function of the first kind of order 0, by its power series.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; term > 1e-17*sum; k++ {
		term *= (x / 2 / float64(k)) * (x / 2 / float64(k))
		sum += term
	}
	return sum
}

// modulated is h shifted up and down by f Hz: h(n)·2cos(2πf(n-mid)/48000), linear phase kept.
func modulated(h []float64, f float64) []float64 {
	mid := float64(len(h)-1) / 2
	m := make([]float64, len(h))
	for n := range h {
		m[n] = h[n] * 2 * math.Cos(2*math.Pi*f*(float64(n)-mid)/48000)
	}
	return m
}

func scaled(h []float64, k float64) []float64 {
	s := make([]float64, len(h))
	for i := range h {
		s[i] = h[i] * k
	}
	return s
}

func add(x, y []float64) []float64 {
	s := make([]float64, len(x))
	for i := range x {
		s[i] = x[i] + y[i]
	}
	return s
}
