package perception

import (
	"math"
	"strconv"
	"strings"

	"github.com/labmate/labmate/protocol"
)

// ParseSamples reads telemetry from one line of printed output, as every profile does for
// stdout and followed files (a Monitor streams them through Parsed): every `name = number`,
// `name: number` or `name=number` pair becomes a sample (Octave's `x = 3.2000` display
// included). A name is a word (`x`, `E_tot`, `c_msd[4]`, `f(x)`) and may carry the
// punctuation scientists print: norms and ratios such as `||F||`, `|r|`, `dE/E0`. A number
// is decimal, with an optional exponent, or non-finite in any spelling: nan, NaN, -nan, inf,
// -Inf, Infinity. A quoted key is a name too: JSON's `{"logZ": -Infinity}`, a Python dict's
// `{'loss': 0.5}`. A line without '=' or ':' that is made only of two or more `name number` pairs,
// separated by blanks, '|', ',' or ';' — `epoch 8 | loss nan`, `epoch 8 loss 0.31`,
// `iter 12, residual 3e-5` — gives a sample per pair too. When a line also carries `t` or
// `time`, that value becomes the simulation time of the other samples on the line:
// `t=0.1 y=2e5` is one sample y=2e5 at t=0.1. The samples' source is stdout.
func ParseSamples(line string) []*protocol.Sample {
	var out []*protocol.Sample
	t, ok := readPairs(line, func(name string, v float64) {
		out = append(out, &protocol.Sample{Name: name, Value: v, Source: protocol.FromStdout})
	})
	if ok {
		tv := t
		tp := &tv
		for _, s := range out {
			s.T = tp
		}
	}
	return out
}

// readPairs calls add for each pair of line (see ParseSamples) but its time, which it
// returns (ok) when the line carries one beside other pairs; a line whose only pair is
// `t = …` gives that pair as a sample. Lines that give no sample cost no allocation.
func readPairs(line string, add func(name string, v float64)) (t float64, ok bool) {
	if !hasSep(line) {
		if pairs, whole := scanPairs(line, nil); !whole || pairs < 2 {
			return 0, false
		}
		scanPairs(line, func(name string, v float64) {
			if name == "t" || name == "time" {
				t, ok = v, true
				return
			}
			add(name, v)
		})
		return t, ok
	}
	n := 0
	var tName string
	for i := 0; i < len(line); {
		name, v, next, found := pairAt(line, i)
		i = next
		if !found {
			continue
		}
		if name == "t" || name == "time" {
			t, tName, ok = v, name, true
			continue
		}
		add(name, v)
		n++
	}
	if n == 0 && ok {
		add(tName, t)
		return 0, false
	}
	return t, ok
}

// scanPairs walks the tokens of line, which must alternate name, number; it reports the
// number of pairs and whether the whole line was pairs, calling f (when not nil) for each.
func scanPairs(line string, f func(name string, v float64)) (int, bool) {
	n := 0
	var name string
	for i := 0; i < len(line); {
		for i < len(line) && isPairSep(line[i]) && !(name == "" && line[i] == '|' && pairNormEnd(line, i) > i) {
			i++
		}
		if i >= len(line) {
			break
		}
		j := i
		if name == "" && line[i] == '|' {
			j = pairNormEnd(line, i) // a norm `||F||`, `|r|`: one name, not separators
		}
		for j < len(line) && !isPairSep(line[j]) {
			j++
		}
		tok := line[i:j]
		i = j
		if name == "" {
			if !isQuantityName(tok) {
				return n, false
			}
			name = tok
			continue
		}
		if !isNumberLike(tok) {
			return n, false
		}
		v, ok := parseValue(tok)
		if !ok {
			return n, false
		}
		if f != nil {
			f(name, v)
		}
		name = ""
		n++
	}
	return n, name == ""
}

func isPairSep(c byte) bool { return c == ' ' || c == '\t' || c == '|' || c == ',' || c == ';' }

// pairNormEnd returns the end of a norm token `|x|` or `||x||` starting at i (a bar), or i when
// there is none: one or two bars, a name without blanks or bars, as many bars again, then
// the line's end or a blank, '=', ':', ',' or ';'.
func pairNormEnd(s string, i int) int {
	b := 0
	for i+b < len(s) && s[i+b] == '|' {
		b++
	}
	if b > 2 {
		return i
	}
	j := i + b
	for j < len(s) && s[j] != '|' && s[j] != ' ' && s[j] != '\t' {
		j++
	}
	if j == i+b {
		return i
	}
	k := j
	for k < len(s) && s[k] == '|' {
		k++
	}
	if k-j != b {
		return i
	}
	if k < len(s) && s[k] == '_' { // a subscript: ||F||_2, |r|_inf
		e := k + 1
		for e < len(s) && (s[e] >= '0' && s[e] <= '9' || s[e]|0x20 >= 'a' && s[e]|0x20 <= 'z') {
			e++
		}
		if e > k+1 {
			k = e
		}
	}
	if k < len(s) && strings.IndexByte(" \t=:,;", s[k]) < 0 {
		return i
	}
	return k
}

// isNameByte: a byte a name may hold (see isQuantityName).
func isNameByte(c byte) bool {
	return isIdentByte(c) || strings.IndexByte("|/.'^()[]", c) >= 0
}

// parseValue parses a number isNumberLike accepted: ParseFloat's forms, and C's signed
// "-nan" (printf of a negative NaN, as LAMMPS prints it).
func parseValue(tok string) (float64, bool) {
	if len(tok) == 4 && (tok[0] == '-' || tok[0] == '+') && strings.EqualFold(tok[1:], "nan") {
		return math.NaN(), true
	}
	v, err := strconv.ParseFloat(tok, 64)
	return v, err == nil
}

// isNumberLike filters tokens before ParseFloat, whose failure allocates: digits with an
// optional sign, dot and exponent, or nan, inf or infinity in any case.
func isNumberLike(s string) bool {
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	if strings.EqualFold(s, "nan") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity") {
		return true
	}
	digits := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || c == 'e' || c == 'E' || ((c == '+' || c == '-') && i > 0 && s[i-1]|0x20 == 'e'):
		default:
			return false
		}
	}
	return digits
}

func hasSep(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' || s[i] == ':' {
			return true
		}
	}
	return false
}

// pairAt tries to read `name <sep> number` at i (i must start a word); next is where to go on.
func pairAt(s string, i int) (name string, v float64, next int, ok bool) {
	// Find the start of a word that is preceded by a separator (or the line start).
	for i < len(s) && !((isNameStart(s[i]) || s[i] == '|' || s[i] == '"' || s[i] == '\'') && (i == 0 || isBoundary(s[i-1]))) {
		i++
	}
	if i >= len(s) {
		return "", 0, i, false
	}
	if q := s[i]; q == '"' || q == '\'' { // a quoted key: JSON's "logZ": -Infinity, a dict's 'loss': 0.5
		end := strings.IndexByte(s[i+1:], q)
		if end <= 0 || !isQuantityName(s[i+1:i+1+end]) {
			return "", 0, i + 1, false
		}
		name = s[i+1 : i+1+end]
		return valueAt(s, name, i+2+end)
	}
	j := i + 1
	for j < len(s) && isIdentByte(s[j]) {
		j++
	}
	if j < len(s) && isNameByte(s[j]) { // punctuation: `||F||`, `dE/E0`, `c_msd[4]`
		e := j
		for e < len(s) && isNameByte(s[e]) {
			e++
		}
		if isQuantityName(s[i:e]) {
			j = e
		} else if s[i] == '|' {
			return "", 0, j, false
		}
	} else if s[i] == '|' {
		return "", 0, j, false
	}
	return valueAt(s, s[i:j], j)
}

// valueAt reads `<sep> number` after a name that ends at j.
func valueAt(s, name string, j int) (string, float64, int, bool) {
	k := skipSpaces(s, j)
	if k >= len(s) || (s[k] != '=' && s[k] != ':') {
		return "", 0, j, false
	}
	if s[k] == '=' && k+1 < len(s) && s[k+1] == '=' { // `a == b` is a comparison
		return "", 0, k + 2, false
	}
	k = skipSpaces(s, k+1)
	e := k
	for e < len(s) && !isBoundary(s[e]) && s[e] != '}' && s[e] != ']' {
		e++
	}
	if e == k {
		return "", 0, k, false
	}
	if !isNumberLike(s[k:e]) {
		return "", 0, e, false // ParseFloat's error would allocate
	}
	v, ok := parseValue(s[k:e])
	if !ok {
		return "", 0, e, false
	}
	return name, v, e, true
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isBoundary(c byte) bool {
	return c == ' ' || c == '\t' || c == ',' || c == ';' || c == '(' || c == '[' || c == '{'
}
