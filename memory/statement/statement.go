// Package statement is what memory knows about the words of a scientific statement: the key
// under which exact duplicates merge (Normalize), what makes two statements different facts even
// when they share almost every word (Distinguish: a number after unit normalisation, a unit, a
// sign, a negation or polarity word, a comparison, an entity name), how much two statements
// share (ContentSimilarity, Overlap), the entities a text mentions (Extract, from labmate's
// dictionary of materials, software, methods, parameters and properties), and the words that
// carry no content of their own (StopWord). Its tokenizer knows numbers with their units
// (normalised to base units), signs and exponents; its stemmer the commonest English endings.
package statement

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labmate/labmate/internal/rank"
)

// Words is a text's words for full-text search and embeddings: lower case, letters and digits
// only, single spaces.
func Words(text string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// Normalize is the key under which exact duplicates are merged: lower case, single spaces,
// letters and digits, and what changes a statement's meaning without changing its words — a
// number's sign, decimal point and exponent ("-5", "3.615", "1e-3"), comparison and relation
// symbols (< > ≤ ≥ ≠ ≈ ± % / ^ ×). "T > -5 K" and "T < 5 K" have different keys; "Use ode15s
// for stiff problems." and "use ODE15s  for stiff problems" the same.
func Normalize(text string) string {
	var b strings.Builder
	rs := []rune(text)
	space := false
	emit := func(s string) {
		if b.Len() > 0 && space {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(s)
	}
	alnum := func(i int) bool {
		return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
	}
	digit := func(i int) bool { return i >= 0 && i < len(rs) && unicode.IsDigit(rs[i]) }
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			emit(strings.ToLower(string(r)))
			// A decimal point or an exponent's sign inside a number stays.
			if unicode.IsDigit(r) && i+2 < len(rs) && rs[i+1] == '.' && digit(i+2) {
				b.WriteByte('.')
				i++
			} else if (r == 'e' || r == 'E') && digit(i-1) && i+2 < len(rs) && (rs[i+1] == '-' || rs[i+1] == '−' || rs[i+1] == '+') && digit(i+2) {
				if rs[i+1] != '+' {
					b.WriteByte('-')
				}
				i++
			}
		case (r == '-' || r == '−') && !alnum(i-1) && (digit(i+1) || i+2 < len(rs) && rs[i+1] == '.' && digit(i+2)):
			emit("-") // a minus sign: glued to its number
			space = false
		case r == '.' && digit(i+1) && !digit(i-1):
			emit("0.") // .5 is 0.5
		case r == '<' || r == '>' || r == '!' && i+1 < len(rs) && rs[i+1] == '=':
			sym := string(r)
			if i+1 < len(rs) && rs[i+1] == '=' {
				sym = map[rune]string{'<': "≤", '>': "≥", '!': "≠"}[r]
				i++
			}
			space = true
			emit(sym)
			space = true
		case strings.ContainsRune("≤≥≠≈~±%/^×", r):
			if r == '~' {
				r = '≈'
			}
			space = true
			emit(string(r))
			space = true
		default:
			space = true
		}
	}
	return b.String()
}

// tokKind is what a token of a statement is.
type tokKind int

const (
	tokWord   tokKind = iota
	tokNumber         // a quantity: a number and its unit, if any
	tokSym            // a comparison or relation symbol
	tokBreak          // a clause boundary
)

type token struct {
	kind tokKind
	text string // as written (for words), or the quantity's key
	low  string // lower case (words)
	unit string // a number's canonical unit ("" when none)
	cap  bool   // a word that starts with an upper-case letter
	upos int    // index of the first word of its sentence (for the capitalisation rule)
}

// unit is a unit's dimension and its factor (and offset) to that dimension's base unit.
type unit struct {
	dim            string
	factor, offset float64
}

// units are matched case-sensitively as written, then in lower case for the spelled-out names.
var units = func() map[string]unit {
	m := map[string]unit{}
	add := func(dim string, factor float64, names ...string) {
		for _, n := range names {
			m[n] = unit{dim: dim, factor: factor}
		}
	}
	add("m", 1, "m", "metre", "metres", "meter", "meters")
	add("m", 1e3, "km")
	add("m", 1e-2, "cm")
	add("m", 1e-3, "mm")
	add("m", 1e-6, "µm", "μm", "um", "micron", "microns", "micrometre", "micrometer")
	add("m", 1e-9, "nm", "nanometre", "nanometer", "nanometres", "nanometers")
	add("m", 1e-12, "pm")
	add("m", 1e-10, "Å", "Ang", "ang", "angstrom", "angstroms", "Angstrom", "Angstroms", "ångström", "Ångström", "ångströms")
	add("m", 0.529177210903e-10, "bohr", "Bohr", "bohrs")
	add("s", 1, "s", "sec", "secs", "second", "seconds")
	add("s", 1e-3, "ms", "millisecond", "milliseconds")
	add("s", 1e-6, "µs", "μs", "us", "microsecond", "microseconds")
	add("s", 1e-9, "ns", "nanosecond", "nanoseconds")
	add("s", 1e-12, "ps", "picosecond", "picoseconds")
	add("s", 1e-15, "fs", "femtosecond", "femtoseconds")
	add("s", 60, "min", "mins", "minute", "minutes")
	add("s", 3600, "h", "hr", "hrs", "hour", "hours")
	add("s", 86400, "day", "days")
	add("Hz", 1, "Hz", "hertz")
	add("Hz", 1e3, "kHz")
	add("Hz", 1e6, "MHz")
	add("Hz", 1e9, "GHz")
	add("Hz", 1e12, "THz")
	const ev = 1.602176634e-19
	add("J", 1, "J", "joule", "joules")
	add("J", 1e3, "kJ")
	add("J", 4.184, "cal")
	add("J", 4184, "kcal")
	add("J", ev, "eV", "electronvolt", "electronvolts")
	add("J", 1e-3*ev, "meV")
	add("J", 1e3*ev, "keV")
	add("J", 13.605693122994*ev, "Ry", "Rydberg", "rydberg", "Rydbergs", "rydbergs")
	add("J", 27.211386245988*ev, "Ha", "Hartree", "hartree", "Hartrees", "hartrees")
	add("K", 1, "K", "kelvin", "Kelvin", "kelvins")
	add("K", 1e-3, "mK")
	add("Pa", 1, "Pa", "pascal", "pascals")
	add("Pa", 1e3, "kPa")
	add("Pa", 1e6, "MPa")
	add("Pa", 1e9, "GPa")
	add("Pa", 1e5, "bar", "bars")
	add("Pa", 1e2, "mbar")
	add("Pa", 1e8, "kbar")
	add("Pa", 101325, "atm")
	add("Pa", 133.322368, "Torr", "torr")
	add("kg", 1, "kg", "kilogram", "kilograms")
	add("kg", 1e-3, "g", "gram", "grams")
	add("kg", 1e-6, "mg", "milligram", "milligrams")
	add("kg", 1e-9, "µg", "μg", "ug")
	add("mol", 1, "mol", "mole", "moles")
	add("mol", 1e-3, "mmol")
	add("mol", 1e-6, "µmol", "μmol", "umol")
	add("m3", 1e-3, "L", "litre", "liter", "litres", "liters")
	add("m3", 1e-6, "mL", "ml", "millilitre", "milliliter")
	add("m3", 1e-9, "µL", "μL", "uL")
	add("V", 1, "V", "volt", "volts")
	add("V", 1e-3, "mV")
	add("V", 1e3, "kV")
	add("A", 1, "A", "ampere", "amperes", "amp", "amps")
	add("A", 1e-3, "mA")
	add("A", 1e-6, "µA", "μA", "uA")
	add("W", 1, "W", "watt", "watts")
	add("W", 1e3, "kW")
	add("W", 1e-3, "mW")
	add("ohm", 1, "Ω", "ohm", "ohms")
	add("%", 1, "%", "percent", "pct")
	add("rad", 1, "rad", "radian", "radians")
	add("rad", math.Pi/180, "°", "deg", "degree", "degrees")
	m["°C"] = unit{dim: "K", factor: 1, offset: 273.15}
	m["degC"] = unit{dim: "K", factor: 1, offset: 273.15}
	m["celsius"] = unit{dim: "K", factor: 1, offset: 273.15}
	m["Celsius"] = unit{dim: "K", factor: 1, offset: 273.15}
	return m
}()

// lookupUnit finds a unit as written, then its spelled-out name in lower case.
func lookupUnit(s string) (unit, bool) {
	if u, ok := units[s]; ok {
		return u, true
	}
	if utf8.RuneCountInString(s) > 3 {
		u, ok := units[strings.ToLower(s)]
		return u, ok
	}
	return unit{}, false
}

// quantityKey is a number in its dimension's base unit, to nine significant digits.
func quantityKey(v float64, u unit, ok bool) string {
	if !ok {
		return strconv.FormatFloat(v, 'g', 9, 64)
	}
	si := v*u.factor + u.offset
	return strconv.FormatFloat(si, 'g', 9, 64) + " " + u.dim
}

// tokenize splits a statement into words, quantities (a number with its unit), comparison
// symbols and clause boundaries.
func tokenize(text string) []token {
	rs := []rune(text)
	var out []token
	sentence := 0 // index in out of the sentence's first word
	isDigit := func(i int) bool { return i >= 0 && i < len(rs) && unicode.IsDigit(rs[i]) }
	isWordRune := func(i int) bool {
		return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]) || rs[i] == '_' || rs[i] == 'µ')
	}
	brk := func() {
		if len(out) > 0 && out[len(out)-1].kind != tokBreak {
			out = append(out, token{kind: tokBreak})
		}
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			if r == '\n' {
				brk()
				sentence = len(out)
			}
			i++
		case r == ':':
			sentence = len(out) // "Relay test: Oscillation …" starts anew
			i++
		case r == ',' || r == ';' || r == '!' || r == '?' || r == '.' && !isDigit(i+1):
			brk()
			if r != ',' && r != ';' {
				sentence = len(out)
			}
			i++
		case isDigit(i) || (r == '-' || r == '−' || r == '+' || r == '.') && (isDigit(i+1) || i+2 < len(rs) && rs[i+1] == '.' && isDigit(i+2)) && !isWordRune(i-1):
			j, tok := scanNumber(rs, i)
			out = append(out, tok)
			i = j
		case unicode.IsLetter(r) || r == '_' || r == '°':
			j := i
			for j < len(rs) && (isWordRune(j) || rs[j] == '°' || rs[j] == '\'' && isWordRune(j+1) && j > i ||
				rs[j] == '.' && j > i && isWordRune(j-1) && unicode.IsLetter(rs[j-1]) && j+1 < len(rs) && unicode.IsLetter(rs[j+1]) && !unicode.IsUpper(rs[j+1])) {
				j++
			}
			w := string(rs[i:j])
			if n := len(w); n > 2 && (strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "’s")) {
				w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s") // Octave's ode45 is Octave's
			}
			if w == "°" && j < len(rs) && (rs[j] == 'C' || rs[j] == 'F') {
				w, j = "°"+string(rs[j]), j+1
			}
			// A version written v7.2 is the number 7.2.
			if len(w) > 1 && (w[0] == 'v' || w[0] == 'V') && isDigit(i+1) {
				k, tok := scanNumber(rs, i+1)
				if k >= j {
					out = append(out, tok)
					i = k
					continue
				}
			}
			first, _ := utf8.DecodeRuneInString(w)
			out = append(out, token{kind: tokWord, text: w, low: strings.ToLower(w), cap: unicode.IsUpper(first), upos: sentence})
			i = j
		case strings.ContainsRune("<>≤≥≠≈~±=", r):
			sym := string(r)
			if i+1 < len(rs) && rs[i+1] == '=' && (r == '<' || r == '>') {
				sym = map[rune]string{'<': "≤", '>': "≥"}[r]
				i++
			}
			if sym == "~" {
				sym = "≈"
			}
			if sym != "=" {
				out = append(out, token{kind: tokSym, text: sym})
			}
			i++
		case r == '%':
			out = append(out, token{kind: tokWord, text: "%", low: "%", upos: sentence})
			i++
		default:
			i++
		}
	}
	// Units written after a number, separated by a space ("3.615 Angstrom", "38 %"), and compound
	// units ("kJ/mol") are attached to it.
	var merged []token
	for k := 0; k < len(out); k++ {
		t := out[k]
		if t.kind == tokNumber && t.unit == "" && k+1 < len(out) && out[k+1].kind == tokWord {
			if u, ok := lookupUnit(out[k+1].text); ok {
				t = attachUnit(t, out[k+1].text, u)
				k++
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// scanNumber reads a number at rs[i:]: a sign, digits, a decimal part, an exponent (1e-3,
// 1.2×10^-3), a dotted version (7.2.1) and a unit written right after it (300K, 10ms, 38%).
func scanNumber(rs []rune, i int) (int, token) {
	start := i
	neg := false
	if rs[i] == '-' || rs[i] == '−' || rs[i] == '+' {
		neg = rs[i] != '+'
		i++
	}
	j := i
	for j < len(rs) && unicode.IsDigit(rs[j]) {
		j++
	}
	dots := 0
	for j+1 < len(rs) && rs[j] == '.' && unicode.IsDigit(rs[j+1]) {
		dots++
		j++
		for j < len(rs) && unicode.IsDigit(rs[j]) {
			j++
		}
	}
	num := string(rs[i:j])
	if dots > 1 { // a version, not a number
		t := token{kind: tokNumber, text: "v" + num}
		return j, t
	}
	v, _ := strconv.ParseFloat(strings.TrimPrefix(num, "."), 64)
	if strings.HasPrefix(num, ".") {
		v, _ = strconv.ParseFloat("0"+num, 64)
	}
	exp := 0.0
	hasExp := false
	k := j
	if k < len(rs) && (rs[k] == 'e' || rs[k] == 'E') {
		m := k + 1
		sign := 1.0
		if m < len(rs) && (rs[m] == '-' || rs[m] == '−' || rs[m] == '+') {
			if rs[m] != '+' {
				sign = -1
			}
			m++
		}
		n := m
		for n < len(rs) && unicode.IsDigit(rs[n]) {
			n++
		}
		if n > m {
			e, _ := strconv.Atoi(string(rs[m:n]))
			exp, hasExp, j = sign*float64(e), true, n
		}
	}
	if !hasExp { // 1.2×10^-3, 1.2 x 10^-3, 10^-3
		m := j
		for m < len(rs) && rs[m] == ' ' {
			m++
		}
		if m < len(rs) && strings.ContainsRune("×x*·", rs[m]) {
			n := m + 1
			for n < len(rs) && rs[n] == ' ' {
				n++
			}
			if n+2 < len(rs) && rs[n] == '1' && rs[n+1] == '0' && rs[n+2] == '^' {
				if e, end, ok := scanExponent(rs, n+3); ok {
					exp, hasExp, j = e, true, end
				}
			}
		} else if num == "10" && j < len(rs) && rs[j] == '^' {
			if e, end, ok := scanExponent(rs, j+1); ok {
				v, exp, hasExp, j = 1, e, true, end
			}
		}
	}
	if hasExp {
		v *= math.Pow(10, exp)
	}
	if neg {
		v = -v
	}
	t := token{kind: tokNumber}
	t.text = quantityKey(v, unit{}, false)
	// A unit right after the digits.
	if j < len(rs) {
		m := j
		for m < len(rs) && (unicode.IsLetter(rs[m]) || rs[m] == 'µ' || rs[m] == '°' || rs[m] == '%') {
			m++
			if rs[m-1] == '%' {
				break
			}
		}
		if m > j {
			w := string(rs[j:m])
			if u, ok := lookupUnit(w); ok && (m == len(rs) || !unicode.IsDigit(rs[m]) && rs[m] != '_') {
				return m, attachUnit(token{kind: tokNumber, text: fmtValue(v)}, w, u)
			}
			// Digits and letters together are a name (2Aug2023, 6-31G), not a number.
			if !hasExp {
				n := m
				for n < len(rs) && (unicode.IsLetter(rs[n]) || unicode.IsDigit(rs[n]) || rs[n] == '_') {
					n++
				}
				w := string(rs[start:n])
				return n, token{kind: tokWord, text: w, low: strings.ToLower(w)}
			}
		}
	}
	t.text = fmtValue(v)
	return j, t
}

func scanExponent(rs []rune, i int) (float64, int, bool) {
	sign := 1.0
	if i < len(rs) && (rs[i] == '-' || rs[i] == '−' || rs[i] == '+') {
		if rs[i] != '+' {
			sign = -1
		}
		i++
	}
	n := i
	for n < len(rs) && unicode.IsDigit(rs[n]) {
		n++
	}
	if n == i {
		return 0, i, false
	}
	e, _ := strconv.Atoi(string(rs[i:n]))
	return sign * float64(e), n, true
}

func fmtValue(v float64) string { return strconv.FormatFloat(v, 'g', 9, 64) }

// attachUnit turns a bare number token into a quantity in its dimension's base unit.
func attachUnit(t token, written string, u unit) token {
	v, err := strconv.ParseFloat(t.text, 64)
	if err != nil {
		return t // a version
	}
	t.text = quantityKey(v, u, true)
	t.unit = u.dim
	return t
}

// polarity maps the words that turn a statement around to a label: two statements with
// different labels (or the same labels attached to different numbers) say different things.
var polarity = func() map[string]string {
	m := map[string]string{}
	add := func(label string, words ...string) {
		for _, w := range words {
			m[w] = label
		}
	}
	add("not", "not", "no", "never", "none", "nothing", "cannot", "can't", "won't", "don't", "doesn't", "didn't",
		"isn't", "aren't", "wasn't", "weren't", "shouldn't", "mustn't", "couldn't", "wouldn't", "hasn't", "haven't",
		"without", "neither", "nor", "non", "lacks", "lack", "lacking", "absent", "unable")
	add("converge", "converge", "converges", "converged", "converging", "convergence", "convergent")
	add("diverge", "diverge", "diverges", "diverged", "diverging", "divergence", "divergent", "explode", "explodes",
		"exploded", "exploding", "explosion", "blows", "blew", "blow")
	add("fail", "fail", "fails", "failed", "failing", "failure", "failures", "crash", "crashes", "crashed", "breaks", "broke", "broken")
	add("succeed", "succeed", "succeeds", "succeeded", "success", "successful", "successfully", "works", "worked", "passes", "passed")
	add("stable", "stable", "stability", "stabilizes", "stabilises", "stabilized", "stabilised", "robust")
	add("unstable", "unstable", "instability", "instabilities", "destabilizes", "destabilises")
	add("oscillate", "oscillate", "oscillates", "oscillated", "oscillating", "oscillation", "oscillations", "oscillatory", "sloshing", "sloshes")
	add("stall", "stall", "stalls", "stalled", "stagnates", "stagnated", "stagnation", "hangs", "hung")
	add("more", "increase", "increases", "increased", "increasing", "grows", "grow", "grew", "growing", "rises", "rise",
		"rose", "rising", "higher", "larger", "greater", "bigger", "more", "above", "exceeds", "exceed", "exceeded",
		"exceeding", "over", "raise", "raises", "raised", "maximum", "max", "overestimates", "overestimate")
	add("less", "decrease", "decreases", "decreased", "decreasing", "shrinks", "shrink", "shrank", "drops", "drop",
		"dropped", "falls", "fall", "fell", "lower", "smaller", "less", "fewer", "below", "under", "reduce", "reduces",
		"reduced", "reducing", "minimum", "min", "underestimates", "underestimate")
	add("faster", "faster", "quicker", "speeds", "accelerates")
	add("slower", "slower", "slows")
	add("true", "true")
	add("false", "false")
	add("enable", "enable", "enables", "enabled")
	add("disable", "disable", "disables", "disabled", "off")
	add("allow", "allow", "allows", "allowed", "permitted", "permits")
	add("forbid", "forbid", "forbids", "forbidden", "disallowed", "prohibited")
	add("accept", "accept", "accepts", "accepted")
	add("reject", "reject", "rejects", "rejected")
	add("valid", "valid", "correct", "correctly", "accurate", "accurately")
	add("invalid", "invalid", "incorrect", "incorrectly", "wrong", "wrongly", "inaccurate")
	add("safe", "safe", "safely")
	add("unsafe", "unsafe", "dangerous")
	add("always", "always")
	add("sometimes", "sometimes", "occasionally", "often", "rarely", "seldom")
	add("may", "may", "might")
	add("avoid", "avoid", "avoids", "avoided")
	add("prefer", "prefer", "prefers", "preferred", "instead")
	add("before", "before", "earlier", "prior")
	add("after", "after", "later")
	add("better", "improve", "improves", "improved", "improvement", "better", "best")
	add("worse", "worsen", "worsens", "worse", "worst", "degrades", "degraded")
	add("only", "only")
	add("exact", "exactly")
	add("approx", "approximately", "about", "around", "roughly", "nearly", "almost")
	return m
}()

// phrases are two- or three-word comparisons that mean something else than their words.
var phrases = map[string]string{
	"at least": "min", "at most": "max2", "up to": "max2", "no more than": "max2", "no less than": "min",
	"not more than": "max2", "not less than": "min", "no longer": "not", "less than": "less", "more than": "more",
	"greater than": "more", "fewer than": "less",
}

// clauseWords end a clause as a comma does.
var clauseWords = map[string]bool{"and": true, "but": true, "while": true, "whereas": true, "although": true,
	"though": true, "however": true, "yet": true, "or": true, "then": true, "whilst": true}

// functionWords are the grammar of a sentence or a question: articles, prepositions,
// pronouns, auxiliaries, question words.
var functionWords = map[string]bool{}

// stopWords carry no content of their own in a statement: the function words, and the words
// every report of a result uses.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of for to in at on by with from into onto upon as is are was were be been being
		it its this that these those there here which who whom whose what when where how than then so such
		has have had do does did done we i me you he she they them our your their my his her can could
		would will shall if`) {
		functionWords[w] = true
		stopWords[w] = true
	}
	for _, w := range strings.Fields(`using use used uses via per each every any some all both either one
		also very quite just still even much many most further same other another
		s t let lets get gets got make makes made give gives gave given show shows showed shown
		found find finds measured measure measures reported report reports value values result results
		run runs ran must should need needs needed required requires require necessary recommended keep kept`) {
		stopWords[w] = true
	}
}

// FunctionWord reports whether w, in lower case, is grammar rather than content: an article,
// preposition, pronoun, auxiliary or question word ("the", "into", "how", "does"), or a word that
// joins clauses ("and", "or", "then"). Search drops them from a question (knowledge/sqlite);
// a statement's content words leave out these and the words every report uses ("value",
// "found", "using").
func FunctionWord(w string) bool { return functionWords[w] || clauseWords[w] }

// analysis is what Distinguish compares.
type analysis struct {
	clauses  []string        // per clause: its quantities, symbols and polarity labels, sorted
	entities map[string]bool // canonical entity names
	units    map[string]bool // units written without a number ("in eV")
	content  map[string]bool // content words: stemmed, entities canonical, quantities as keys
}

func analyse(text string) *analysis {
	toks := tokenize(text)
	a := &analysis{entities: map[string]bool{}, units: map[string]bool{}, content: map[string]bool{}}
	for _, e := range extractFromTokens(toks) {
		a.entities[e.Name] = true
		a.content["@"+e.Name] = true
	}
	covered := entityWordSet(toks)
	var clause []string
	var groups [][]string
	flush := func() {
		if len(clause) > 0 {
			groups = append(groups, clause)
		}
		clause = nil
	}
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		switch t.kind {
		case tokBreak:
			flush()
		case tokNumber:
			clause = append(clause, "#"+t.text)
			a.content["#"+t.text] = true
		case tokSym:
			clause = append(clause, "<"+t.text)
		case tokWord:
			// A phrase of two or three words.
			if k+1 < len(toks) && toks[k+1].kind == tokWord {
				p2 := t.low + " " + toks[k+1].low
				p3 := ""
				if k+2 < len(toks) && toks[k+2].kind == tokWord {
					p3 = p2 + " " + toks[k+2].low
				}
				if l, ok := phrases[p3]; ok && p3 != "" {
					clause = append(clause, "~"+l)
					k += 2
					continue
				}
				if l, ok := phrases[p2]; ok {
					clause = append(clause, "~"+l)
					k++
					continue
				}
			}
			if clauseWords[t.low] {
				flush()
				continue
			}
			if l, ok := polarity[t.low]; ok {
				clause = append(clause, "~"+l)
				a.content["~"+l] = true
				continue
			}
			if strings.HasSuffix(t.low, "n't") {
				clause = append(clause, "~not")
				continue
			}
			if u, ok := lookupUnit(t.text); ok && len(t.text) > 0 && !covered[k] && !stopWords[t.low] && (t.text != "A" && t.text != "h" && t.text != "s" && t.text != "g" && t.text != "m" || k > 0 && toks[k-1].low == "in") {
				a.units[u.dim+"/"+strconv.FormatFloat(u.factor, 'g', 6, 64)] = true
				continue
			}
			if covered[k] || stopWords[t.low] {
				continue
			}
			a.content[stem(t.low)] = true
		}
	}
	flush()
	// A clause of numbers alone next to a clause of polarity words alone is one statement split
	// by a comma ("For dt = 0.06, explicit Euler diverges").
	kinds := func(g []string) (nums, labels bool) {
		for _, p := range g {
			if p[0] == '#' {
				nums = true
			} else {
				labels = true
			}
		}
		return
	}
	for i := 0; i+1 < len(groups); i++ {
		n1, l1 := kinds(groups[i])
		n2, l2 := kinds(groups[i+1])
		if n1 && !l1 && l2 && !n2 || l1 && !n1 && n2 && !l2 {
			groups[i] = append(groups[i], groups[i+1]...)
			groups = slices.Delete(groups, i+1, i+2)
		}
	}
	for _, g := range groups {
		slices.Sort(g)
		a.clauses = append(a.clauses, strings.Join(g, "|"))
	}
	slices.Sort(a.clauses)
	return a
}

// stem strips the commonest English endings, enough for "problems" to meet "problem".
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// Distinguish says why a and b are different facts — a number (after unit normalisation), a
// unit, a sign, a negation or polarity word, a comparison or an entity name differs — or ""
// when nothing tells them apart but wording. Texts it does not tell apart are not necessarily
// duplicates (see ContentSimilarity); texts it tells apart never are.
func Distinguish(a, b string) string {
	x, y := analyse(a), analyse(b)
	if d := setDiff(x.entities, y.entities); d != "" {
		return "different entities: " + d
	}
	qa, qb := quantities(x), quantities(y)
	if !slices.Equal(qa, qb) {
		return fmt.Sprintf("different numbers or units: %s vs %s", describeList(qa), describeList(qb))
	}
	if d := setDiff(x.units, y.units); d != "" {
		return "different units: " + d
	}
	if pa, pb := labels(x), labels(y); !slices.Equal(pa, pb) {
		return fmt.Sprintf("different polarity or comparison: %s vs %s", describeList(pa), describeList(pb))
	}
	// Which number goes with which polarity word (or other number) matters when both state
	// several things; a statement of one clause says nothing about it.
	if !slices.Equal(x.clauses, y.clauses) && len(x.clauses) > 1 && len(y.clauses) > 1 {
		return fmt.Sprintf("the same numbers and words in other relations: %s vs %s", strings.Join(x.clauses, "; "), strings.Join(y.clauses, "; "))
	}
	return ""
}

func describeList(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// quantities are the analysis's numbers, sorted.
func quantities(a *analysis) []string {
	var out []string
	for _, c := range a.clauses {
		for p := range strings.SplitSeq(c, "|") {
			if strings.HasPrefix(p, "#") {
				out = append(out, p[1:])
			}
		}
	}
	slices.Sort(out)
	return out
}

// labels are the analysis's polarity labels and comparison symbols, sorted.
func labels(a *analysis) []string {
	var out []string
	for _, c := range a.clauses {
		for p := range strings.SplitSeq(c, "|") {
			if strings.HasPrefix(p, "~") || strings.HasPrefix(p, "<") {
				out = append(out, p[1:])
			}
		}
	}
	slices.Sort(out)
	return out
}

func setDiff(a, b map[string]bool) string {
	var only []string
	for k := range a {
		if !b[k] {
			only = append(only, k+" (first only)")
		}
	}
	for k := range b {
		if !a[k] {
			only = append(only, k+" (second only)")
		}
	}
	slices.Sort(only)
	return strings.Join(only, ", ")
}

// ContentSimilarity is the Jaccard similarity of two statements' content words: stop words
// dropped, endings stemmed, entity names canonical ("copper" is "Cu"), quantities in base units
// ("3.615 Å" is "0.3615 nm").
func ContentSimilarity(a, b string) float64 {
	x, y := analyse(a).content, analyse(b).content
	return rank.Jaccard(x, y)
}

// Overlap counts the content words two texts share (stop words dropped, endings stemmed,
// entities canonical): how much a remembered statement is about the text at hand.
func Overlap(a, b string) int {
	x, y := analyse(a).content, analyse(b).content
	n := 0
	for w := range x {
		if y[w] && !strings.HasPrefix(w, "#") && !strings.HasPrefix(w, "~") {
			n++
		}
	}
	return n
}
