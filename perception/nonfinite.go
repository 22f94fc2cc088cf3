package perception

import (
	"strconv"

	"github.com/labmate/labmate/protocol"
)

// nonFinite reports NaN or ±Inf as an Error: in a telemetry sample (any element of a vector),
// or printed as a number on stdout or stderr (`x = NaN`, `   1   NaN   3`, `[ 1. nan inf]`,
// `loss: -inf`). There is no threshold: a numerical result that became NaN or Inf does not
// recover, and everything computed from it is garbage.
//
// Printed text is where false alarms come from, so a word counts only when it is a number in
// a number's place. The word is nan, inf or infinity in any case, with an optional sign and an
// optional imaginary unit (NaNi, infj). It must be preceded by the line start, one of
// `= : [ ( { , ; |`, or another number; and followed by the line end, one of `, ; ] ) } |`,
// another number, or (when it follows `=` or `:`) the next `name =` pair. So `information`, `Infinity is the limit`, `NaN count: 0`, `checking for
// NaN values` and `the NaN column` are prose, and `x = NaN`, a matrix row with a NaN, a numpy
// array and a dict value are numbers. A known rough edge: a printed table that legitimately
// holds missing values (a pandas DataFrame with NaN cells) is reported too.
type nonFinite struct{}

func (nonFinite) sample(s *protocol.Sample) (finding, bool) {
	if len(s.Values) == 0 {
		if isFinite(s.Value) {
			return finding{}, false
		}
		return nonFiniteFinding(s.Name + " = " + num(s.Value) + at(s))
	}
	for i, x := range s.Values {
		if !isFinite(x) {
			return nonFiniteFinding(s.Name + "[" + strconv.Itoa(i) + "] = " + num(x) + at(s))
		}
	}
	return finding{}, false
}

func nonFiniteFinding(ev string) (finding, bool) {
	return finding{state: protocol.Error, message: "non-finite value: " + ev, evidence: ev, severity: 1}, true
}

func (nonFinite) line(kind protocol.ObservationKind, line string) (finding, bool) {
	tok, ok := printedNonFinite(line)
	if !ok {
		return finding{}, false
	}
	return finding{
		state:    protocol.Error,
		message:  "non-finite value printed: " + tok,
		evidence: string(kind) + ": " + line,
		severity: 1,
	}, true
}

// printedNonFinite finds a NaN/Inf printed as a number in line (see nonFinite).
func printedNonFinite(line string) (string, bool) {
	if !mayHoldNonFinite(line) {
		return "", false
	}
	for i := 0; i < len(line); {
		if isTokenSep(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && !isTokenSep(line[j]) {
			j++
		}
		tok := line[i:j]
		if isNonFiniteWord(tok) {
			if left := valueBefore(line, i); left != notValue && valueAfter(line, j, left == assigned) {
				return tok, true
			}
		}
		i = j
	}
	return "", false
}

// mayHoldNonFinite is a cheap filter: does line contain "nan" or "inf" in any case?
func mayHoldNonFinite(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		switch s[i] | 0x20 {
		case 'n':
			if s[i+1]|0x20 == 'a' && s[i+2]|0x20 == 'n' {
				return true
			}
		case 'i':
			if s[i+1]|0x20 == 'n' && s[i+2]|0x20 == 'f' {
				return true
			}
		}
	}
	return false
}

// isTokenSep separates number-like tokens: blanks and punctuation around values.
func isTokenSep(c byte) bool {
	switch c {
	case ' ', '\t', '=', ':', ',', ';', '[', ']', '(', ')', '{', '}', '|', '\'', '"':
		return true
	}
	return false
}

// What stands left of a token.
const (
	notValue = iota // a word: the token is prose
	inList          // line start, an opening bracket, a separator or another number
	assigned        // `=` or `:`: the token is the value of a name
)

// valueBefore tells what is left of the token starting at i.
func valueBefore(s string, i int) int {
	k := i - 1
	for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
		k--
	}
	if k < 0 {
		return inList
	}
	switch s[k] {
	case '=', ':':
		return assigned
	case '[', '(', '{', ',', ';', '|':
		return inList
	}
	if isTokenSep(s[k]) {
		return notValue
	}
	e := k + 1
	for k >= 0 && !isTokenSep(s[k]) {
		k--
	}
	if isNumberToken(s[k+1 : e]) {
		return inList
	}
	return notValue
}

// valueAfter reports whether the token ending at j is in a value's place on its right: the
// line end, a closing bracket or separator, another number, or — when the token is itself a
// name's value — the next `name =` pair.
func valueAfter(s string, j int, assigned bool) bool {
	k := j
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if k >= len(s) {
		return true
	}
	switch s[k] {
	case ',', ';', ']', ')', '}', '|':
		return true
	}
	if isTokenSep(s[k]) {
		return false
	}
	e := k
	for e < len(s) && !isTokenSep(s[e]) {
		e++
	}
	if tok := s[k:e]; isNumberToken(tok) || tok == "+" || tok == "-" { // "NaN - NaNi"
		return true
	}
	if !assigned {
		return false
	}
	for e < len(s) && (s[e] == ' ' || s[e] == '\t') {
		e++
	}
	return e < len(s) && (s[e] == '=' || s[e] == ':')
}

// isNonFiniteWord: [+-]? (nan | inf | infinity) [ij]?, any case.
func isNonFiniteWord(t string) bool {
	if t != "" && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	if n := len(t); n == 4 || n == 9 {
		if c := t[n-1] | 0x20; c == 'i' || c == 'j' {
			t = t[:n-1]
		}
	}
	return equalFoldASCII(t, "nan") || equalFoldASCII(t, "inf") || equalFoldASCII(t, "infinity")
}

func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// isNumberToken reports whether t is a printed number: decimal or exponent form (with
// Fortran's D exponent), a trailing dot (numpy's `1.`), or a non-finite word.
func isNumberToken(t string) bool {
	if isNonFiniteWord(t) {
		return true
	}
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	digits := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(t) && (t[i]|0x20 == 'e' || t[i]|0x20 == 'd') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		exp := 0
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(t)
}
