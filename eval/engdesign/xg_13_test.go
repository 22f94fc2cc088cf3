package engdesign

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
)

// The expected values of these tests come from python-control 0.10.1 itself (TransferFunction,
// feedback, poles, step_info(T, T=10)), run once on each design.
func TestXG13(t *testing.T) {
	nan := number(math.NaN())
	tests := []struct {
		name, config string
		want         *eval.Grade
	}{
		{"settles in 0.83 s (the prompt asks 0.2 s, the grader 2 s)", `{"Kp": 350, "Ki": 300, "Kd": 50}`, &eval.Grade{Score: 100, Passed: true, Details: map[string]any{
			"stability":     check{number(-0.9569397951471014), true, 40, 40},
			"settling_time": check{number(0.8318170002599429), true, 30, 30},
			"overshoot":     check{number(0), true, 30, 30},
		}}},
		{"cancels the plant poles", `{"Kp": 200, "Ki": 400, "Kd": 20}`, &eval.Grade{Score: 100, Passed: true, Details: map[string]any{
			"stability":     check{number(-2.763932022500209), true, 40, 40},
			"settling_time": check{number(0.20027624309392264), true, 30, 30},
			"overshoot":     check{number(0), true, 30, 30},
		}}},
		{"not settled at 10 s passes, as in the original", `{"Kp": 300, "Ki": 10, "Kd": 20}`, &eval.Grade{Score: 100, Passed: true, Details: map[string]any{
			"stability":     check{number(-0.031341996356799934), true, 40, 40},
			"settling_time": check{nan, true, 30, 30},
			"overshoot":     check{number(0), true, 30, 30},
		}}},
		{"no integral action: a pole at the origin", `{"Kp": 100, "Ki": 0, "Kd": 0}`, &eval.Grade{Details: map[string]any{
			"stability": check{number(0), false, 0, 40},
		}}},
		{"negative proportional gain", `{"Kp": -30, "Ki": 1, "Kd": 0}`, &eval.Grade{Details: map[string]any{
			"stability": check{number(0.8109241071353938), false, 0, 40},
		}}},
		{"negative integral gain", `{"Kp": 0, "Ki": -5, "Kd": 1}`, &eval.Grade{Details: map[string]any{
			"stability": check{number(0.22227700933985492), false, 0, 40},
		}}},
		{"settles in 5.5 s", `{"Kp": 20, "Ki": 20, "Kd": 0}`, &eval.Grade{Score: 40, Details: map[string]any{
			"stability":     check{number(-0.5789424139349637), true, 40, 40},
			"settling_time": check{number(5.542521994134898), false, 0, 30},
		}}},
		{"settles in 4.9 s", `{"Kp": 40, "Ki": 30, "Kd": 2}`, &eval.Grade{Score: 40, Details: map[string]any{
			"stability":     check{number(-0.559738629770918), true, 40, 40},
			"settling_time": check{number(4.9156626506024095), false, 0, 30},
		}}},
		{"overshoots 41 %", `{"Kp": 350, "Ki": 300, "Kd": 0}`, &eval.Grade{Score: 70, Details: map[string]any{
			"stability":     check{number(-0.8277979637091064), true, 40, 40},
			"settling_time": check{number(1.0817941952506596), true, 30, 30},
			"overshoot":     check{number(41.20651813779486), false, 0, 30},
		}}},
		{"overshoots 19 %", `{"Kp": 1000, "Ki": 3000, "Kd": 30}`, &eval.Grade{Score: 70, Details: map[string]any{
			"stability":     check{number(-3.3427529118401975), true, 40, 40},
			"settling_time": check{number(0.1657874905802562), true, 30, 30},
			"overshoot":     check{number(18.551940952637857), false, 0, 30},
		}}},
		{"overshoots 1.9 % (the prompt allows 5 %, the grader 0.05 %)", `{"Kp": 300, "Ki": 300, "Kd": 20}`, &eval.Grade{Score: 70, Details: map[string]any{
			"stability":     check{number(-1.034341450765839), true, 40, 40},
			"settling_time": check{number(0.7054337464251669), true, 30, 30},
			"overshoot":     check{number(1.935173852499572), false, 0, 30},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := gradeConfig(t, gradeXG13, tt.config)
			if diff := cmp.Diff(tt.want, got, approxNumbers); diff != "" {
				t.Errorf("grade of %s (-want +got):\n%s", tt.config, diff)
			}
		})
	}
}

// step_info raises on a response that never reaches 90 % of its final value, and the original
// grader's except clause scores such a design 0 even though it is stable.
func TestXG13NeverRises(t *testing.T) {
	for _, config := range []string{`{"Kp": 0, "Ki": 1, "Kd": 0}`, `{"Kp": 10, "Ki": 5, "Kd": 0}`} {
		g := gradeConfig(t, gradeXG13, config)
		if msg, _ := g.Details["error"].(string); g.Score != 0 || g.Passed || !strings.Contains(msg, "never reaches 90 %") {
			t.Errorf("grade of %s = %+v, want score 0 and the step_info failure", config, g)
		}
	}
}

func TestXG13Malformed(t *testing.T) {
	testMalformed(t, gradeXG13, []string{
		`{"Kp": 1, "Ki": 1}`,
		`{"Kp": 1, "Ki": 1, "Kd": null}`,
		`{"Kp": "1", "Ki": 1, "Kd": 1}`,
		`{"Kp": [1], "Ki": 1, "Kd": 1}`,
		`{"Kp": NaN, "Ki": 1, "Kd": 1}`,
		`{"Kp": 1e999, "Ki": 1, "Kd": 1}`,
		`[1, 1, 1]`,
		`"PID"`,
		`null`,
	})
	// Absurd but finite gains, and no gains at all, are graded: unstable.
	for _, config := range []string{`{"Kp": 1e300, "Ki": 1e300, "Kd": 1e300}`, `{"Kp": -1e308, "Ki": 1e308, "Kd": 1e308}`, `{"Kp": 0, "Ki": 0, "Kd": 0}`} {
		if g := gradeConfig(t, gradeXG13, config); g.Score != 0 || g.Passed {
			t.Errorf("grade of %s = %+v, want score 0", config, g)
		}
	}
}

func BenchmarkGradeXG13(b *testing.B) {
	for b.Loop() {
		if g := gradeConfig(b, gradeXG13, `{"Kp": 350, "Ki": 300, "Kd": 50}`); !g.Passed {
			b.Fatalf("grade = %+v, want passed", g)
		}
	}
}
