package engdesign

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
)

// lx02Right is the one right answer: the linearisation, K for u = −Kx, L, and the four
// initial states' answers (evaluate_controller.m's constants).
var lx02Right = map[string]float64{
	"a11": 0, "a12": 1, "a21": 2, "a22": 0, "b11": 0, "b21": -2,
	"k1": -2, "k2": -1, "l1": 11, "l2": 32,
	"s1": 1, "s2": 0, "s3": 1, "s4": 0,
}

// lx02Want is the Grade of design d whose checks named in failed fail: every check shows the
// answer's values and its points.
func lx02Want(d map[string]float64, failed ...string) *eval.Grade {
	of := map[string]int{"A": 8, "B": 8, "K": 10, "L": 10}
	values := map[string]any{
		"A": [][]float64{{d["a11"], d["a12"]}, {d["a21"], d["a22"]}},
		"B": []float64{d["b11"], d["b21"]},
		"K": []float64{d["k1"], d["k2"]},
		"L": []float64{d["l1"], d["l2"]},
	}
	for i := 1; i <= 4; i++ {
		name := fmt.Sprintf("stability_%d", i)
		of[name], values[name] = 16, d[fmt.Sprintf("s%d", i)]
	}
	checks := map[string]check{}
	for name, v := range values {
		checks[name] = scored(v, true, of[name])
	}
	for _, name := range failed {
		checks[name] = scored(values[name], false, of[name])
	}
	return total(checks, len(failed) == 0)
}

// with is design d with the values of kv (name, value, name, value…) changed.
func with(d map[string]float64, kv ...any) map[string]float64 {
	d = maps.Clone(d)
	for i := 0; i < len(kv); i += 2 {
		d[kv[i].(string)] = kv[i+1].(float64)
	}
	return d
}

func TestLX02(t *testing.T) {
	tests := []struct {
		name   string
		design map[string]float64
		failed []string
	}{
		{"right", lx02Right, nil},
		{"right, with −0 for 0", with(lx02Right, "a11", math.Copysign(0, -1), "b11", math.Copysign(0, -1), "s4", math.Copysign(0, -1)), nil},
		{"A with the sign of 2 lost", with(lx02Right, "a21", -2.0), []string{"A"}},
		{"A near but not exactly right", with(lx02Right, "a21", 2.0000001), []string{"A"}},
		{"B with the sign of −2 lost", with(lx02Right, "b21", 2.0), []string{"B"}},
		{"B in the other row", with(lx02Right, "b11", -2.0, "b21", 0.0), []string{"B"}},
		{"K for u = +Kx", with(lx02Right, "k1", 2.0, "k2", 1.0), []string{"K"}},
		{"K near but not exactly right", with(lx02Right, "k2", -1.0000001), []string{"K"}},
		{"L swapped", with(lx02Right, "l1", 32.0, "l2", 11.0), []string{"L"}},
		{"L for eigenvalues −5, −7", with(lx02Right, "l1", 12.0, "l2", 37.0), []string{"L"}},
		{"(2, 2) said unstable", with(lx02Right, "s1", 0.0), []string{"stability_1"}},
		{"(2, 2) answered 2", with(lx02Right, "s1", 2.0), []string{"stability_1"}},
		{"(2.5, 0) said stable", with(lx02Right, "s2", 1.0), []string{"stability_2"}},
		{"(2.5, 0) answered −1", with(lx02Right, "s2", -1.0), []string{"stability_2"}},
		{"(0.8, 0) said unstable", with(lx02Right, "s3", 0.0), []string{"stability_3"}},
		{"(0.8, 0) answered 10", with(lx02Right, "s3", 10.0), []string{"stability_3"}},
		{"(0.9, −1) said stable", with(lx02Right, "s4", 1.0), []string{"stability_4"}},
		{"(0.9, −1) answered 3", with(lx02Right, "s4", 3.0), []string{"stability_4"}},
		{"all of the region said stable", with(lx02Right, "s2", 1.0, "s4", 1.0), []string{"stability_2", "stability_4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := jsonConfig(t, tt.design)
			got := gradeConfig(t, graders["LX_02"], config)
			if diff := cmp.Diff(lx02Want(tt.design, tt.failed...), got); diff != "" {
				t.Errorf("grade of %s (-want +got):\n%s", config, diff)
			}
		})
	}
}

// TestLX02Expected grades the task's grader_expected: the answer the original grader holds.
func TestLX02Expected(t *testing.T) {
	var e struct {
		A, B, L [][]float64
		K, S    []float64
	}
	taskExpected(t, "LX_02", &e)
	d := map[string]float64{
		"a11": e.A[0][0], "a12": e.A[0][1], "a21": e.A[1][0], "a22": e.A[1][1],
		"b11": e.B[0][0], "b21": e.B[1][0], "k1": e.K[0], "k2": e.K[1], "l1": e.L[0][0], "l2": e.L[1][0],
		"s1": e.S[0], "s2": e.S[1], "s3": e.S[2], "s4": e.S[3],
	}
	if diff := cmp.Diff(lx02Right, d); diff != "" {
		t.Errorf("grader_expected differs from the original grader's constants (-these +grader_expected):\n%s", diff)
	}
	if got := gradeConfig(t, graders["LX_02"], jsonConfig(t, d)); got.Score != 100 || !got.Passed {
		t.Errorf("grade of grader_expected = %+v, want 100 and passed", got)
	}
}

func TestLX02Malformed(t *testing.T) {
	right := jsonConfig(t, lx02Right)
	testMalformed(t, graders["LX_02"], []string{
		`{}`,
		`[1, 2]`,
		`"a11"`,
		strings.Replace(right, `"a11":0,`, ``, 1),
		strings.Replace(right, `"a11":0`, `"a11":null`, 1),
		strings.Replace(right, `"a11":0`, `"a11":"0"`, 1),
		strings.Replace(right, `"a11":0`, `"a11":NaN`, 1),
		strings.Replace(right, `"a11":0`, `"a11":1e999`, 1),
		strings.Replace(right, `"a11":0`, `"a11":[`+strings.Repeat("0,", 1e6)+`0]`, 1),
		strings.Replace(right, `"s1":1`, `"s1":0.5`, 1),
	})
}

func BenchmarkGradeLX02(b *testing.B) {
	config := json.RawMessage(jsonConfig(b, lx02Right))
	for b.Loop() {
		if _, err := gradeLX02(context.Background(), config); err != nil {
			b.Fatal(err)
		}
	}
}
