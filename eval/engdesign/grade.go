package engdesign

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/labmate/labmate/eval"
)

// What the graders share: measured numbers that may be infinite, checks with their points,
// and the grade of a design that cannot be read.

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
