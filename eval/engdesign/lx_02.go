package engdesign

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	"github.com/labmate/labmate/eval"
)

// LX_02: the maglev ÿ = 1 − u²/y² linearised at y = u = 1, a state feedback placing the poles at
// −1 ± j, an observer with eigenvalues −5, −6, and whether four initial states lie in the region
// of attraction of the nonlinear closed loop. The original evaluate_controller.m compares every
// answer with its own constants by isequal, exactly: A (8 points), B (8), K (10), L (10) and each
// of the four stability answers (16 each); the design passes with 100.

func init() { graders["LX_02"] = gradeLX02 }

// The original grader's constants (evaluate_controller.m), K for u = −Kx.
var (
	lx02A = [][]float64{{0, 1}, {2, 0}}
	lx02B = []float64{0, -2}
	lx02K = []float64{-2, -1}
	lx02L = []float64{11, 32}
	lx02S = []float64{1, 0, 1, 0}
)

func gradeLX02(_ context.Context, config json.RawMessage) (*eval.Grade, error) {
	var c struct {
		A11 *float64 `json:"a11"`
		A12 *float64 `json:"a12"`
		A21 *float64 `json:"a21"`
		A22 *float64 `json:"a22"`
		B11 *float64 `json:"b11"`
		B21 *float64 `json:"b21"`
		K1  *float64 `json:"k1"`
		K2  *float64 `json:"k2"`
		L1  *float64 `json:"l1"`
		L2  *float64 `json:"l2"`
		S1  *float64 `json:"s1"`
		S2  *float64 `json:"s2"`
		S3  *float64 `json:"s3"`
		S4  *float64 `json:"s4"`
	}
	if err := decodeConfig(config, &c); err != nil {
		return unreadable(err), nil
	}
	s := []float64{*c.S1, *c.S2, *c.S3, *c.S4}
	for i, v := range s {
		if v != math.Trunc(v) {
			return unreadable(fmt.Errorf("config: s%d is %v, not an integer (1 yes, 0 no)", i+1, v)), nil
		}
	}
	a := [][]float64{{*c.A11, *c.A12}, {*c.A21, *c.A22}}
	b := []float64{*c.B11, *c.B21}
	k := []float64{*c.K1, *c.K2}
	l := []float64{*c.L1, *c.L2}
	checks := map[string]check{
		"A": scored(a, reflect.DeepEqual(a, lx02A), 8),
		"B": scored(b, reflect.DeepEqual(b, lx02B), 8),
		"K": scored(k, reflect.DeepEqual(k, lx02K), 10),
		"L": scored(l, reflect.DeepEqual(l, lx02L), 10),
	}
	for i, v := range s {
		checks[fmt.Sprintf("stability_%d", i+1)] = scored(v, v == lx02S[i], 16)
	}
	g := total(checks, false)
	g.Passed = g.Score == 100
	return g, nil
}

// The helpers below are shared by the graders of this package. They have the names and the
// meaning of those the graders of XG_13, AV_02, AV_03 and Ziheng_03 use, so that one copy stays.
