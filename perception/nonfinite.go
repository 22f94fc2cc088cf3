package perception

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/protocol"
)

// nonFinite judges NaN and ±Inf in context: where in the run they appear, not merely that
// they appear.
//
// A telemetry series (a name and its source: the helper, printed lines, a followed file) that
// had finite values and turns NaN has been corrupted — a computation that produced NaN does
// not recover, and everything computed from it is garbage: a Warning at its first NaN and an
// Error when the next sample is NaN too. (One NaN between finite values can be a sweep's
// legitimate answer: margin's crossover frequency `Wcg = NaN` for the one design whose phase
// never reaches −180°.) ±Inf is a value more often than a fault — Octave's margin gives
// `Gm = Inf` for an infinite gain margin, a search starts from `best = inf`, a limit is
// unbounded — so a finite series turning infinite is a Warning, and an Error only when it
// stays infinite for three samples in a row. A series whose role is known (see Role: a
// residual, a loss, a conserved or controlled quantity, a log-likelihood) has no such excuse:
// its first NaN or ±Inf after finite values is an Error — a log-likelihood that underflowed
// to -inf mid-run, whatever the spelling (-inf, -Inf, -Infinity). A series that is non-finite
// from its first sample is a printed result and stays Normal, and so does one that returns to
// the non-finite value it started with: a scan that starts over (a profile log-likelihood,
// -inf below the data's range, scanned again for the next data set) is not a quantity that
// broke.
//
// Printed numbers that belong to no series — a matrix row, a numpy array, a dict value —
// are judged as one anonymous series: the first line with a NaN or Inf is a Warning, NaN on
// three lines spread over at least a second an Error (a loop printing garbage, not one result).
// A word counts only when it is a number in a number's place: nan, inf or infinity in any
// case, with an optional sign and an optional imaginary unit (NaNi, infj), preceded by the
// line start, one of `= : [ ( { , ; |`, or another number, and followed by the line end, one
// of `, ; ] ) } |`, another number, or (when it follows `=` or `:`) the next `name =` pair.
// So `information`, `Infinity is the limit`, `NaN count: 0`, `checking for NaN values` and
// `the NaN column` are prose. A `name = NaN` or `name: NaN` on stdout, stderr or a followed
// file is a sample of the series name and is judged as such, not as an anonymous number.
type nonFinite struct {
	lines    int       // printed lines with an anonymous non-finite number
	first    time.Time // the first of them
	reported int       // 1 Warning, 2 Error
}

// nonFiniteState is one series' history for the non-finite detector.
type nonFiniteState struct {
	finite bool // a finite sample was seen
	nans   int  // NaN samples in a row since
	infs   int  // ±Inf samples in a row since
	start  int8 // the kind of non-finite value the series started with, before any finite one (nonFiniteKind)
}

// nonFiniteKind is the kind of the first non-finite element of s: 1 +Inf, -1 -Inf, 2 NaN, 0
// none.
func nonFiniteKind(s *protocol.Sample) int8 {
	kind := func(x float64) int8 {
		switch {
		case math.IsNaN(x):
			return 2
		case math.IsInf(x, 1):
			return 1
		case math.IsInf(x, -1):
			return -1
		}
		return 0
	}
	if len(s.Values) == 0 {
		return kind(s.Value)
	}
	for _, x := range s.Values {
		if k := kind(x); k != 0 {
			return k
		}
	}
	return 0
}

// The anonymous rule: NaN on this many lines spread over at least this long.
const (
	// nonFiniteInfRun is how many ±Inf samples in a row, after finite ones, make an Error.
	nonFiniteInfRun = 3
	nonFiniteRepeat = 3
	nonFiniteSpread = time.Second
)

// sample judges one sample of sr at t; finite says whether all of its elements are finite.
func (nonFinite) sample(t time.Time, sr *series, s *protocol.Sample, finite bool) (finding, bool) {
	st := &sr.nf
	if finite {
		st.finite, st.nans, st.infs = true, 0, 0
		return finding{}, false
	}
	if !st.finite {
		if st.start == 0 {
			st.start = nonFiniteKind(s)
		}
		return finding{}, false // a printed result: margin's Gm = Inf, Wcg = NaN
	}
	if st.start != 0 && nonFiniteKind(s) == st.start {
		// The value the series started with, again: a scan that starts over (a profile
		// likelihood that is -inf below the data's range, for each new data set), not a
		// quantity that broke.
		return finding{}, false
	}
	ev := nonFiniteEvidence(s)
	if sr.role.role != RoleUnknown && len(s.Values) == 0 {
		return finding{state: protocol.Error, message: sr.label() + " turned non-finite after finite values: " + ev + "; it is a " + sr.role.describe(),
			evidence: ev, severity: 1, role: sr.roleText()}, true
	}
	if !hasNaN(s) {
		st.nans = 0
		st.infs++
		if st.infs >= nonFiniteInfRun {
			return finding{state: protocol.Error, message: fmt.Sprintf("%s stays infinite after finite values (%d samples in a row): %s", sr.label(), st.infs, ev), evidence: ev, severity: 0.9}, true
		}
		return finding{state: protocol.Warning, message: sr.label() + " turned infinite after finite values: " + ev, evidence: ev, severity: 0.4}, true
	}
	st.infs = 0
	st.nans++
	if st.nans == 1 {
		return finding{state: protocol.Warning, message: sr.label() + " turned NaN after finite values: " + ev, evidence: ev, severity: 0.5}, true
	}
	return finding{state: protocol.Error, message: sr.label() + " stays NaN after finite values: " + ev, evidence: ev, severity: 1}, true
}

func hasNaN(s *protocol.Sample) bool {
	if len(s.Values) == 0 {
		return math.IsNaN(s.Value)
	}
	for _, x := range s.Values {
		if math.IsNaN(x) {
			return true
		}
	}
	return false
}

// nonFiniteEvidence names the (first) non-finite element of s.
func nonFiniteEvidence(s *protocol.Sample) string {
	if len(s.Values) == 0 {
		return s.Name + " = " + num(s.Value) + at(s)
	}
	for i, x := range s.Values {
		if !isFinite(x) {
			return s.Name + "[" + strconv.Itoa(i) + "] = " + num(x) + at(s)
		}
	}
	return s.Name + at(s)
}

// line judges one printed line at t. named says that `name = NaN` pairs on it are samples
// (stdout and followed files, which ParseSamples reads) and not anonymous numbers.
func (d *nonFinite) line(t time.Time, kind protocol.ObservationKind, line string, named bool) (finding, bool) {
	tok, ok := printedNonFinite(line, named)
	if !ok || d.reported == 2 {
		return finding{}, false
	}
	ev := string(kind) + ": " + line
	if isNaNWord(tok) {
		if d.lines == 0 {
			d.first = t
		}
		d.lines++
		if d.lines >= nonFiniteRepeat && t.Sub(d.first) >= nonFiniteSpread {
			d.reported = 2
			return finding{state: protocol.Error, message: fmt.Sprintf("NaN printed again and again (%d lines): %s", d.lines, tok), evidence: ev, severity: 1}, true
		}
	}
	d.reported = 1
	return finding{state: protocol.Warning, message: "non-finite value printed: " + tok, evidence: ev, severity: 0.4}, true
}

// isNaNWord: the token is a NaN (not an infinity).
func isNaNWord(t string) bool {
	v, ok := nonFiniteValue(t)
	return ok && math.IsNaN(v)
}

// printedNonFinite finds a NaN/Inf printed as a number in line (see nonFinite). With named,
// a value assigned to a plain name (`x = NaN`, `loss: nan`) does not count: it is a sample.
func printedNonFinite(line string, named bool) (string, bool) {
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
			if left := valueBefore(line, i); left != notValue && valueAfter(line, j, left == assigned) &&
				!(named && left == assigned && assignedToName(line, i)) {
				return tok, true
			}
		}
		i = j
	}
	return "", false
}

// mayHoldNonFinite is a cheap filter: does line contain "nan", "inf" or "#ind" in any case?
func mayHoldNonFinite(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		switch s[i] | 0x20 {
		case '#':
			if s[i+1]|0x20 == 'i' && s[i+2]|0x20 == 'n' {
				return true
			}
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

// assignedToName reports whether the value starting at i follows `name =` or `name:` with a
// plain name that starts the line or follows a blank, a comma, a semicolon or an opening
// bracket: the pairs ParseSamples reads as samples.
func assignedToName(s string, i int) bool {
	k := i - 1
	for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
		k--
	}
	if k < 0 || (s[k] != '=' && s[k] != ':') {
		return false
	}
	k--
	for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
		k--
	}
	e := k + 1
	for k >= 0 && isIdentByte(s[k]) {
		k--
	}
	if k+1 >= e || !isNameStart(s[k+1]) {
		return false
	}
	return k < 0 || strings.IndexByte(" \t,;([", s[k]) >= 0
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

// isNonFiniteWord: a spelling of a non-finite value (see nonFiniteValue).
func isNonFiniteWord(t string) bool {
	_, ok := nonFiniteValue(t)
	return ok
}

// nonFiniteValue reads the spellings of a non-finite value codes print: [+-]? (nan | inf |
// infinity) [ij]? in any case (C, Python, numpy, Octave, Julia, JSON's -Infinity); the
// Microsoft C runtime's 1.#INF, 1.#IND, 1.#QNAN and 1.#SNAN, with their trailing digits
// (-1.#IND00); and Fortran's overflow, a field of asterisks (`*********`): a value whose
// magnitude does not fit its format, which is +Inf for perception — what a scientist reads
// when QE or LAMMPS prints one in a numeric column. Three asterisks or fewer are emphasis.
func nonFiniteValue(t string) (float64, bool) {
	if len(t) >= 4 && strings.Trim(t, "*") == "" {
		return posInf, true
	}
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg, t = t[0] == '-', t[1:]
	}
	if len(t) > 3 && t[0] == '1' && t[1] == '.' && t[2] == '#' { // MSVC: 1.#INF00
		w := strings.TrimRight(t[3:], "0123456789")
		switch {
		case equalFoldASCII(w, "inf"):
			if neg {
				return negInf, true
			}
			return posInf, true
		case equalFoldASCII(w, "ind"), equalFoldASCII(w, "qnan"), equalFoldASCII(w, "snan"):
			return nan, true
		}
		return 0, false
	}
	if n := len(t); n == 4 || n == 9 {
		if c := t[n-1] | 0x20; c == 'i' || c == 'j' {
			t = t[:n-1]
		}
	}
	switch {
	case equalFoldASCII(t, "nan"):
		return nan, true
	case equalFoldASCII(t, "inf"), equalFoldASCII(t, "infinity"):
		if neg {
			return negInf, true
		}
		return posInf, true
	}
	return 0, false
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
