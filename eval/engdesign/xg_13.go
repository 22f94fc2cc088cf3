package engdesign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/labmate/labmate/eval"
)

// XG_13: a PID controller for the mass-spring-damper G(s) = 1/(s²+10s+20), graded as the
// original evaluate.py does with python-control 0.10.1: stability (40), step_info(T, T=10)
// settling time < 2 s (30), overshoot < 0.05 % (30), each failure ending the grading.

func init() { graders["XG_13"] = gradeXG13 }

// xg13Script measures the closed loop T = CG/(1+CG), C = (Kd s² + Kp s + Ki)/s, the way
// python-control 0.10.1 does (tf2ss realisation, its automatic time grid on [0, 10] s, the
// exact sampled step response, step_info's 2 % band and percent overshoot against dcgain).
const xg13Script = pyEnc + `
import numpy as np
from scipy import linalg, signal


def step_times(a, b, c, tfinal):
    # python-control's automatic time step (its _ideal_tfinal_and_dt with tfinal given), kept
    # because the grid sets the measured settling time and peak. Each mode is weighed by its
    # share of the step response; modes under a tenth of the largest share do not set the step.
    # Kept quirk: a mode's conditioning is read off the unconjugated product of its left and
    # right eigenvectors, which vanishes for a complex mode (and is negative for some real
    # ones), so such modes always count.
    sqrt_eps = np.sqrt(np.spacing(1.0))
    bal, (scale, perm) = linalg.matrix_balance(a, separate=True)
    p, left, right = linalg.eig(bal, left=True, right=True)
    sens = np.minimum(1e12, 1 / np.maximum(1e-12, np.einsum('ij,ij->j', left, right).real))
    p[np.abs(p) < np.spacing(sens * np.linalg.norm(bal, 1))] = 0
    left[perm, :] *= (1 / scale)[:, None]
    right[perm, :] *= scale[:, None]
    outs, ins = c @ right, left.T.conj() @ b
    wn = np.abs(p)
    conditioned = np.abs(sens) <= 1 / sqrt_eps
    share = np.zeros(len(p))
    share[conditioned] = (np.linalg.norm(ins[conditioned, :], axis=1) *
                          np.linalg.norm(outs[:, conditioned], axis=0) * sens[conditioned])
    share[wn != 0] /= wn[wn != 0]
    share[wn == 0] = 0
    share[p.imag != 0] *= 2
    keep = (share > 0.1 * share.max()) | ~conditioned
    p, wn = p[keep], wn[keep]
    imaginary = (p.imag != 0) & (np.abs(p.real) <= sqrt_eps)
    decaying = ~imaginary & (wn != 0)
    steps = list(2 * np.pi / 25 / wn[imaginary])
    steps += list(np.minimum(np.log(1000) / np.abs(p[decaying].real) / 50,
                             2 * np.pi / 25 / wn[decaying]))
    dt = min(steps) if steps else 0.5
    return np.linspace(0, tfinal, int(np.clip(np.ceil(tfinal / dt) + 1, 100, 5000)))


def measure(kp, ki, kd):
    num = np.trim_zeros(np.array([kd, kp, ki], float), 'f')
    if num.size == 0:
        num = np.zeros(1)
    den = np.polyadd([1.0, 10.0, 20.0, 0.0], num)
    poles = np.roots(den)
    out = {'max_real_pole': enc(np.max(poles.real))}
    if not np.all(poles.real < 0):
        return out
    a, b, c, d = signal.tf2ss(num, den)
    t = step_times(a, b, c, 10.0)
    ad = linalg.expm(a * (t[1] - t[0]))
    bd = np.linalg.solve(a, (ad - np.eye(len(a))) @ b)[:, 0]
    x = np.zeros((len(a), len(t)))
    for k in range(1, len(t)):
        x[:, k] = ad @ x[:, k - 1] + bd
    y = (c @ x)[0] + d[0, 0]
    final = np.polyval(num, 0) / np.polyval(den, 0)
    # step_info looks up where y first reaches 10 % and 90 % of the final value and raises
    # IndexError when it never does.
    out['reaches_90'] = bool(np.any(y - 0.9 * final >= 0))
    outside = np.nonzero(np.abs(y / final - 1) >= 0.02)[0]
    settled = 0 if outside.size == 0 else outside[-1] + 1
    out['settling_time'] = enc(t[settled] if settled < len(t) else np.nan)
    rise = np.max(y) - abs(final)
    out['overshoot'] = enc(abs(100 * rise / final) if rise > 0 else 0)
    return out


with np.errstate(all='ignore'):
    out = measure(inp['Kp'], inp['Ki'], inp['Kd'])
`

// pyEnc starts every Python grader script: enc gives a measured value as JSON can hold it, the
// strings "inf", "-inf" and "nan" for the values JSON has no number for (see number).
const pyEnc = `
import math


def enc(x):
    x = float(x)
    return x if math.isfinite(x) else repr(x)
`

func gradeXG13(ctx context.Context, config json.RawMessage) (*eval.Grade, error) {
	var c struct {
		Kp *float64 `json:"Kp"`
		Ki *float64 `json:"Ki"`
		Kd *float64 `json:"Kd"`
	}
	if err := decodeConfig(config, &c); err != nil {
		return unreadable(err), nil
	}
	var m struct {
		MaxRealPole  number `json:"max_real_pole"`
		Reaches90    bool   `json:"reaches_90"`
		SettlingTime number `json:"settling_time"`
		Overshoot    number `json:"overshoot"`
	}
	in := map[string]float64{"Kp": *c.Kp, "Ki": *c.Ki, "Kd": *c.Kd}
	if err := Python(ctx, xg13Script, in, &m); err != nil {
		return nil, fmt.Errorf("engdesign: XG_13: %w", err)
	}
	checks := map[string]check{}
	stable := m.MaxRealPole < 0
	checks["stability"] = scored(m.MaxRealPole, stable, 40)
	if !stable {
		return total(checks, false), nil
	}
	if !m.Reaches90 {
		// The original grader's step_info raises here, and its except clause gives no score.
		return unreadable(errors.New("the step response never reaches 90 % of its final value in 10 s: python-control's step_info fails on it, so the original grader scores the design 0")), nil
	}
	// The original fails only SettlingTime >= 2: its test for "nan" compares a float with a
	// string, so a response still outside the 2 % band at 10 s (NaN) passes.
	settled := !(m.SettlingTime >= 2)
	checks["settling_time"] = scored(m.SettlingTime, settled, 30)
	if !settled {
		return total(checks, false), nil
	}
	flat := !(m.Overshoot >= 0.05) // percent, as step_info reports it
	checks["overshoot"] = scored(m.Overshoot, flat, 30)
	return total(checks, flat), nil
}

// The helpers below are shared by the graders of this package.
