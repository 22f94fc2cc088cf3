package scibench

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/labmate/labmate/eval"
)

// TestGrade holds the cases of the README's scoring; each verdict is what upstream's
// parse_math_answer, parse_not, cal_not and equiv give for the same answer and unit.
func TestGrade(t *testing.T) {
	tests := []struct {
		name, answer string
		scaled       bool    // the unit had a scale the unit shown leaves out
		ref          float64 // in the unit shown
		pass         bool
		why          string // in the error detail, for an answer that cannot be read
	}{
		{"prompted form", `The answer is therefore \boxed{3.520}.`, false, 3.52, true, ""},
		{"nested braces, not a number", `\boxed{\frac{1}{2}}`, false, 0.5, false, "not a number"},
		{"times expanded for a scaled unit", `so \boxed{1.5 \times 10^{3}} J`, true, 1500, true, ""},
		{"times not expanded otherwise: first token", `\boxed{1.5 \times 10^{3}}`, false, 1.5, true, ""},
		{"times not expanded otherwise", `\boxed{1.5 \times 10^{3}}`, false, 1500, false, ""},
		{"star expanded", `\boxed{2 * 10^6}`, true, 2e6, true, ""},
		{"negative exponent", `\boxed{3.52 \times 10^{-19}}`, true, 3.52e-19, true, ""},
		{"no spaces, bare exponent", `\boxed{1.2\times10^-3}`, true, 1.2e-3, true, ""},
		{"e notation for a scaled unit", `\boxed{3.52e-19}`, true, 3.52e-19, true, ""},
		{"mantissa alone for a scaled unit", `\boxed{3.52}`, true, 3.52e-19, false, ""},
		{"two times", `\boxed{3.52 \times 10^{-19} \times 2}`, true, 7.04e-19, false, `2 "\\times", not one`},
		{"times without a power of ten", `\boxed{3.52 \times 5}`, true, 17.6, false, "no 10^{k}"},
		{"comma in a mantissa", `\boxed{1,234 \times 10^{3}}`, true, 1.234e6, false, "mantissa"},
		{"overflow", `\boxed{2.5*10^{400}}`, true, 2.5e3, false, "overflows"},
		{"last box counts", `\boxed{1} then \boxed{2}`, false, 2, true, ""},
		{"earlier box does not", `\boxed{1} then \boxed{2}`, false, 1, false, ""},
		{"after the last =", `\boxed{E = 1 = 4.2}`, false, 4.2, true, ""},
		{"commas removed", `\boxed{89,034.79}`, false, 89034.79, true, ""},
		{"first token", `\boxed{4.2 kJ}`, false, 4.2, true, ""},
		{"spaces", `\boxed{ 7 }`, false, 7, true, ""},
		{"5% above", `\boxed{105}`, false, 100, true, ""},
		{"5% below", `\boxed{95}`, false, 100, true, ""},
		{"5% of the answer, not of the reference", `\boxed{105.2}`, false, 100, true, ""},
		{"over 5% below", `\boxed{94.9}`, false, 100, false, ""},
		{"5.2% below", `\boxed{94.8}`, false, 100, false, ""},
		{"over 5% of both above", `\boxed{105.3}`, false, 100, false, ""},
		{"zero", `\boxed{0}`, false, 0, true, ""},
		{"minus zero", `\boxed{-0.0}`, false, 0, true, ""},
		{"zero needs exactly zero", `\boxed{1e-12}`, false, 0, false, ""},
		{"Python digit groups", `\boxed{1_000}`, false, 1000, true, ""},
		{"leading point", `\boxed{.5}`, false, 0.5, true, ""},
		{"trailing point", `\boxed{5.}`, false, 5, true, ""},
		{"no box", `The answer is 42.`, false, 42, false, `no \boxed`},
		{"fbox", `\fbox{42}`, false, 42, false, `no \boxed`},
		{"words", `\boxed{forty-two}`, false, 42, false, "not a number"},
		{"unclosed", `\boxed{42`, false, 42, false, "never closed"},
		{"a later boxed hides the box", `\boxed{42} as boxed above`, false, 42, false, "opens no"},
		{"box without brace", `\boxed 42`, false, 42, false, "opens no"},
		{"empty box", `\boxed{}`, false, 0, false, "not a number"},
		{"empty box, scaled", `\boxed{}`, true, 0, false, "not a number"},
		{"infinity", `\boxed{inf}`, false, 1, false, "not a number"},
		{"hex is not a Python float", `\boxed{0x10}`, false, 16, false, "not a number"},
		{"an answer's Unicode minus", `\boxed{−2}`, false, -2, false, "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := grade(tt.answer, tt.scaled, tt.ref)
			if g.Passed != tt.pass || g.Score != map[bool]float64{true: 100, false: 0}[tt.pass] {
				t.Errorf("grade(%q) = %v, passed %v; want passed %v (details %v)", tt.answer, g.Score, g.Passed, tt.pass, g.Details)
			}
			if g.Details["reference"] != tt.ref {
				t.Errorf("details %v: reference is not %v", g.Details, tt.ref)
			}
			msg, hasErr := g.Details["error"].(string)
			switch {
			case tt.why != "" && !strings.Contains(msg, tt.why):
				t.Errorf("grade(%q): error %q, want one saying %q", tt.answer, msg, tt.why)
			case tt.why == "" && hasErr:
				t.Errorf("grade(%q): error %q for a readable answer", tt.answer, msg)
			case tt.why == "" && g.Details["answer"] == nil:
				t.Errorf("grade(%q): details %v lack the answer read", tt.answer, g.Details)
			}
		})
	}
}

// TestOracle grades, for each of the 580 items, its reference (in the unit shown) boxed: 100; and
// the reference off by 6 %: 0. For a scaled unit it also boxes the reference as a \times 10^{k}.
func TestOracle(t *testing.T) {
	b := load(t)
	items, _ := b.Items("full")
	ctx := context.Background()
	check := func(it eval.Item, answer string, want bool) {
		t.Helper()
		g, err := b.Grade(ctx, it, answer)
		if err != nil {
			t.Fatal(err)
		}
		if g.Passed != want || (g.Score == 100) != want {
			t.Errorf("%s: %q scores %v; want passed %v (details %v)", it.ID, answer, g.Score, want, g.Details)
		}
		if _, err := json.Marshal(g); err != nil {
			t.Errorf("%s: grade of %q: %v", it.ID, answer, err)
		}
	}
	for _, it := range items {
		ref, err := b.Reference(it.ID)
		if err != nil {
			t.Fatal(err)
		}
		off := ref * 1.06
		if ref == 0 {
			off = 0.06
		}
		check(it, `The answer is therefore \boxed{`+strconv.FormatFloat(ref, 'g', -1, 64)+`}.`, true)
		check(it, `The answer is therefore \boxed{`+strconv.FormatFloat(off, 'g', -1, 64)+`}.`, false)
		if b.byID[it.ID].scaled {
			mant, exp, _ := strings.Cut(strconv.FormatFloat(ref, 'e', -1, 64), "e")
			check(it, `\boxed{`+mant+` \times 10^{`+strings.TrimPrefix(exp, "+")+`}}`, true)
		}
	}
	if _, err := b.Grade(ctx, eval.Item{ID: "atkins/nope"}, `\boxed{1}`); err == nil {
		t.Error("Grade of an unknown item: no error")
	}
}
