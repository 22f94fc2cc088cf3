package engdesign

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/labmate/labmate/eval"
)

// AV_03: an FIR anti-aliasing filter for decimating 48 kHz to 8 kHz, graded as the original
// evaluate.py does with scipy's freqz (10000 points, |H| interpolated linearly): ≥ -3 dB at all of
// linspace(0, 3500, 3500) (20); ≤ -40 dB at linspace(4000, 10000, 6000) but its first point, so
// never above 10 kHz (20); ≤ 0 dB at linspace(3500, 4000, 20) but its first point (10); order ≤
// 350, not the rubric's 60 (10); order+1 coefficients (10); a stopband edge in [3500, 4000] Hz
// (20); decimation factor 6 (10). Passed when all pass.

func init() { graders["AV_03"] = gradeAV03 }

// av03Script measures |H| in dB: its least over the passband and its most over the stopband and
// the transition band, each band as the original samples it.
const av03Script = pyEnc + `
import numpy as np
from scipy.signal import freqz


def measure(b):
    w, h = freqz(b, worN=10000, fs=48000)
    db = lambda f: 20 * np.log10(np.abs(np.interp(f, w, np.abs(h))))
    # np.min and np.max are NaN when any value is, so each bound fails as np.all fails on the
    # whole band.
    return {'pass': enc(np.min(db(np.linspace(0, 3500, num=3500)))),
            'stop': enc(np.max(db(np.linspace(4000, 10000, num=6000))[1:])),
            'trans': enc(np.max(db(np.linspace(3500, 4000, num=20))[1:]))}


with np.errstate(all='ignore'):
    out = measure(inp['b'])
`

func gradeAV03(ctx context.Context, config json.RawMessage) (*eval.Grade, error) {
	var c struct {
		Order    *float64   `json:"order"`
		Coeffs   *[]float64 `json:"coeffs"`
		Stopband *float64   `json:"stpbnd"`
		Decim    *float64   `json:"decim"`
	}
	if err := decodeConfig(config, &c); err != nil {
		return unreadable(err), nil
	}
	if err := coeffsFit("coeffs", *c.Coeffs); err != nil {
		return unreadable(err), nil
	}
	var m struct {
		Pass  number `json:"pass"`
		Stop  number `json:"stop"`
		Trans number `json:"trans"`
	}
	if err := Python(ctx, av03Script, map[string][]float64{"b": *c.Coeffs}, &m); err != nil {
		return nil, fmt.Errorf("engdesign: AV_03: %w", err)
	}
	order, stopband, decim := *c.Order, *c.Stopband, *c.Decim
	checks := map[string]check{
		"pass_ok":      scored(m.Pass, m.Pass >= -3, 20),
		"stop_ok":      scored(m.Stop, m.Stop <= -40, 20),
		"trans_ok":     scored(m.Trans, m.Trans <= 0, 10),
		"order_ok":     scored(order, order <= 350, 10),
		"ord_coeff_ok": scored(len(*c.Coeffs), float64(len(*c.Coeffs)) == order+1, 10),
		"stpbnd_ok":    scored(stopband, 3500 <= stopband && stopband <= 4000, 20),
		"decim_ok":     scored(decim, decim == 6, 10),
	}
	return total(checks, allPassed(checks)), nil
}
