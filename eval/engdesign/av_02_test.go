package engdesign

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
)

// The expected values of these tests come from scipy's freqz run on the same designs, built
// there with numpy.
func TestAV02(t *testing.T) {
	n99 := notch(120, 0.99)
	// ok is the Details of a design whose every check passed but those named in failed.
	ok := func(lower, upper, target number, order float64, num, den int, failed ...string) map[string]any {
		d := map[string]any{
			"lower_ok":     check{lower, true, 20, 20},
			"upper_ok":     check{upper, true, 20, 20},
			"target_ok":    check{target, true, 40, 40},
			"order_ok":     check{order, true, 10, 10},
			"ord_coeff_ok": check{map[string]int{"numerator": num, "denominator": den}, true, 10, 10},
		}
		return failing(d, failed)
	}
	tests := []struct {
		name   string
		order  float64
		filter iir
		want   *eval.Grade
	}{
		{"the task's reference solution", 8, iir{
			b: []float64{0.971987554400379, -7.23074141988472, 24.0593587574556, -46.7018447646062, 57.8028554708087, -46.7018447646062, 24.0593587574556, -7.23074141988472, 0.971987554400379},
			a: []float64{1, -7.38629070277517, 24.4025053599328, -47.0320991049601, 57.7993568733735, -46.3686717935595, 23.7189260553057, -7.07811076768760, 0.944759805909239},
		}, &eval.Grade{Score: 100, Passed: true, Details: ok(-0.22299374712257, -0.2229330461807726, -97.29963475609843, 8, 9, 9)}},
		{"a notch, poles at radius 0.99", 2, n99, &eval.Grade{Score: 100, Passed: true,
			Details: ok(-1.4848983226510228, -1.4848340643341695, -60.03816915215356, 2, 3, 3)}},
		{"two notches, poles at radius 0.995", 4, cascade(notch(120, 0.995), notch(120, 0.995)), &eval.Grade{Score: 100, Passed: true,
			Details: ok(-0.8396190919481518, -0.8395871198732789, -107.99945210896729, 4, 5, 5)}},
		{"a second notch at 60 Hz", 4, cascade(n99, notch(60, 0.99)), &eval.Grade{Score: 80,
			Details: ok(-16.790896178504486, -1.4719825632411125, -60.02721234288487, 4, 5, 5, "lower_ok")}},
		{"a second notch at 30 Hz", 4, cascade(n99, notch(30, 0.99)), &eval.Grade{Score: 80,
			Details: ok(-21.935488339596844, -1.393392015983257, -59.947414135743095, 4, 5, 5, "lower_ok")}},
		{"a second notch at 200 Hz", 4, cascade(n99, notch(200, 0.99)), &eval.Grade{Score: 80,
			Details: ok(-1.4892722114115475, -18.351154340773522, -60.04332102238375, 4, 5, 5, "upper_ok")}},
		{"a second notch at 180 Hz", 4, cascade(n99, notch(180, 0.99)), &eval.Grade{Score: 80,
			Details: ok(-1.4931736726148814, -17.534210932267403, -60.0482492727243, 4, 5, 5, "upper_ok")}},
		{"the notch at 121 Hz", 2, notch(121, 0.99), &eval.Grade{Score: 60,
			Details: ok(-1.0813528138637398, -2.1421704488909468, -10.500142113376752, 2, 3, 3, "target_ok")}},
		{"zeros at radius 0.999, a 20 dB notch", 2, notchZeros(120, 0.99, 0.999), &eval.Grade{Score: 60,
			Details: ok(-1.467370006082653, -1.4673063846153036, -20.033921345172544, 2, 3, 3, "target_ok")}},
		{"order 51", 51, n99.padded(52, 52), &eval.Grade{Score: 90,
			Details: ok(-1.4848983226510228, -1.4848340643341695, -60.03816915215356, 51, 52, 52, "order_ok")}},
		{"order 55 (the rubric allows below 60, the grader 50)", 55, n99.padded(56, 56), &eval.Grade{Score: 90,
			Details: ok(-1.4848983226510228, -1.4848340643341695, -60.03816915215356, 55, 56, 56, "order_ok")}},
		{"order 3 for three coefficients", 3, n99, &eval.Grade{Score: 90,
			Details: ok(-1.4848983226510228, -1.4848340643341695, -60.03816915215356, 3, 3, 3, "ord_coeff_ok")}},
		{"a numerator of four coefficients for order 2", 2, n99.padded(4, 3), &eval.Grade{Score: 90,
			Details: ok(-1.4848983226510228, -1.4848340643341695, -60.03816915215356, 2, 4, 3, "ord_coeff_ok")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			config := jsonConfig(t, map[string]any{"order": tt.order, "coeffs_numerator": tt.filter.b, "coeffs_denominator": tt.filter.a})
			got := gradeConfig(t, gradeAV02, config)
			if diff := cmp.Diff(tt.want, got, approxNumbers); diff != "" {
				t.Errorf("grade of %s (-want +got):\n%s", config, diff)
			}
		})
	}
}

func TestAV02Malformed(t *testing.T) {
	n99 := notch(120, 0.99)
	long := make([]float64, 1_000_000)
	long[0] = 1
	testMalformed(t, gradeAV02, []string{
		`{"order": 2, "coeffs_numerator": [1, -1.6, 1]}`,
		`{"order": null, "coeffs_numerator": [1, -1.6, 1], "coeffs_denominator": [1, -1.5, 0.98]}`,
		`{"order": 2, "coeffs_numerator": "1 -1.6 1", "coeffs_denominator": [1, -1.5, 0.98]}`,
		`{"order": 2, "coeffs_numerator": [1, "x", 1], "coeffs_denominator": [1, -1.5, 0.98]}`,
		`{"order": 2, "coeffs_numerator": [1, NaN, 1], "coeffs_denominator": [1, -1.5, 0.98]}`,
		`{"order": 2, "coeffs_numerator": [], "coeffs_denominator": [1, -1.5, 0.98]}`,
		jsonConfig(t, map[string]any{"order": 999_999, "coeffs_numerator": long, "coeffs_denominator": long}),
		jsonConfig(t, map[string]any{"order": 2, "coeffs_numerator": n99.b, "coeffs_denominator": long}),
	})
	// A denominator of zeros is graded as the original grades it: |H| is infinite everywhere, so
	// both passbands pass.
	inf := number(math.Inf(1))
	want := &eval.Grade{Score: 60, Details: map[string]any{
		"lower_ok":     check{inf, true, 20, 20},
		"upper_ok":     check{inf, true, 20, 20},
		"target_ok":    check{inf, false, 0, 40},
		"order_ok":     check{2.0, true, 10, 10},
		"ord_coeff_ok": check{map[string]int{"numerator": 3, "denominator": 3}, true, 10, 10},
	}}
	got := gradeConfig(t, gradeAV02, `{"order": 2, "coeffs_numerator": [1, 0, 1], "coeffs_denominator": [0, 0, 0]}`)
	if diff := cmp.Diff(want, got, approxNumbers); diff != "" {
		t.Errorf("grade of a zero denominator (-want +got):\n%s", diff)
	}
}

func BenchmarkGradeAV02(b *testing.B) {
	n99 := notch(120, 0.99)
	config := jsonConfig(b, map[string]any{"order": 2, "coeffs_numerator": n99.b, "coeffs_denominator": n99.a})
	for b.Loop() {
		if g := gradeConfig(b, gradeAV02, config); !g.Passed {
			b.Fatalf("grade = %+v, want passed", g)
		}
	}
}

// iir is a digital filter H(z) = b(z⁻¹)/a(z⁻¹).
type iir struct{ b, a []float64 }

// notch is a notch filter at f0 Hz for sampling at 2 kHz: zeros at radius 0.99999, so that the
// notch is 60 dB or so, not a rounding error, and poles at radius r; unit gain at 0 Hz.
func notch(f0, r float64) iir { return notchZeros(f0, r, 0.99999) }

// notchZeros is a notch filter with its zeros at radius rho.
func notchZeros(f0, r, rho float64) iir {
	w := 2 * math.Pi * f0 / 2000
	b := []float64{1, -2 * rho * math.Cos(w), rho * rho}
	a := []float64{1, -2 * r * math.Cos(w), r * r}
	gain := (a[0] + a[1] + a[2]) / (b[0] + b[1] + b[2])
	for i := range b {
		b[i] *= gain
	}
	return iir{b, a}
}

// cascade is the filters in series.
func cascade(fs ...iir) iir {
	c := iir{[]float64{1}, []float64{1}}
	for _, f := range fs {
		c = iir{convolve(c.b, f.b), convolve(c.a, f.a)}
	}
	return c
}

func convolve(x, y []float64) []float64 {
	z := make([]float64, len(x)+len(y)-1)
	for i := range x {
		for j := range y {
			z[i+j] += x[i] * y[j]
		}
	}
	return z
}

// padded is the same filter with zeros appended to b and a up to nb and na coefficients.
func (f iir) padded(nb, na int) iir {
	return iir{append(f.b[:len(f.b):len(f.b)], make([]float64, nb-len(f.b))...), append(f.a[:len(f.a):len(f.a)], make([]float64, na-len(f.a))...)}
}
