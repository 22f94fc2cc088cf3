package engdesign

import (
	"context"
	"encoding/json"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The gain and phase margins these tests expect are MATLAB's allmargin of each notch, as
// EngDesign's logs (tasks/XG_12/logs) record them (the names say what MATLAB scored the logged
// design); the largest real parts of the closed-loop poles are Octave's roots.
func TestXG12(t *testing.T) {
	var e struct {
		Num []float64 `json:"C_num"`
		Den []float64 `json:"C_den"`
	}
	taskExpected(t, "XG_12", &e)
	matlab, matlabDen := []float64{17.96, 17.04}, []float64{3.3166, 0}
	type notch struct{ alpha, f float64 }
	// The margins and poles of the notches, with omega_n 13.
	found := map[notch]struct {
		pole   float64
		gm, pm []number
	}{
		{0.02818, 0.12}: {-0.12960144634530657, []number{0, 3.254726572340882}, []number{62.48257933557852}},
		{0.04467, 0.1}:  {-0.12384069211677717, []number{0, 2.1617334555172287}, []number{65.82694376570976}},
		{0.1, 1}:        {0.005939289670286563, nil, nil},
		{0.5, 1.5}:      {0.577468118545445, nil, nil},
		{0.01, 1}:       {-0.11893178029047996, []number{0, 9.595997069677619}, []number{8.163782660094501}},
		{0.01, 0.5}:     {-0.12150356829702824, []number{0, 9.611265850239441}, []number{25.679015555942744}},
		{0.07, 0.075}:   {-0.13330552734725654, []number{0, 1.3362597571561963}, []number{68.46759032936455}},
		{0.08, 0.2}:     {-0.02993290932696846, []number{0, 1.2005027038406284}, []number{63.08883288242872}},
	}
	good := notch{0.02818, 0.12}
	tests := []struct {
		name     string
		num, den []float64
		notch    notch
		form     string
		failed   []string
	}{
		{"logged: MATLAB scores 100", []float64{17.96096, 17.04162}, []float64{3.31662, 0}, good, "MATLAB", nil},
		{"grader_expected's C (monic), the notch of a logged design MATLAB scores 60 for its monic C", e.Num, e.Den, notch{0.04467, 0.1}, "monic", nil},
		{"a numerator digit wrong", []float64{17.96, 18.04}, matlabDen, good, "MATLAB", []string{"C_num"}},
		{"one numerator coefficient, which MATLAB subtracts from both", []float64{17.96}, matlabDen, good, "MATLAB", []string{"C_num"}},
		{"the monic numerator over MATLAB's denominator: another controller", []float64{5.416, 5.138}, matlabDen, good, "monic", []string{"C_den"}},
		{"a denominator with a constant term", matlab, []float64{3.3166, 1}, good, "MATLAB", []string{"C_den"}},
		{"a notch too shallow (logged: MATLAB scores 40, unstable)", []float64{17.97, 17.05}, []float64{3.317, 0}, notch{0.1, 1}, "MATLAB", []string{"stability", "phase_margin", "gain_margin"}},
		{"a notch that boosts (logged: MATLAB finds it unstable)", matlab, matlabDen, notch{0.5, 1.5}, "MATLAB", []string{"stability", "phase_margin", "gain_margin"}},
		{"a deep wide notch: phase margin 8° (logged: MATLAB finds 8.16°)", matlab, matlabDen, notch{0.01, 1}, "MATLAB", []string{"phase_margin"}},
		{"a deep notch: phase margin 26° (logged: MATLAB finds 25.7°)", matlab, matlabDen, notch{0.01, 0.5}, "MATLAB", []string{"phase_margin"}},
		{"a narrow notch: gain margin 1.34, 2.5 dB, above the prompt's 2 dB but below the grader's 2 (logged: MATLAB finds 1.34)", matlab, matlabDen, notch{0.07, 0.075}, "MATLAB", []string{"gain_margin"}},
		{"a shallow notch: gain margin 1.2 (logged: MATLAB finds 1.2)", matlab, matlabDen, notch{0.08, 0.2}, "MATLAB", []string{"gain_margin"}},
	}
	g3 := 84.5 / (3i * (-9 + 0.78i + 169)) // G(3j)
	forms := piForms(1/cmplx.Abs(g3), 3)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			config := jsonConfig(t, map[string]any{"C_num": tt.num, "C_den": tt.den, "omega_n": 13, "alpha_n": tt.notch.alpha, "f_n": tt.notch.f})
			f, m := forms[tt.form], found[tt.notch]
			checks := map[string]check{
				"C_num":        scored(piFound{distance(tt.num, f[0]), tt.form}, true, 20),
				"C_den":        scored(piFound{distance(tt.den, f[1]), tt.form}, true, 20),
				"stability":    scored(number(m.pole), true, 20),
				"phase_margin": scored(m.pm, true, 20),
				"gain_margin":  scored(m.gm, true, 20),
			}
			if m.pole >= 0 {
				const unstable = "not measured: the closed loop is unstable"
				checks["phase_margin"] = scored(unstable, true, 20)
				checks["gain_margin"] = scored(unstable, true, 20)
			}
			// MATLAB's margins differ from the exact ones by up to 6e-5 (relative) near the resonance.
			if diff := cmp.Diff(wantGrade(checks, tt.failed), gradeConfig(t, graders["XG_12"], config), approx(1e-4)); diff != "" {
				t.Errorf("grade of %s (-want +got):\n%s", config, diff)
			}
		})
	}
}

func TestXG12Malformed(t *testing.T) {
	right := `{"C_num": [17.96, 17.04], "C_den": [3.3166, 0], "omega_n": 13, "alpha_n": 0.02818, "f_n": 0.12}`
	testMalformed(t, graders["XG_12"], []string{
		`{}`,
		`null`,
		strings.Replace(right, `"f_n": 0.12`, `"fn": 0.12`, 1),
		strings.Replace(right, `"omega_n": 13`, `"omega_n": "13"`, 1),
		strings.Replace(right, `[17.96, 17.04]`, `{"s": 17.96}`, 1),
		strings.Replace(right, `[17.96, 17.04]`, `[Infinity, 17.04]`, 1),
		strings.Replace(right, `[17.96, 17.04]`, `[]`, 1),
		strings.Replace(right, `[17.96, 17.04]`, `[`+strings.Repeat("17.96,", 1e6)+`17.04]`, 1),
		strings.Replace(right, `[3.3166, 0]`, `[1, 41.1, 169, 0]`, 1),
		strings.Replace(right, `"alpha_n": 0.02818`, `"alpha_n": 0`, 1),
		strings.Replace(right, `"alpha_n": 0.02818`, `"alpha_n": -0.05`, 1),
		strings.Replace(right, `"alpha_n": 0.02818`, `"alpha_n": 1e-300`, 1),
		strings.Replace(right, `"omega_n": 13`, `"omega_n": 1e5`, 1),
		strings.Replace(right, `"f_n": 0.12`, `"f_n": 1e300`, 1),
	})
}

func BenchmarkGradeXG12(b *testing.B) {
	config := json.RawMessage(`{"C_num": [17.96096, 17.04162], "C_den": [3.31662, 0], "omega_n": 13, "alpha_n": 0.02818, "f_n": 0.12}`)
	for b.Loop() {
		if g, err := gradeXG12(context.Background(), config); err != nil || !g.Passed {
			b.Fatal(g, err)
		}
	}
}
