package octave_test

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/protocol"
)

// The toolbox tests compare labmate's stepinfo, allmargin and iirnotch, run in the real Octave
// kernel in the sandbox, with values derived here, independently, from the MATLAB definitions:
// closed forms where they exist, else root finding on the analytic response or frequency
// response.

// octaveSession starts one Octave kernel with the control and signal packages loaded.
func octaveSession(t *testing.T) func(code string) map[string][]float64 {
	t.Helper()
	for _, p := range []string{"control", "signal"} {
		if m, _ := filepath.Glob("/usr/share/octave/packages/" + p + "-*"); len(m) == 0 {
			t.Fatalf("the Octave package %s is not installed (run scripts/deps)", p)
		}
	}
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	k, err := octave.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	run := func(code string) map[string][]float64 {
		t.Helper()
		r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: code, Timeout: time.Minute})
		if r.Err != nil || r.Res == nil || r.Res.Status != protocol.StatusOK {
			t.Fatalf("cell failed: %v %+v\n%s\n%s", r.Err, r.Res, code, r.Output())
		}
		if len(r.Stderr) > 0 {
			t.Errorf("stderr from %q:\n%s", code, strings.Join(r.Stderr, "\n"))
		}
		return parseValues(t, r.Stdout)
	}
	run("pkg load control; pkg load signal;")
	return run
}

// parseValues reads lines "name v1 v2 …" (printed by show) into a map.
func parseValues(t *testing.T, lines []string) map[string][]float64 {
	t.Helper()
	m := map[string][]float64{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		vals := []float64{}
		for _, s := range f[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			vals = append(vals, v)
		}
		m[f[0]] = vals
	}
	return m
}

// show is Octave code printing each field of struct variable v as "Field values…".
const show = `for f__ = fieldnames(S)'; printf("%s%s\n", f__{1}, sprintf(" %.17g", S.(f__{1}))); end`

func near(got, want, rel, abs float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= abs+rel*math.Abs(want)
}

// bisect finds a root of f in [a, b], where f changes sign.
func bisect(f func(float64) float64, a, b float64) float64 {
	fa := f(a)
	for range 200 {
		m := (a + b) / 2
		fm := f(m)
		if (fm < 0) == (fa < 0) {
			a, fa = m, fm
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// firstCrossing is the first t in (0, tmax] where y(t) reaches level, scanning a fine grid.
func firstCrossing(y func(float64) float64, level, tmax float64) float64 {
	const n = 200000
	prev := 0.0
	for i := 1; i <= n; i++ {
		t := tmax * float64(i) / n
		if y(t) >= level {
			return bisect(func(x float64) float64 { return y(x) - level }, prev, t)
		}
		prev = t
	}
	return math.NaN()
}

// settling is the last time in (0, tmax] where |y(t) - yf| = band, scanning back from tmax.
func settling(y func(float64) float64, yf, band, tmax float64) float64 {
	const n = 200000
	out := func(t float64) float64 { return math.Abs(y(t)-yf) - band }
	next := tmax
	for i := n - 1; i >= 0; i-- {
		t := tmax * float64(i) / n
		if out(t) > 0 {
			return bisect(out, t, next)
		}
		next = t
	}
	return 0
}

// stepChars are the characteristics of a continuous response y(t) with yinit 0 and yfinal yf,
// from the MATLAB definitions, with the peak time given (a closed form) or found on a grid.
type stepChars struct {
	rise, settle, overshoot, undershoot, peak, peakTime float64
}

func characteristics(y func(float64) float64, yf, st, lo, hi, tmax float64) stepChars {
	c := stepChars{
		rise:   firstCrossing(func(t float64) float64 { return y(t) / yf }, hi, tmax) - firstCrossing(func(t float64) float64 { return y(t) / yf }, lo, tmax),
		settle: settling(y, yf, st*math.Abs(yf), tmax),
	}
	const n = 400000
	minN, maxN := math.Inf(1), math.Inf(-1)
	for i := 0; i <= n; i++ {
		t := tmax * float64(i) / n
		v := y(t)
		if math.Abs(v) > c.peak {
			c.peak, c.peakTime = math.Abs(v), t
		}
		minN, maxN = math.Min(minN, v/yf), math.Max(maxN, v/yf)
	}
	c.overshoot = 100 * math.Max(0, maxN-1)
	c.undershoot = 100 * math.Max(0, -minN)
	return c
}

func TestStepinfo(t *testing.T) {
	run := octaveSession(t)
	// The step response of wn^2/(s^2 + 2 z wn s + wn^2), 0 < z < 1.
	second := func(z, wn float64) func(float64) float64 {
		wd := wn * math.Sqrt(1-z*z)
		return func(t float64) float64 {
			return 1 - math.Exp(-z*wn*t)*(math.Cos(wd*t)+z/math.Sqrt(1-z*z)*math.Sin(wd*t))
		}
	}
	type tc struct {
		name string
		code string // sets S
		want stepChars
		// tol: relative tolerance of the times and percentages
		tol float64
		// peak: compare Peak and PeakTime (not for responses that approach yfinal monotonically:
		// their peak is the end of the simulated window)
		peak bool
	}
	var cases []tc
	for _, z := range []float64{0.2, 0.4, 0.7} {
		for _, wn := range []float64{1, 3} {
			w := characteristics(second(z, wn), 1, 0.02, 0.1, 0.9, 60/wn)
			// Closed forms: the overshoot and the peak.
			w.overshoot = 100 * math.Exp(-z*math.Pi/math.Sqrt(1-z*z))
			w.peak = 1 + w.overshoot/100
			w.peakTime = math.Pi / (wn * math.Sqrt(1-z*z))
			cases = append(cases, tc{
				name: fmt.Sprintf("second-order z=%g wn=%g", z, wn),
				code: fmt.Sprintf("S = stepinfo(tf(%g, [1 %.17g %g]));", wn*wn, 2*z*wn, wn*wn),
				want: w, tol: 2e-4, peak: true,
			})
		}
	}
	for _, tau := range []float64{0.5, 2} {
		cases = append(cases, tc{
			name: fmt.Sprintf("first-order tau=%g", tau),
			code: fmt.Sprintf("S = stepinfo(tf(1, [%g 1]));", tau),
			want: stepChars{rise: tau * math.Log(9), settle: tau * math.Log(50), peak: 1},
			tol:  2e-4,
		})
	}
	cases = append(cases,
		tc{
			name: "first-order thresholds",
			code: `S = stepinfo(tf(1, [1 1]), "SettlingTimeThreshold", 0.05, "RiseTimeLimits", [0.05 0.95]);`,
			want: stepChars{rise: math.Log(19), settle: math.Log(20), peak: 1}, tol: 2e-4,
		},
		tc{
			name: "negative step",
			code: "S = stepinfo(tf(-3, [1 1]));",
			want: stepChars{rise: math.Log(9), settle: math.Log(50), peak: 3}, tol: 2e-4,
		},
		tc{
			// (1 - s)/(s + 1)^2: y = 1 - (1 + 2t) e^-t dips to 1 - 2 e^-0.5 at t = 0.5.
			name: "non-minimum phase",
			code: "S = stepinfo(tf([-1 1], [1 2 1]));",
			want: func() stepChars {
				w := characteristics(func(t float64) float64 { return 1 - (1+2*t)*math.Exp(-t) }, 1, 0.02, 0.1, 0.9, 40)
				w.undershoot = 100 * (2*math.Exp(-0.5) - 1)
				w.peak = 1
				return w
			}(),
			tol: 2e-4,
		},
		tc{
			name: "data with yfinal",
			code: "t = linspace(0, 30, 30001)'; z = 0.3; wd = sqrt(1 - z^2); y = 1 - exp(-z*t) .* (cos(wd*t) + z/wd*sin(wd*t)); S = stepinfo(y, t, 1);",
			want: func() stepChars {
				w := characteristics(second(0.3, 1), 1, 0.02, 0.1, 0.9, 30)
				w.overshoot = 100 * math.Exp(-0.3*math.Pi/math.Sqrt(1-0.09))
				w.peak = 1 + w.overshoot/100
				w.peakTime = math.Pi / math.Sqrt(1-0.09)
				return w
			}(),
			tol: 2e-4, peak: true,
		},
		tc{
			// An offset step from 2 to 5: every level is relative to yinit and |yfinal - yinit|.
			name: "data with yinit",
			code: "t = linspace(0, 10, 10001)'; y = 2 + 3 * (1 - exp(-t)); S = stepinfo(y, t, 5, 2);",
			want: stepChars{rise: math.Log(9), settle: math.Log(50), peak: 3 * (1 - math.Exp(-10)), peakTime: 10},
			tol:  2e-4, peak: true,
		},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := run(c.code + show)
			check := func(field string, want float64) {
				t.Helper()
				v := got[field]
				if len(v) != 1 || !near(v[0], want, c.tol, 1e-9) {
					t.Errorf("%s = %v, want %.10g", field, v, want)
				}
			}
			check("RiseTime", c.want.rise)
			check("SettlingTime", c.want.settle)
			check("Overshoot", c.want.overshoot)
			check("Undershoot", c.want.undershoot)
			if c.peak {
				check("Peak", c.want.peak)
				check("PeakTime", c.want.peakTime)
			}
			for _, f := range []string{"TransientTime", "SettlingMin", "SettlingMax"} {
				if len(got[f]) != 1 {
					t.Errorf("no %s: %v", f, got)
				}
			}
		})
	}

	t.Run("unstable", func(t *testing.T) {
		got := run("S = stepinfo(tf(1, [1 -1]));" + show)
		for f, v := range got {
			want := math.NaN()
			if f == "Peak" || f == "PeakTime" {
				want = math.Inf(1)
			}
			if len(v) != 1 || !near(v[0], want, 0, 0) {
				t.Errorf("%s = %v, want %g", f, v, want)
			}
		}
	})
	t.Run("discrete", func(t *testing.T) {
		// c2d of 1/(s+1) at T = 0.1: y_k = 1 - exp(-0.1 k), in band from k = ceil(10 ln 50) = 40.
		got := run("S = stepinfo(c2d(tf(1, [1 1]), 0.1));" + show)
		if v := got["SettlingTime"]; len(v) != 1 || !near(v[0], 4.0, 1e-9, 1e-9) {
			t.Errorf("SettlingTime = %v, want 4 (the first sample in the band)", v)
		}
		if v := got["Overshoot"]; len(v) != 1 || v[0] != 0 {
			t.Errorf("Overshoot = %v, want 0", v)
		}
	})
	t.Run("MIMO", func(t *testing.T) {
		got := run(`S = stepinfo(ss(tf({1, 2}, {[1 1], [1 2]}))); printf("size %d %d\n", size(S)); printf("settle %.17g %.17g\n", S(1).SettlingTime, S(2).SettlingTime);`)
		if v := got["size"]; len(v) != 2 || v[0] != 1 || v[1] != 2 {
			t.Errorf("size = %v, want 1 2", v)
		}
		// Both channels are first order: 1/(s+1) and 2/(s+2) = 1/(0.5 s + 1).
		if v := got["settle"]; len(v) != 2 || !near(v[0], math.Log(50), 2e-4, 0) || !near(v[1], 0.5*math.Log(50), 2e-4, 0) {
			t.Errorf("settling times = %v, want %g %g", v, math.Log(50), 0.5*math.Log(50))
		}
	})
	t.Run("bad input", func(t *testing.T) {
		opts := testutil.KernelOptions(t)
		opts.Workspace = t.TempDir()
		k, err := octave.Start(context.Background(), &opts)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		for code, want := range map[string]string{
			"stepinfo([1 2 3], [0 1])":                        "Y has 3 samples but T has 2",
			`stepinfo([0 1], [0 1], "SettlingTime", 0.1)`:     "unknown option 'SettlingTime'",
			`stepinfo([0 1], [0 1], "RiseTimeLimits", [1 0])`: "RiseTimeLimits must be",
		} {
			r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: code, Timeout: time.Minute})
			if r.Res == nil || r.Res.Status != protocol.StatusError || !strings.Contains(r.Res.Error, want) {
				t.Errorf("%s: %+v, want an error with %q", code, r.Res, want)
			}
		}
	})
}

// margins are a loop's crossings found on a dense frequency grid and refined by bisection.
type margins struct {
	gm, gw, pm, pw []float64
	stable         bool
}

// gridMargins finds the phase crossovers (L real negative) and gain crossovers (|L| = 1) of
// the frequency response l over (wlo, whi), on a logarithmic grid.
func gridMargins(l func(w float64) complex128, wlo, whi float64) margins {
	var m margins
	const n = 400000
	im := func(w float64) float64 { return imag(l(w)) }
	mag := func(w float64) float64 { return cmplx.Abs(l(w)) - 1 }
	prev := wlo
	for i := 1; i <= n; i++ {
		w := wlo * math.Pow(whi/wlo, float64(i)/n)
		if (im(prev) < 0) != (im(w) < 0) {
			x := bisect(im, prev, w)
			if v := l(x); real(v) < 0 {
				m.gm, m.gw = append(m.gm, 1/cmplx.Abs(v)), append(m.gw, x)
			}
		}
		if (mag(prev) < 0) != (mag(w) < 0) {
			x := bisect(mag, prev, w)
			p := cmplx.Phase(l(x))*180/math.Pi + 180
			p = math.Mod(p+180+720, 360) - 180
			m.pm, m.pw = append(m.pm, p), append(m.pw, x)
		}
		prev = w
	}
	return m
}

// poly evaluates a polynomial (coefficients from the highest power) at x.
func poly(c []float64, x complex128) complex128 {
	var v complex128
	for _, a := range c {
		v = v*x + complex(a, 0)
	}
	return v
}

// closedLoopStable says whether the roots of num + den (the closed loop's poles), the
// eigenvalues of its companion matrix, lie in the open left half-plane or inside the unit circle.
func closedLoopStable(num, den []float64, discrete bool) bool {
	n := max(len(num), len(den))
	p := make([]float64, n)
	for i, a := range num {
		p[n-len(num)+i] += a
	}
	for i, a := range den {
		p[n-len(den)+i] += a
	}
	deg := n - 1
	c := mat.NewDense(deg, deg, nil)
	for j := range deg {
		c.Set(0, j, -p[j+1]/p[0])
	}
	for i := 1; i < deg; i++ {
		c.Set(i, i-1, 1)
	}
	var e mat.Eigen
	if !e.Factorize(c, mat.EigenNone) {
		panic("eigen decomposition failed")
	}
	for _, r := range e.Values(nil) {
		if (discrete && cmplx.Abs(r) >= 1) || (!discrete && real(r) >= 0) {
			return false
		}
	}
	return true
}

func TestAllmargin(t *testing.T) {
	run := octaveSession(t)
	type tc struct {
		name     string
		num, den []float64
		ts       float64 // 0: continuous
		wantGM   int     // how many gain margins the grid must find (a check of the test itself)
		wantPM   int
	}
	cases := []tc{
		{name: "K=2/(s(s+1)(s+2))", num: []float64{2}, den: []float64{1, 3, 2, 0}, wantGM: 1, wantPM: 1},
		{name: "K=20/(s(s+1)(s+2)) unstable", num: []float64{20}, den: []float64{1, 3, 2, 0}, wantGM: 1, wantPM: 1},
		{name: "2/(s+1) infinite gain margin", num: []float64{2}, den: []float64{1, 1}, wantGM: 0, wantPM: 1},
		{name: "resonance: two gain crossovers", num: []float64{0.5}, den: []float64{1, 1.05, 1.05, 1}, wantGM: 1, wantPM: 2},
		{name: "notch zero: two phase crossovers", num: []float64{0.5, 0.05, 2}, den: []float64{1, 3, 3, 1, 0}, wantGM: 2, wantPM: 1},
		{name: "discrete 0.5/(z(z-0.5))", num: []float64{0.5}, den: []float64{1, -0.5, 0}, ts: 0.1, wantGM: 1, wantPM: 0},
		{name: "discrete 1.2/(z(z-0.5))", num: []float64{1.2}, den: []float64{1, -0.5, 0}, ts: 0.1, wantGM: 1, wantPM: 1},
	}
	vec := func(v []float64) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l func(float64) complex128
			var want margins
			if c.ts == 0 {
				l = func(w float64) complex128 {
					s := complex(0, w)
					return poly(c.num, s) / poly(c.den, s)
				}
				want = gridMargins(l, 1e-3, 1e3)
			} else {
				l = func(w float64) complex128 {
					z := cmplx.Exp(complex(0, w*c.ts))
					return poly(c.num, z) / poly(c.den, z)
				}
				want = gridMargins(l, 1e-3, math.Pi/c.ts*(1-1e-12))
			}
			if len(want.gm) != c.wantGM || len(want.pm) != c.wantPM {
				t.Fatalf("the reference grid found %d gain and %d phase margins, the case expects %d and %d", len(want.gm), len(want.pm), c.wantGM, c.wantPM)
			}
			sys := fmt.Sprintf("tf(%s, %s)", vec(c.num), vec(c.den))
			if c.ts != 0 {
				sys = fmt.Sprintf("tf(%s, %s, %g)", vec(c.num), vec(c.den), c.ts)
			}
			got := run("S = allmargin(" + sys + ");" + show)
			same := func(field string, g, w []float64, rel float64) {
				t.Helper()
				if len(g) != len(w) {
					t.Errorf("%s = %v, want %v", field, g, w)
					return
				}
				for i := range g {
					if !near(g[i], w[i], rel, 1e-9) {
						t.Errorf("%s = %v, want %v", field, g, w)
						return
					}
				}
			}
			same("GainMargin", got["GainMargin"], want.gm, 1e-7)
			same("GMFrequency", got["GMFrequency"], want.gw, 1e-7)
			same("PhaseMargin", got["PhaseMargin"], want.pm, 1e-7)
			same("PMFrequency", got["PMFrequency"], want.pw, 1e-7)
			same("DMFrequency", got["DMFrequency"], want.pw, 1e-7)
			dm := make([]float64, len(want.pm))
			for i, p := range want.pm {
				dm[i] = math.Mod(p+360, 360) * math.Pi / 180 / want.pw[i]
				if c.ts != 0 {
					dm[i] /= c.ts
				}
			}
			same("DelayMargin", got["DelayMargin"], dm, 1e-7)
			stable := 0.0
			if closedLoopStable(c.num, c.den, c.ts != 0) {
				stable = 1
			}
			if v := got["Stable"]; len(v) != 1 || v[0] != stable {
				t.Errorf("Stable = %v, want %v", v, stable)
			}
		})
	}
	t.Run("closed form K/(s(s+1)(s+2))", func(t *testing.T) {
		// The phase is -180 where w^2 = 2; there |L| = K/6.
		got := run("S = allmargin(tf(2, [1 3 2 0]));" + show)
		if v := got["GainMargin"]; len(v) != 1 || !near(v[0], 3, 1e-10, 0) {
			t.Errorf("GainMargin = %v, want 3", v)
		}
		if v := got["GMFrequency"]; len(v) != 1 || !near(v[0], math.Sqrt2, 1e-10, 0) {
			t.Errorf("GMFrequency = %v, want sqrt(2)", v)
		}
	})
	t.Run("agrees with margin", func(t *testing.T) {
		got := run(`L = tf(2, [1 3 2 0]); S = allmargin(L); [g, p, wg, wp] = margin(L); printf("d %.17g %.17g\n", S.GainMargin - g, S.PhaseMargin - p);`)
		if v := got["d"]; len(v) != 2 || math.Abs(v[0]) > 1e-6 || math.Abs(v[1]) > 1e-4 {
			t.Errorf("allmargin - margin = %v", v)
		}
	})
}

func TestIirnotch(t *testing.T) {
	run := octaveSession(t)
	cases := []struct{ w0, bw, ab float64 }{
		{0.3, 0.05, 0}, {0.12, 0.01, 0}, {0.5, 0.2, 0}, {0.8, 0.1, 0}, {60.0 / 500, 60.0 / 500 / 35, 0}, {0.4, 0.1, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("w0=%g bw=%g ab=%g", c.w0, c.bw, c.ab), func(t *testing.T) {
			call := fmt.Sprintf("[b, a] = iirnotch(%.17g, %.17g);", c.w0, c.bw)
			ab := 10 * math.Log10(2)
			if c.ab != 0 {
				call = fmt.Sprintf("[b, a] = iirnotch(%.17g, %.17g, %.17g);", c.w0, c.bw, c.ab)
				ab = c.ab
			}
			got := run(call + ` printf("b%s\na%s\n", sprintf(" %.17g", b), sprintf(" %.17g", a));`)
			b, a := got["b"], got["a"]
			if len(b) != 3 || len(a) != 3 || a[0] != 1 {
				t.Fatalf("b = %v, a = %v: want a second-order section with a(1) = 1", b, a)
			}
			h := func(w float64) complex128 {
				z := cmplx.Exp(complex(0, w))
				return poly(b, z) / poly(a, z)
			}
			// The zeros: on the unit circle at exp(+-j w0 pi).
			disc := cmplx.Sqrt(complex(b[1]*b[1]-4*b[0]*b[2], 0))
			for _, z := range []complex128{(complex(-b[1], 0) + disc) / complex(2*b[0], 0), (complex(-b[1], 0) - disc) / complex(2*b[0], 0)} {
				if math.Abs(cmplx.Abs(z)-1) > 1e-12 || math.Abs(math.Abs(cmplx.Phase(z))-c.w0*math.Pi) > 1e-9 {
					t.Errorf("zero %v: want |z| = 1 at angle +-%g", z, c.w0*math.Pi)
				}
			}
			// Stable poles, unity gain at DC and Nyquist.
			if r := math.Sqrt(math.Abs(a[2])); r >= 1 {
				t.Errorf("pole radius %g >= 1", r)
			}
			for _, w := range []float64{0, math.Pi} {
				if g := cmplx.Abs(h(w)); math.Abs(g-1) > 1e-12 {
					t.Errorf("|H| at %g rad/sample = %g, want 1", w, g)
				}
			}
			// The band edges: |H| = 10^(-ab/20) on either side of w0, bw*pi apart.
			gb := math.Pow(10, -ab/20)
			f := func(w float64) float64 { return cmplx.Abs(h(w)) - gb }
			lo := bisect(f, 0, c.w0*math.Pi)
			hi := bisect(f, c.w0*math.Pi, math.Pi)
			if d := hi - lo; math.Abs(d-c.bw*math.Pi) > 1e-9 {
				t.Errorf("bandwidth at -%.4g dB = %.12g rad/sample, want %.12g", ab, d, c.bw*math.Pi)
			}
		})
	}
	t.Run("bad input", func(t *testing.T) {
		opts := testutil.KernelOptions(t)
		opts.Workspace = t.TempDir()
		k, err := octave.Start(context.Background(), &opts)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "[b, a] = iirnotch(60, 2);", Timeout: time.Minute})
		if r.Res == nil || r.Res.Status != protocol.StatusError || !strings.Contains(r.Res.Error, "W0 must be a scalar in (0, 1)") {
			t.Errorf("iirnotch(60, 2): %+v, want the W0 range error", r.Res)
		}
	})
}

// TestToolboxPrecedence checks that labmate's functions are found when nothing else defines
// them, and that a function of the same name elsewhere on the path wins.
func TestToolboxPrecedence(t *testing.T) {
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	mine := filepath.Join(opts.Workspace, "mine")
	if err := os.Mkdir(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "iirnotch.m"), []byte("function [b, a] = iirnotch (w0, bw)\n  b = 42; a = 1;\nendfunction\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := octave.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	var code strings.Builder
	code.WriteString("pkg load control; pkg load signal;\n")
	for _, f := range octave.Toolbox {
		fmt.Fprintf(&code, "printf(\"%s %%d %%s\\n\", exist(\"%s\"), which(\"%s\"));\n", f, f, f)
	}
	code.WriteString("addpath(\"mine\"); [b, a] = iirnotch(0.5, 0.1); printf(\"user %g\\n\", b);\n")
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: code.String(), Timeout: time.Minute})
	if r.Err != nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("%v %+v\n%s", r.Err, r.Res, r.Output())
	}
	out := strings.Join(r.Stdout, "\n")
	for _, f := range octave.Toolbox {
		if !strings.Contains(out, f+" 2 ") || !strings.Contains(out, "/toolbox/"+f+".m") {
			t.Errorf("%s: want exist 2 from labmate's toolbox/\n%s", f, out)
		}
	}
	if !strings.Contains(out, "user 42") {
		t.Errorf("a user's iirnotch on the path did not take precedence:\n%s", out)
	}
}
