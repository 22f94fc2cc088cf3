package engdesign

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/labmate/labmate/eval"
)

// Ziheng_03: a PID controller for the maglev plant G = 1/((0.5s+1)(s+1)(2s+1)), graded as the
// original evaluate_pid.m does in MATLAB: an unstable closed loop scores 0; else the 5 % settling
// time < 5 s (30), overshoot < 20 % (20), 1 - y(end) < 1e-3 (30), gain margin > 10 as a ratio,
// i.e. 20 dB, not the prompt's 10 dB (10), and phase margin > 45° (10); passed at 100.

func init() { graders["Ziheng_03"] = gradeZiheng03 }

// ziheng03Script measures T = feedback(pid(Kp, Ki, Kd)*G, 1) as evaluate_pid.m does, with two
// stand-ins for MATLAB functions:
//   - step(T, 0:0.00005:30), which takes Octave seconds, by the same exact zero-order-hold
//     recursion [x; u](k+1) = Φ [x; u](k), Φ = expm([A B; 0 0] dt), in blocks of 1024 samples;
//   - MATLAB's margin, whose choice among several crossovers Octave's does not share (MATLAB
//     reports the gain margin closest to 0 dB and the phase margin closest to 0°, wrapped into
//     (-180°, 180°]; Inf when there is no crossover).
const ziheng03Script = `
enc = @(x) {x, sprintf('%g', x)}{2 - isfinite(x)};
jpow = @(k) [1, 1i, -1, -1i](mod (k, 4) + 1);
pad = @(p, n) [zeros(1, n - numel (p)), p];
positive = @(w) real (w(abs (imag (w)) < sqrt (eps) & real (w) > 0));
out = struct ();
try
  s = tf ('s');
  G = 1 / ((0.5*s + 1) * (s + 1) * (2*s + 1));
  L = pid (in.Kp, in.Ki, in.Kd) * G;
  T = feedback (L, 1);
  poles = real (pole (T));
  out.stable = all (poles < 0);
  out.max_real_pole = enc (max ([-Inf; poles(:)]));
  if (out.stable)
    t = 0:0.00005:30;
    [a, b, c, d] = ssdata (T);
    n = rows (a);
    M = [a, b; zeros(1, n + 1)];
    dt = t(2) - t(1);
    Z = [zeros(n, 1); 1];
    while (columns (Z) < 1024)
      Z = [Z, expm(M * (dt * columns (Z))) * Z];
    endwhile
    P = expm (M * (dt * columns (Z)));
    R = [c, d];
    y = zeros (1, ceil (numel (t) / columns (Z)) * columns (Z));
    for k = 0:columns (Z):numel (t) - 1
      y(k + (1:columns (Z))) = R * Z;
      R = R * P;
    endfor
    y = y(1:numel (t));
    yf = y(end);
    tol = 0.05;
    last = find (y > (1 + tol)*yf | y < (1 - tol)*yf, 1, 'last');
    if (isempty (last))
      Ts = 0;
    elseif (last < numel (t))
      Ts = t(last + 1);
    else
      Ts = t(end);
    endif
    out.settling_time = enc (Ts);
    out.overshoot = enc (100 * (max (y) - yf) / yf);
    out.final_error = enc (1 - yf);
    [num, den] = tfdata (L, 'v');
    jn = num .* jpow (numel (num) - 1:-1:0);
    jd = den .* jpow (numel (den) - 1:-1:0);
    Ljw = @(w) polyval (num, 1i*w) ./ polyval (den, 1i*w);
    w = positive (roots (imag (conv (jn, conj (jd)))));
    Lw = Ljw (w);
    gm = 1 ./ abs (Lw(real (Lw) < 0));           # at the -180° crossings
    [~, k] = min (abs (log (gm)));
    out.gain_margin = enc ([gm(k), Inf](1));      # Inf when there is none
    mn = conv (jn, conj (jn));
    md = conv (jd, conj (jd));
    m = max (numel (mn), numel (md));
    w = positive (roots (real (pad (mn, m) - pad (md, m))));
    pm = angle (-Ljw (w)) * 180 / pi;             # at the 0 dB crossings
    [~, k] = min (abs (pm));
    out.phase_margin = enc ([pm(k), Inf](1));
  endif
catch err
  out = struct ('error', err.message);
end_try_catch
`

func gradeZiheng03(ctx context.Context, config json.RawMessage) (*eval.Grade, error) {
	var c struct {
		Kp *float64 `json:"Kp"`
		Ki *float64 `json:"Ki"`
		Kd *float64 `json:"Kd"`
	}
	if err := decodeConfig(config, &c); err != nil {
		return unreadable(err), nil
	}
	var m struct {
		Error        string `json:"error"`
		Stable       bool   `json:"stable"`
		MaxRealPole  number `json:"max_real_pole"`
		SettlingTime number `json:"settling_time"`
		Overshoot    number `json:"overshoot"`
		FinalError   number `json:"final_error"`
		GainMargin   number `json:"gain_margin"`
		PhaseMargin  number `json:"phase_margin"`
	}
	in := map[string]float64{"Kp": *c.Kp, "Ki": *c.Ki, "Kd": *c.Kd}
	if err := Octave(ctx, ziheng03Script, in, &m); err != nil {
		return nil, fmt.Errorf("engdesign: Ziheng_03: %w", err)
	}
	if m.Error != "" {
		return unreadable(fmt.Errorf("the closed loop cannot be simulated: %s", m.Error)), nil
	}
	checks := map[string]check{"stable": scored(m.MaxRealPole, m.Stable, 0)}
	if !m.Stable {
		return total(checks, false), nil
	}
	checks["settling_time"] = scored(m.SettlingTime, m.SettlingTime < 5, 30)
	checks["overshoot"] = scored(m.Overshoot, m.Overshoot < 20, 20)
	checks["error"] = scored(m.FinalError, m.FinalError < 1e-3, 30)
	checks["gain_margin"] = scored(m.GainMargin, m.GainMargin > 10, 10)
	checks["phase_margin"] = scored(m.PhaseMargin, m.PhaseMargin > 45, 10)
	g := total(checks, false)
	g.Passed = g.Score == 100
	return g, nil
}
