package engdesign

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
)

// xg10Design is a design for XG_10 and what grading it should find: the form of K1 it is nearer
// to, the checks it fails, and σ_u. The σ_u are this grader's (Octave, 10 noise draws); where
// the design is from EngDesign's logs (tasks/XG_10/logs), the name gives MATLAB's verdict.
type xg10Design struct {
	name          string
	num, den      []float64
	omegaR, betaR float64
	form          string
	failed        []string
	sigma         float64
}

func TestXG10(t *testing.T) {
	var e struct {
		Num []float64 `json:"K1_num"`
		Den []float64 `json:"K1_den"`
	}
	taskExpected(t, "XG_10", &e)
	matlab := []float64{5.676, 8.975}
	tests := []xg10Design{
		{name: "grader_expected's K1 (monic), roll-off 5, 4", num: e.Num, den: e.Den, omegaR: 5, betaR: 4, form: "monic", sigma: 0.008577237903813541},
		{name: "MATLAB's K1, roll-off 10, 2 (logged: MATLAB scores 100)", num: matlab, den: []float64{3.3166, 0}, omegaR: 10, betaR: 2, form: "MATLAB", sigma: 0.009124599290967064},
		{name: "omega_r 0 gives no control signal at all, which is quiet (in the original too)", num: matlab, den: []float64{3.3166, 0}, omegaR: 0, betaR: 1, form: "MATLAB", sigma: 0},
		{name: "a numerator digit wrong", num: []float64{5.676, 9.975}, den: []float64{3.3166, 0}, omegaR: 10, betaR: 2, form: "MATLAB", failed: []string{"K1_num"}, sigma: 0.009124599290967064},
		{name: "one numerator coefficient, which MATLAB subtracts from both", num: []float64{5.676}, den: []float64{3.3166, 0}, omegaR: 10, betaR: 2, form: "MATLAB", failed: []string{"K1_num"}, sigma: 0.009124599290967064},
		{name: "the monic numerator over MATLAB's denominator: another controller", num: []float64{1.7115, 2.7061}, den: []float64{3.3166, 0}, omegaR: 10, betaR: 2, form: "monic", failed: []string{"K1_den"}, sigma: 0.009124599290967064},
		{name: "a denominator with a constant term", num: matlab, den: []float64{3.3166, 1}, omegaR: 10, betaR: 2, form: "MATLAB", failed: []string{"K1_den"}, sigma: 0.009124599290967064},
		{name: "roll-off 50, 10 (logged: MATLAB scores 40)", num: []float64{5.677, 8.975}, den: []float64{3.317, 0}, omegaR: 50, betaR: 10, form: "MATLAB", failed: []string{"noise_rejection"}, sigma: 0.03865605719095749},
		{name: "roll-off 15, 0.5 (logged: MATLAB scores 40)", num: matlab, den: []float64{3.317, 0}, omegaR: 15, betaR: 0.5, form: "MATLAB", failed: []string{"noise_rejection"}, sigma: 0.04029515124789447},
	}
	forms := piForms(math.Sqrt(29)/3, 5) // kg = 1/|G(5j)| = |5j + 2|/3
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			config := jsonConfig(t, map[string]any{"K1_num": tt.num, "K1_den": tt.den, "omega_r": tt.omegaR, "beta_r": tt.betaR})
			f := forms[tt.form]
			checks := map[string]check{
				"K1_num":          scored(piFound{distance(tt.num, f[0]), tt.form}, true, 20),
				"K1_den":          scored(piFound{distance(tt.den, f[1]), tt.form}, true, 20),
				"noise_rejection": scored(number(tt.sigma), true, 60),
			}
			want := wantGrade(checks, tt.failed)
			if diff := cmp.Diff(want, gradeConfig(t, graders["XG_10"], config), approxNumbers); diff != "" {
				t.Errorf("grade of %s (-want +got):\n%s", config, diff)
			}
		})
	}
}

func TestXG10Malformed(t *testing.T) {
	right := `{"K1_num": [5.676, 8.975], "K1_den": [3.3166, 0], "omega_r": 10, "beta_r": 2}`
	testMalformed(t, graders["XG_10"], []string{
		`{}`,
		`[5.676, 8.975]`,
		strings.Replace(right, `"beta_r": 2`, `"beta": 2`, 1),
		strings.Replace(right, `"omega_r": 10`, `"omega_r": null`, 1),
		strings.Replace(right, `[5.676, 8.975]`, `"5.676 s + 8.975"`, 1),
		strings.Replace(right, `[5.676, 8.975]`, `[[5.676, 8.975]]`, 1),
		strings.Replace(right, `[5.676, 8.975]`, `[5.676, NaN]`, 1),
		strings.Replace(right, `[5.676, 8.975]`, `[5.676, 1e309]`, 1),
		strings.Replace(right, `[5.676, 8.975]`, `[]`, 1),
		strings.Replace(right, `[5.676, 8.975]`, `[0, 5.676, 8.975]`, 1),
		strings.Replace(right, `[5.676, 8.975]`, `[`+strings.Repeat("1,", 1e6)+`1]`, 1),
		strings.Replace(right, `[3.3166, 0]`, `[3.3166, 0, 0]`, 1),
		strings.Replace(right, `"omega_r": 10`, `"omega_r": 1e300`, 1),
		strings.Replace(right, `"beta_r": 2`, `"beta_r": -1e13`, 1),
	})
}

func BenchmarkGradeXG10(b *testing.B) {
	config := json.RawMessage(`{"K1_num": [5.676, 8.975], "K1_den": [3.3166, 0], "omega_r": 10, "beta_r": 2}`)
	for b.Loop() {
		if g, err := gradeXG10(context.Background(), config); err != nil || !g.Passed {
			b.Fatal(g, err)
		}
	}
}

// piForms are the two forms, {numerator, denominator}, of the loop-shaping PI controller
// kg (√10 s + wL)/(√11 s): "MATLAB" as MATLAB's tf arithmetic writes it, "monic" as Octave's does.
func piForms(kg, wL float64) map[string][2][]float64 {
	b, r := math.Sqrt(10), math.Sqrt(11)
	return map[string][2][]float64{
		"MATLAB": {{kg * b, kg * wL}, {r, 0}},
		"monic":  {{kg * b / r, kg * wL / r}, {1, 0}},
	}
}

// distance is MATLAB's norm(x - y) for y of two values and x of one (subtracted from both) or two.
func distance(x, y []float64) number {
	if len(x) == 1 {
		x = []float64{x[0], x[0]}
	}
	return number(math.Hypot(x[0]-y[0], x[1]-y[1]))
}

// wantGrade is the Grade of checks, all passed but those named in failed, which earn nothing; the
// design passes if none fails.
func wantGrade(checks map[string]check, failed []string) *eval.Grade {
	for name, c := range checks {
		if slices.Contains(failed, name) {
			checks[name] = scored(c.Value, false, c.Of)
		}
	}
	return total(checks, len(failed) == 0)
}
