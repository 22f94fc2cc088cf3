package engdesign

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
)

// The expected values of these tests were checked against an independent simulation (scipy's
// dlsim on the same grid, margins read off a dense frequency sweep).
func TestZiheng03(t *testing.T) {
	inf := number(math.Inf(1))
	// ok is a stable design's Details, every check passed but those named in failed.
	ok := func(maxRe, ts, mp, e, gm, pm number, failed ...string) map[string]any {
		d := map[string]any{
			"stable":        check{maxRe, true, 0, 0},
			"settling_time": check{ts, true, 30, 30},
			"overshoot":     check{mp, true, 20, 20},
			"error":         check{e, true, 30, 30},
			"gain_margin":   check{gm, true, 10, 10},
			"phase_margin":  check{pm, true, 10, 10},
		}
		return failing(d, failed)
	}
	tests := []struct {
		name, config string
		want         *eval.Grade
	}{
		{"the task's reference solution", `{"Kp": 10, "Ki": 1.55, "Kd": 9.5}`, &eval.Grade{Score: 100, Passed: true,
			Details: ok(-0.1757869637419647, 2.73925, 18.454532237836778, 0.0003710945716712821, inf, 45.241481380082728)}},
		{"zeros on the two slow poles, loop 4/(s(s+2))", `{"Kp": 6, "Ki": 2, "Kd": 4}`, &eval.Grade{Score: 100, Passed: true,
			Details: ok(-0.5, 2.64455, 16.3033534821497, 3.9e-14, inf, 51.82729237298775)}},
		{"zeros on the two slow poles, loop 3/(s(s+2))", `{"Kp": 4.5, "Ki": 1.5, "Kd": 3}`, &eval.Grade{Score: 100, Passed: true,
			Details: ok(-0.5, 3.042, 10.845266492255896, -7.0e-14, inf, 57.643625681617269)}},
		{"unstable", `{"Kp": 20, "Ki": 20, "Kd": 0}`, &eval.Grade{Details: map[string]any{
			"stable": check{number(0.5972792855843361), false, 0, 0}}}},
		{"negative gain, unstable", `{"Kp": -1, "Ki": 0.5, "Kd": 0}`, &eval.Grade{Details: map[string]any{
			"stable": check{number(0.06211336346452705), false, 0, 0}}}},
		{"settles in 6.3 s", `{"Kp": 1.2, "Ki": 0.4, "Kd": 0.8}`, &eval.Grade{Score: 70,
			Details: ok(-0.5, 6.2874, 0, 1.0158393837222946e-7, inf, 78.89647117679995, "settling_time")}},
		{"settles in 8.8 s", `{"Kp": 0.9, "Ki": 0.3, "Kd": 0.6}`, &eval.Grade{Score: 70,
			Details: ok(-0.3675444679663239, 8.8436, 0, 0.000020994490525616528, inf, 81.56027797158123, "settling_time")}},
		{"overshoots 23 %", `{"Kp": 6, "Ki": 3, "Kd": 4}`, &eval.Grade{Score: 80,
			Details: ok(-0.7136346520325175, 3.12645, 23.018398071626487, 1.16e-10, inf, 48.78261985807822, "overshoot")}},
		{"overshoots 22 %", `{"Kp": 6, "Ki": 4, "Kd": 5}`, &eval.Grade{Score: 80,
			Details: ok(-0.4785834322904644, 3.53165, 21.648818759809119, -1.551990755910282e-7, inf, 53.145484243734077, "overshoot")}},
		{"9 % short at 30 s", `{"Kp": 6, "Ki": 0.1, "Kd": 4}`, &eval.Grade{Score: 70,
			Details: ok(-0.014509764582499639, 4.27495, 14.922109099919928, 0.09060122922140457, inf, 55.25308056508915, "error")}},
		{"9 % short at 30 s, more derivative", `{"Kp": 6, "Ki": 0.1, "Kd": 6}`, &eval.Grade{Score: 70,
			Details: ok(-0.014572368071863703, 3.4997, 12.173192476740834, 0.09120694813341202, inf, 58.20870362028125, "error")}},
		{"gain margin 19.4 dB (the prompt asks 10 dB, the grader 20 dB)", `{"Kp": 1.3, "Ki": 0.42, "Kd": 0.14}`, &eval.Grade{Score: 90,
			Details: ok(-0.2707644905236132, 4.0838, 1.935385947635498, 0.00008527856312923188, 9.373412391548748, 66.22822604823863, "gain_margin")}},
		{"gain margin 17.9 dB", `{"Kp": 1.4, "Ki": 0.44, "Kd": 0.12}`, &eval.Grade{Score: 90,
			Details: ok(-0.26326636451831778, 3.7921, 3.528105702780674, 0.0000974623409660813, 7.877621070761603, 64.19655024267503, "gain_margin")}},
		{"phase margin 42°", `{"Kp": 8, "Ki": 2, "Kd": 18}`, &eval.Grade{Score: 90,
			Details: ok(-0.2165815779636452, 3.591, 18.87634263296638, 0.0001801932440589349, inf, 42.048747947120919, "phase_margin")}},
		{"phase margin 44°", `{"Kp": 6, "Ki": 3, "Kd": 18}`, &eval.Grade{Score: 90,
			Details: ok(-0.1606129908036375, 3.23265, 16.311711339177287, -0.0006746982174752336, inf, 43.79644416300891, "phase_margin")}},
		// No controller: y stays 0, so nothing is outside the band around y(end) = 0 (Ts = 0),
		// the overshoot is 0/0, and a zero loop has no crossover: 50 points, as in MATLAB.
		{"the zero controller", `{"Kp": 0, "Ki": 0, "Kd": 0}`, &eval.Grade{Score: 50,
			Details: ok(-0.5, 0, number(math.NaN()), 1, inf, inf, "overshoot", "error")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := gradeConfig(t, gradeZiheng03, tt.config)
			if diff := cmp.Diff(tt.want, got, approxNumbers); diff != "" {
				t.Errorf("grade of %s (-want +got):\n%s", tt.config, diff)
			}
		})
	}
}

func TestZiheng03Malformed(t *testing.T) {
	testMalformed(t, gradeZiheng03, []string{
		`{"Kp": 1, "Kd": 1}`,
		`{"Kp": null, "Ki": 1, "Kd": 1}`,
		`{"Kp": 1, "Ki": true, "Kd": 1}`,
		`{"Kp": 1, "Ki": 1, "Kd": Infinity}`,
		`{"Kp": 1, "Ki": 1, "Kd": -1e400}`,
		`[10, 1.55, 9.5]`,
	})
	// Gains whose polynomials overflow in Octave (here in the margins of a loop Octave finds
	// stable) are a score-0 Grade that says so.
	g := gradeConfig(t, gradeZiheng03, `{"Kp": 1e100, "Ki": 1e300, "Kd": 1e154}`)
	if msg, _ := g.Details["error"].(string); g.Score != 0 || g.Passed || !strings.Contains(msg, "Inf or NaN") {
		t.Errorf("grade of overflowing gains = %+v, want score 0 and Octave's reason under error", g)
	}
}

func BenchmarkGradeZiheng03(b *testing.B) {
	for b.Loop() {
		if g := gradeConfig(b, gradeZiheng03, `{"Kp": 6, "Ki": 2, "Kd": 4}`); !g.Passed {
			b.Fatalf("grade = %+v, want passed", g)
		}
	}
}
