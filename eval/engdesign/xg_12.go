package engdesign

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/labmate/labmate/eval"
)

// XG_12: a notch Kn = (s² + f_n omega_n √alpha_n s + omega_n²)/(s² + f_n omega_n/√alpha_n s +
// omega_n²) that stabilises the loop-shaping controller C = kg Kb of the resonant plant
// G(s) = 0.5/s · 169/(s² + 0.26 s + 169) at the bandwidth 3 rad/s. The original notch_eval.m
// (MATLAB) scores the answer's C coefficients against its own (norm of the difference < 0.1:
// numerator 20 points, denominator 20), then takes allmargin of its own C with the answer's
// notch, L2 = G C Kn: a stable closed loop earns 20 and only then are the margins scored,
// max(PhaseMargin) ≥ 60° 20 and max(GainMargin) ≥ 2 20 (an absolute ratio, 6 dB, where the
// prompt asks 2 dB; the max over several crossings is lenient). The design passes with 100.
//
// Octave's control package has no allmargin: the margins here are every crossing of L2(jω)
// found from its polynomials (the phase crossovers where Im L = 0 and Re L < 0, with the one at
// ω = 0 that MATLAB lists as a gain margin 0 when the loop's two integrators put the phase at
// −180°, and the gain crossovers where |L| = 1), and stability is the roots of the closed loop's
// characteristic polynomial. On the 27 notches in EngDesign's logs they agree with MATLAB's:
// the same verdicts, margins within 6e-5 relative (it is MATLAB's that are off the exact
// crossings). The C coefficients are compared with both forms of the controller, MATLAB's,
// which the original accepts alone, and the monic of grader_expected, as in XG_10 (see octPI).
//
// A notch with alpha_n ≤ 0 (no real √alpha_n to divide by) or with a coefficient beyond
// maxNotch cannot be analysed and scores 0.

func init() { graders["XG_12"] = gradeXG12 }

// maxNotch bounds the notch's coefficients (omega_n², and f_n omega_n times and over √alpha_n):
// beyond it the polynomials of L2 are too ill-conditioned for their roots to mean anything.
const maxNotch = 1e8

const xg12Script = octEnc + octPI + `
function [gm, pm] = margins(n, d)
  % every gain margin (absolute) and phase margin (degrees, in (-180, 180]) of n(s)/d(s)
  jw = @(p) p .* [1 1i -1 -1i](mod(numel(p)-1:-1:0, 4) + 1);  % p(j w) as a polynomial in w
  N = jw(n); D = jw(d);
  nn = conv(N, conj(N)); dd = conv(D, conj(D));
  m = max(numel(nn), numel(dd));
  Lw = @(w) polyval(n, 1i*w) ./ polyval(d, 1i*w);
  gm = []; pm = [];
  % w = 0: L(0) real and negative, or integrators turning L(0+) to -180 degrees
  zn = numel(n) - find(n, 1, 'last'); zd = numel(d) - find(d, 1, 'last');
  c0 = n(end - zn) / d(end - zd); z = zd - zn;
  if z >= 0 && mod(round(angle(c0)*180/pi) - 90*z, 360) == 180
    if z == 0, gm(end+1) = 1/abs(c0); else gm(end+1) = 0; end
  end
  for w = positive_roots(imag(conv(N, conj(D))))
    v = Lw(w);
    if real(v) < 0, gm(end+1) = 1/abs(v); end
  end
  for w = positive_roots([zeros(1, m-numel(nn)) nn] - [zeros(1, m-numel(dd)) dd])
    p = 180 + angle(Lw(w))*180/pi;
    if p > 180, p -= 360; end
    pm(end+1) = p;
  end
end
function w = positive_roots(p)
  r = roots(real(p));
  w = sort(real(r(abs(imag(r)) <= 1e-6*max(1, abs(r)) & real(r) > 0))).';
end
G = tf(1, [1 0]) * 0.5 * tf(13^2, [1 2*0.01*13 13^2]);
wL = 3; betab = sqrt(10);
kg = 1 / abs(freqresp(G, wL));  % MATLAB's 1/abs(evalfr(G, 1j*wL)); Octave's control has no evalfr
[num_err, den_err, form] = pi_errors(in.C_num, in.C_den, kg, betab, wL);
C = kg * tf([betab wL], [1 0]) / sqrt(betab^2 + 1);
wn = in.omega_n; an = in.alpha_n; fn = in.f_n;
Kn = tf([1 fn*wn*sqrt(an) wn^2], [1 fn*wn/sqrt(an) wn^2]);
[n, d] = tfdata(G * C * Kn, 'v');
m = max(numel(n), numel(d));
poles = roots([zeros(1, m-numel(n)) n] + [zeros(1, m-numel(d)) d]);  % of the closed loop
[gm, pm] = margins(n, d);
out = struct('num_err', enc(num_err), 'den_err', enc(den_err), 'form', form, ...
             'max_real_pole', enc(max(real(poles))), 'gain_margins', {encs(gm)}, 'phase_margins', {encs(pm)});
`

func gradeXG12(ctx context.Context, config json.RawMessage) (*eval.Grade, error) {
	var c struct {
		CNum   []float64 `json:"C_num"`
		CDen   []float64 `json:"C_den"`
		OmegaN *float64  `json:"omega_n"`
		AlphaN *float64  `json:"alpha_n"`
		FN     *float64  `json:"f_n"`
	}
	if err := decodeConfig(config, &c); err != nil {
		return unreadable(err), nil
	}
	for _, err := range []error{piFits("C_num", c.CNum), piFits("C_den", c.CDen)} {
		if err != nil {
			return unreadable(err), nil
		}
	}
	wn, an, fn := *c.OmegaN, *c.AlphaN, *c.FN
	if !(an > 0) {
		return unreadable(fmt.Errorf("config: alpha_n is %g, and the notch needs √alpha_n > 0", an)), nil
	}
	for _, k := range []float64{wn * wn, fn * wn * math.Sqrt(an), fn * wn / math.Sqrt(an)} {
		if !(math.Abs(k) <= maxNotch) {
			return unreadable(fmt.Errorf("config: the notch has the coefficient %g; its coefficients must lie within ±%g for the grader to analyse it", k, maxNotch)), nil
		}
	}
	var m struct {
		NumErr       number   `json:"num_err"`
		DenErr       number   `json:"den_err"`
		Form         string   `json:"form"`
		MaxRealPole  number   `json:"max_real_pole"`
		GainMargins  []number `json:"gain_margins"`
		PhaseMargins []number `json:"phase_margins"`
	}
	in := map[string]any{"C_num": c.CNum, "C_den": c.CDen, "omega_n": wn, "alpha_n": an, "f_n": fn}
	if err := Octave(ctx, xg12Script, in, &m); err != nil {
		return nil, fmt.Errorf("engdesign: XG_12: %w", err)
	}
	numOK, denOK, stable := m.NumErr < 0.1, m.DenErr < 0.1, m.MaxRealPole < 0
	checks := map[string]check{
		"C_num":     scored(piFound{m.NumErr, m.Form}, numOK, 20),
		"C_den":     scored(piFound{m.DenErr, m.Form}, denOK, 20),
		"stability": scored(m.MaxRealPole, stable, 20),
	}
	if stable {
		checks["phase_margin"] = scored(m.PhaseMargins, largest(m.PhaseMargins) >= 60, 20)
		checks["gain_margin"] = scored(m.GainMargins, largest(m.GainMargins) >= 2, 20)
	} else {
		const unstable = "not measured: the closed loop is unstable"
		checks["phase_margin"] = scored(unstable, false, 20)
		checks["gain_margin"] = scored(unstable, false, 20)
	}
	g := total(checks, false)
	g.Passed = g.Score == 100
	return g, nil
}

// largest is MATLAB's max of xs: NaN left out, and NaN when nothing is left, which no
// threshold passes.
func largest(xs []number) float64 {
	m := math.NaN()
	for _, x := range xs {
		if f := float64(x); f > m || math.IsNaN(m) {
			m = f
		}
	}
	return m
}
