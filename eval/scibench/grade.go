package scibench

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/labmate/labmate/eval"
)

// relTol is equiv's math.isclose(rel_tol=0.05); there is no absolute tolerance.
const relTol = 0.05

// grade is eval_zero.py's equiv on an answer: the last \boxed{...} (parse_math_answer); for a
// scaled unit, "a \times 10^{k}" or "a * 10^{k}" expanded (parse_not, cal_not); commas removed;
// the number read as Python's float() reads it, or else its first whitespace-separated token;
// and compared with the reference with isclose.
func grade(answer string, scaled bool, reference float64) *eval.Grade {
	details := map[string]any{"reference": reference}
	boxed, err := lastBoxed(answer)
	if err != nil {
		details["error"] = err.Error()
		return &eval.Grade{Details: details}
	}
	details["boxed"] = boxed
	v, err := number(boxed, scaled)
	if err != nil {
		details["error"] = err.Error()
		return &eval.Grade{Details: details}
	}
	details["answer"] = v
	if !isClose(v, reference) {
		return &eval.Grade{Details: details}
	}
	return &eval.Grade{Score: 100, Passed: true, Details: details}
}

// lastBoxed is parse_math_answer: the text inside the \boxed{...} that the answer's last "oxed"
// opens, braces balanced, and of that what follows its last "=", if any. As upstream, a later
// "oxed" that opens no brace (a "\boxed 5", or the word "boxed") hides an earlier \boxed{...}.
func lastBoxed(answer string) (string, error) {
	i := strings.LastIndex(answer, "oxed")
	if i < 0 {
		return "", errors.New(`the answer has no \boxed{...}`)
	}
	open := i + len("oxed")
	if !strings.HasPrefix(answer[open:], "{") {
		return "", fmt.Errorf(`the answer's last "oxed" (%q) opens no \boxed{...}`, excerpt(answer, i))
	}
	depth := 0
	for j := open; j < len(answer); j++ {
		switch answer[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				s := answer[open+1 : j]
				if k := strings.LastIndex(s, "="); k >= 0 {
					s = strings.TrimLeft(s[k+1:], " ")
				}
				return s, nil
			}
		}
	}
	return "", fmt.Errorf(`the answer's last \boxed{ (%q) is never closed`, excerpt(answer, i))
}

// excerpt is the answer from its last \boxed on, cut to 40 characters.
func excerpt(answer string, i int) string {
	r := []rune(answer[max(0, i-1):])
	if len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return string(r)
}

// number reads the boxed text as equiv does.
func number(boxed string, scaled bool) (float64, error) {
	if scaled {
		if v, ok, err := expand(boxed); ok {
			return v, err
		}
	}
	s := strings.ReplaceAll(boxed, ",", "")
	if v, err := pyFloat(strings.TrimSpace(s)); err == nil {
		return v, nil
	}
	if f := strings.Fields(s); len(f) > 0 {
		if v, err := pyFloat(f[0]); err == nil {
			return v, nil
		}
	}
	return 0, fmt.Errorf("the boxed answer %q is not a number", boxed)
}

// expand is parse_not then cal_not: s split once at \times or else at "*" into a mantissa and a
// 10^{k}, whose product it returns. ok is false when s has neither (it is then read as it is).
// (Upstream also tests for "\t"+"imes", a Python escape slip that no answer meets.)
func expand(s string) (v float64, ok bool, err error) {
	sep := `\times`
	if !strings.Contains(s, sep) {
		if sep = "*"; !strings.Contains(s, sep) {
			return 0, false, nil
		}
	}
	parts := strings.Split(s, sep)
	if len(parts) != 2 {
		return 0, true, fmt.Errorf("the boxed answer %q has %d %q, not one", s, len(parts)-1, sep)
	}
	k, err := exponent(parts[1])
	if err != nil {
		return 0, true, fmt.Errorf("the boxed answer %q: %w", s, err)
	}
	x, err := pyFloat(strings.TrimSpace(parts[0]))
	if err != nil {
		return 0, true, fmt.Errorf("the boxed answer %q: the mantissa %w", s, err)
	}
	v = x * math.Pow(10, k)
	if math.IsInf(v, 0) {
		return 0, true, fmt.Errorf("the boxed answer %q overflows", s)
	}
	return v, true, nil
}

// power is cal_not's pattern for the scale, k in 10^k or 10^{k}.
var power = regexp.MustCompile(`10\^\{? *(-?[0-9]+) *\}?`)

// exponent is k of the first 10^{k} in s.
func exponent(s string) (float64, error) {
	m := power.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("no 10^{k} in %q", s)
	}
	return strconv.ParseFloat(m[1], 64)
}

// pyNumber is what Python's float() reads as a finite decimal (digits may be grouped by "_").
// It leaves out inf and nan, which can match no reference.
var pyNumber = regexp.MustCompile(`^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$`)

// pyFloat is Python's float(s) for a finite number.
func pyFloat(s string) (float64, error) {
	if !pyNumber.MatchString(s) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}

// isClose is Python's math.isclose(a, b, rel_tol=0.05): |a−b| ≤ 0.05·max(|a|,|b|).
func isClose(a, b float64) bool {
	if a == b {
		return true
	}
	d := math.Abs(a - b)
	return d <= math.Abs(relTol*b) || d <= math.Abs(relTol*a)
}
