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
	line = line[logPrefixEnd(line):]
	if !hasSep(line) {
		if pairs, whole := scanPairs(line, nil); !whole || pairs < 2 {
			return 0, false
		}
		scanPairs(line, func(name string, v float64) {
			if isSimTime(name) {
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
		if isSimTime(name) {
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
		for i < len(line) && isPairSep(line[i]) && !(name == "" && line[i] == '|' && normEnd(line, i, false) > i) {
			i++
		}
		if i >= len(line) {
			break
		}
		j := i
		if name == "" && line[i] == '|' {
			j = normEnd(line, i, false) // a norm `||F||`, `|r|`: one name, not separators
		}
		for j < len(line) && !isPairSep(line[j]) {
			j++
		}
		tok := line[i:j]
		i = j
		if isDash(tok) {
			continue // `epoch 3 - loss 0.25`, `step 4 -- res 1e-3`
		}
		if name == "" {
			if !isQuantityName(tok) {
				return n, false
			}
			name = tok
			continue
		}
		v, ok := valueToken(tok, true)
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

// isNameByte: a byte a name may hold (see isQuantityName).
func isNameByte(c byte) bool {
	return isIdentByte(c) || strings.IndexByte("|/.'^()[]+-", c) >= 0
}

// parseValue parses a number isNumberLike accepted: ParseFloat's forms, and C's signed
// "-nan" (printf of a negative NaN, as LAMMPS prints it).
func parseValue(tok string) (float64, bool) {
	if v, ok := nonFiniteValue(tok); ok { // -nan, 1.#INF, ******** too
		return v, true
	}
	for i := 1; i < len(tok); i++ {
		if tok[i]|0x20 == 'd' { // Fortran: 1.234D+02
			v := parseNumber(tok)
			return v, !math.IsNaN(v)
		}
	}
	v, err := strconv.ParseFloat(tok, 64)
	return v, err == nil
}

// isNumberLike filters tokens before ParseFloat, whose failure allocates: digits with an
// optional sign, dot and exponent, or nan, inf or infinity in any case.
func isNumberLike(s string) bool {
	if isNonFiniteWord(s) {
		return true
	}
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	digits := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || c == 'e' || c == 'E' || (c == 'd' || c == 'D') && digits || ((c == '+' || c == '-') && i > 0 && (s[i-1]|0x20 == 'e' || s[i-1]|0x20 == 'd')):
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
	if k := skipSpaces(s, j); k > j && k < len(s) && (s[k] == '[' || s[k] == '(') {
		if e := unitEnd(s, k); e > k { // a unit in brackets: `E [eV] = -12.3`, `T (K): 300`
			j = e
		}
	}
	return valueAt(s, s[i:j], j)
}

// unitEnd is the end of a bracketed unit `[eV]` or `(K)` starting at k, or k when there is
// none: up to 12 bytes of a unit (see isUnit: `[kJ/mol]`, `(a.u.)`, `[%]`), the
// closing bracket, then a '=' or ':' after blanks.
func unitEnd(s string, k int) int {
	closer := byte(']')
	if s[k] == '(' {
		closer = ')'
	}
	e := strings.IndexByte(s[k+1:], closer)
	if e <= 0 || e > 12 {
		return k
	}
	u := s[k+1 : k+1+e]
	if !isUnit(u) {
		return k
	}
	end := k + 1 + e + 1
	if n := skipSpaces(s, end); n >= len(s) || (s[n] != '=' && s[n] != ':') {
		return k
	}
	return end
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
	v, ok := valueToken(s[k:e], false)
	if !ok {
		return "", 0, e, false
	}
	return name, v, e, true
}

// valueToken reads a printed value: a number (isNumberLike, Fortran's `1.5D+02` too), a
// number with its unit attached (`300K`, `1.5eV`, `12%`, `3.2ms`), or, in prose pairs
// (count), a count out of a total (`epoch 3/100`: 3; `ratio = 3/4` is no count). It never
// allocates.
func valueToken(tok string, count bool) (float64, bool) {
	if isNumberLike(tok) {
		return parseValue(tok)
	}
	if a, b, ok := strings.Cut(tok, "/"); count && ok && isDigits(a) && isDigits(b) {
		return parseValue(a) // a progress count: epoch 3/100
	}
	if n := numberPrefix(tok); n > 0 && isUnit(tok[n:]) {
		return parseValue(tok[:n])
	}
	return 0, false
}

// numberPrefix is the length of the longest prefix of tok that is a decimal number (sign,
// digits, dot, exponent), 0 when there is none.
func numberPrefix(tok string) int {
	i := 0
	if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
		i++
	}
	digits := 0
	for i < len(tok) && (tok[i] >= '0' && tok[i] <= '9' || tok[i] == '.') {
		if tok[i] != '.' {
			digits++
		}
		i++
	}
	if digits == 0 {
		return 0
	}
	if i+1 < len(tok) && (tok[i]|0x20 == 'e' || tok[i]|0x20 == 'd') {
		j := i + 1
		if tok[j] == '+' || tok[j] == '-' {
			j++
		}
		k := j
		for k < len(tok) && tok[k] >= '0' && tok[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// isUnit: a short unit written right after a number — letters (any script: µs, Å, °C), '%',
// '/' and '^' with digits after a letter: K, eV, ms, kJ/mol, m/s^2, %.
func isUnit(u string) bool {
	if u == "" || len(u) > 10 {
		return false
	}
	if u == "%" {
		return true
	}
	if c := u[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80) {
		return false
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || c == '/' || c == '^' || c == '*' || c == '.' || c >= '0' && c <= '9' && i > 0) {
			return false
		}
	}
	return true
}

// isDash: a token that only separates — `-`, `--`, `->`, an en or em dash.
func isDash(tok string) bool {
	switch tok {
	case "-", "--", "---", "->", "=>", ">", "::", "\u2013", "\u2014":
		return true
	}
	return false
}

// logPrefixEnd is where the message of a log line starts, after the prefix a logging
// framework puts before it: a date and a time (`2026-12-05 10:00:01,123`, ISO 8601 with T
// and a zone), a level word (DEBUG, INFO, WARNING, ERROR, CRITICAL …), bracketed tags
// (`[INFO]`, `[rank 0]`, `[12:00:01]`), a logger name ending in ':' or ']' after a level
// (`INFO:root:`, `INFO __main__:`), and the separators between them (`-`, `|`, `:`). 0 when
// the line has no such prefix (a prefix needs a time or a level).
func logPrefixEnd(line string) int {
	if line == "" {
		return 0
	}
	if c := line[0]; !(c >= '0' && c <= '9' || c == '[' || c >= 'A' && c <= 'Z') {
		return 0
	}
	i, seen, level := 0, false, false
	for i < len(line) {
		j := skipSpaces(line, i)
		if j >= len(line) {
			break
		}
		e := j
		switch c := line[j]; {
		case c == '[':
			k := strings.IndexByte(line[j:], ']')
			if k < 0 || k > 40 {
				return prefixResult(i, seen)
			}
			e = j + k + 1
			if isLevel(line[j+1 : j+k]) {
				level = true
			}
			seen = seen || level || isClockish(line[j+1:j+k])
		case c >= '0' && c <= '9':
			for e < len(line) && line[e] != ' ' && line[e] != '\t' {
				e++
			}
			tok := strings.TrimRight(line[j:e], ":|")
			if !isClockish(tok) {
				return prefixResult(i, seen)
			}
			seen = true
		case c == '-' || c == '|' || c == ':':
			e = j + 1
			if !seen {
				return 0
			}
		default:
			for e < len(line) && line[e] != ' ' && line[e] != '\t' && line[e] != ':' && line[e] != ']' {
				e++
			}
			if isLevel(line[j:e]) {
				level, seen = true, true
				for e < len(line) && line[e] == ':' { // INFO:root:message
					e++
					k := e
					for k < len(line) && (isIdentByte(line[k]) || line[k] == '.') {
						k++
					}
					if k < len(line) && line[k] == ':' && k > e {
						e = k
					}
				}
				break
			}
			// A logger name after the level: `INFO __main__: msg`, `I1205 train.py:42] msg`.
			if level && e < len(line) && (line[e] == ':' || line[e] == ']') && !strings.ContainsAny(line[j:e], "=") {
				k := skipSpaces(line, e+1)
				if k < len(line) && (line[k] == '=' || line[e] == ':' && valueStart(line, k)) {
					return prefixResult(i, seen) // `INFO loss: 0.3`: the message's own pair
				}
				e++
				level = false
				break
			}
			return prefixResult(i, seen)
		}
		i = e
	}
	return prefixResult(i, seen)
}

func prefixResult(i int, seen bool) int {
	if !seen {
		return 0
	}
	return i
}

// valueStart: a number begins at k (a `name: value` pair, not a logger name).
func valueStart(s string, k int) bool {
	c := s[k]
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c|0x20 == 'n' || c|0x20 == 'i'
}

// isLevel: a logging level word.
func isLevel(w string) bool {
	switch w {
	case "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL", "NOTICE", "TRACE", "debug", "info", "warning", "warn", "error", "critical":
		return true
	}
	return false
}

// isClockish: a date or a time of day as logs print them — digits joined by '-', '/', ':',
// '.', ',', 'T', 'Z' or '+', with at least one '-', '/' or ':' (2026-12-05, 10:00:01,123,
// 2026-12-05T10:00:01.5Z).
func isClockish(w string) bool {
	if w == "" || w[0] < '0' || w[0] > '9' {
		return false
	}
	joined := false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
		case c == '-' || c == '/' || c == ':':
			joined = true
		case c == '.' || c == ',' || c == 'T' || c == 'Z' || c == '+':
		default:
			return false
		}
	}
	return joined
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

// isSimTime: the name of a line's simulation time — t or time, with a unit or not (`t [s]`,
// `time(ps)`), as printed (lower case: `T` is a temperature).
func isSimTime(name string) bool {
	if i := strings.IndexAny(name, "[("); i > 0 {
		name = strings.TrimRight(name[:i], " ")
	}
	return name == "t" || name == "time"
}
