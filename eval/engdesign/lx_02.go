package engdesign

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

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

// number is a value a grader script measured: a JSON number, or a string that
// strconv.ParseFloat reads as ±Inf or NaN, which JSON has no number for. It encodes as a number,
// or as "Inf", "-Inf" or "NaN", so that Details stay JSON.
type number float64

// UnmarshalJSON implements json.Unmarshaler.
func (n *number) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(math.IsInf(f, 0) || math.IsNaN(f)) {
			return fmt.Errorf("engdesign: a grader script measured %q, which is no number", s)
		}
		*n = number(f)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = number(f)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (n number) MarshalJSON() ([]byte, error) {
	switch f := float64(n); {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	default:
		return json.Marshal(f)
	}
}

// check is what one check of a grader found: the value it measured, whether it passed, and the
// points it earned of the points it is worth.
type check struct {
	Value  any  `json:"value"`
	Passed bool `json:"passed"`
	Points int  `json:"points"`
	Of     int  `json:"of"`
}

// scored is a check worth of points that earns them all when passed.
func scored(value any, passed bool, of int) check {
	c := check{Value: value, Passed: passed, Of: of}
	if passed {
		c.Points = of
	}
	return c
}

// total is the Grade of checks: their points summed, the checks as Details.
func total(checks map[string]check, passed bool) *eval.Grade {
	g := &eval.Grade{Passed: passed, Details: map[string]any{}}
	for name, c := range checks {
		g.Score += float64(c.Points)
		g.Details[name] = c
	}
	return g
}

// unreadable is the Grade of a design that cannot be graded: score 0, and why.
func unreadable(err error) *eval.Grade {
	return &eval.Grade{Details: map[string]any{"error": err.Error()}}
}

// decodeConfig decodes a design into v, a pointer to a struct whose fields are all pointers or
// slices, and names the first field the design lacks or sets to null.
func decodeConfig(config json.RawMessage, v any) error {
	if err := json.Unmarshal(config, v); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	s := reflect.ValueOf(v).Elem()
	for i := range s.NumField() {
		if s.Field(i).IsNil() {
			name, _, _ := strings.Cut(s.Type().Field(i).Tag.Get("json"), ",")
			return fmt.Errorf("config: %s is missing", name)
		}
	}
	return nil
}
