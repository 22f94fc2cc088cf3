package engdesign

import (
	"context"
	"encoding/json"

	"github.com/labmate/labmate/eval"
)

// ZC_02: the largest alpha for which the discrete-time Lurye system with a [0, 1] sector
// nonlinearity is absolutely stable. The original verifyalpha.m solves nothing: it scores the
// answer against its two constants, 95 for any alpha in [0.651, 1.087] (95 is the most a design
// can earn), 0 above, and below by tiers of alpha/0.651 (≥ 0.9 earns 90, ≥ 0.8 80, … ≥ 0.5 50,
// else 0); the design passes with 90.

func init() { graders["ZC_02"] = gradeZC02 }

// The original grader's constants: the alpha_max its author found, and the largest alpha it accepts.
const (
	zc02Optimal = 0.651
	zc02Max     = 1.087
)

func gradeZC02(_ context.Context, config json.RawMessage) (*eval.Grade, error) {
	var c struct {
		Alpha *float64 `json:"alpha"`
	}
	if err := decodeConfig(config, &c); err != nil {
		return unreadable(err), nil
	}
	alpha := *c.Alpha
	points := 0
	switch ratio := alpha / zc02Optimal; {
	case alpha > zc02Max:
	case alpha >= zc02Optimal:
		points = 95
	case ratio >= 0.9:
		points = 90
	case ratio >= 0.8:
		points = 80
	case ratio >= 0.7:
		points = 70
	case ratio >= 0.6:
		points = 60
	case ratio >= 0.5:
		points = 50
	}
	passed := points >= 90
	ch := check{Value: alpha, Passed: passed, Points: points, Of: 95}
	return total(map[string]check{"alpha score": ch}, passed), nil
}
