package engdesign

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/labmate/labmate/eval"
)

// AV_02: an IIR notch at 120 Hz for a signal sampled at 2 kHz, graded as the original
// evaluate.py does with scipy's freqz (1000 points, |H| interpolated linearly): ≥ -3 dB at all of
// linspace(0, 115, 115) (20) and of linspace(125, 250, 125) (20), ≤ -40 dB at 120 Hz (40), order
// ≤ 50, not the rubric's 60 (10), and order+1 coefficients in each list (10); passed when all pass.

func init() { graders["AV_02"] = gradeAV02 }

// av02Script measures |H| in dB: its least over each passband and its value at 120 Hz.
const av02Script = pyEnc + `
import numpy as np
from scipy.signal import freqz


def measure(b, a):
    w, h = freqz(b, a, worN=1000, fs=2000)
    db = lambda f: 20 * np.log10(np.abs(np.interp(f, w, np.abs(h))))
    # np.min is NaN when any value is, so each bound fails as np.all fails on the whole band.
    return {'lower': enc(np.min(db(np.linspace(0, 115, num=115)))),
            'upper': enc(np.min(db(np.linspace(125, 250, num=125)))),
            'target': enc(db(120))}


with np.errstate(all='ignore'):
    out = measure(inp['b'], inp['a'])
`

// maxCoeffs bounds a filter's coefficient lists, far above any order the graders accept, so that
// an absurd answer is refused rather than computed on.
const maxCoeffs = 10000

func gradeAV02(ctx context.Context, config json.RawMessage) (*eval.Grade, error) {
	var c struct {
		Order *float64   `json:"order"`
		Num   *[]float64 `json:"coeffs_numerator"`
		Den   *[]float64 `json:"coeffs_denominator"`
	}
	if err := decodeConfig(config, &c); err != nil {
		return unreadable(err), nil
	}
	if err := coeffsFit("coeffs_numerator", *c.Num); err != nil {
		return unreadable(err), nil
	}
	if err := coeffsFit("coeffs_denominator", *c.Den); err != nil {
		return unreadable(err), nil
	}
	var m struct {
		Lower  number `json:"lower"`
		Upper  number `json:"upper"`
		Target number `json:"target"`
	}
	if err := Python(ctx, av02Script, map[string][]float64{"b": *c.Num, "a": *c.Den}, &m); err != nil {
		return nil, fmt.Errorf("engdesign: AV_02: %w", err)
	}
	order := *c.Order
	lengths := map[string]int{"numerator": len(*c.Num), "denominator": len(*c.Den)}
	checks := map[string]check{
		"lower_ok":     scored(m.Lower, m.Lower >= -3, 20),
		"upper_ok":     scored(m.Upper, m.Upper >= -3, 20),
		"target_ok":    scored(m.Target, m.Target <= -40, 40),
		"order_ok":     scored(order, order <= 50, 10),
		"ord_coeff_ok": scored(lengths, float64(len(*c.Num)) == order+1 && float64(len(*c.Den)) == order+1, 10),
	}
	return total(checks, allPassed(checks)), nil
}

// coeffsFit says why a filter's coefficient list named field cannot be graded, if it cannot.
func coeffsFit(field string, coeffs []float64) error {
	switch {
	case len(coeffs) == 0:
		return fmt.Errorf("config: %s is empty", field)
	case len(coeffs) > maxCoeffs:
		return fmt.Errorf("config: %s has %d coefficients, more than the %d a design may have", field, len(coeffs), maxCoeffs)
	}
	return nil
}

// allPassed says whether every check passed.
func allPassed(checks map[string]check) bool {
	for _, c := range checks {
		if !c.Passed {
			return false
		}
	}
	return true
}
