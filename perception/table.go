package perception

import (
	"strconv"
	"strings"

	"github.com/labmate/labmate/protocol"
)

// table reads printed tables with a header: a line of column names followed by rows of
// numbers, one sample per column and row. The forms programs print:
//
//	Step Temp E_pair E_mol TotEng Press        LAMMPS' thermo table (aligned columns)
//	       0          300      -906.24 …
//	epoch,loss,accuracy                        CSV (also ';' or tab separated)
//	1,0.693,0.51
//	| iter | residual |                        pipe-separated, with or without borders
//	|    1 | 1.0e-2   |
//	   epoch      loss                         a pandas DataFrame: rows carry an index
//	0      1  0.500000
//
// A header is two to 32 names (a letter or "_", then letters, digits, "_", "." or "[…]":
// `c_msd[4]`, `v_T`, `E_pair`), a row as many numbers (nan and inf included), separated the
// same way. Lines made of "-", "=", "+" and "|" only, and blank lines, are transparent. The
// table starts with the first row right after its header (so a line of words followed by a
// line of numbers is a table only when the counts match), survives other lines once it has
// rows (a warning printed mid-run), and ends at a new header, at a row of another width, or
// after 50 lines that are not rows. A column named t or time gives the simulation time of the
// row's other samples. Reading a line allocates nothing: names are slices of the header line.
type table struct {
	header
	bare bareRun // rows of numbers under no header, that may become a headerless table
	// named are the values the code's print statements write as bare rows (rowNames): a
	// headerless table of as many columns takes the names of the one that fits.
	named [][]string
	rows  int    // rows read under this header
	index bool   // its rows carry a leading index (a pandas frame)
	other int    // lines since the last row that were not rows
	cand  header // the line just read, when it could be a new header
	short int    // rows with fewer numbers than cand has names, read since it
}

// bareRun is a run of rows of numbers read under no header: as many numbers each, separated
// the same way, the first column strictly increasing (an iteration, a step, a time). At
// bareRows rows it is a headerless table — `print(it, err)` in a loop, Fortran's
// `write(*,*) k, res` — whose columns are named col1, col2, … in order.
type bareRun struct {
	n    int
	sep  byte
	last float64 // the first column of the last row
	rows int
}

// bareRows is how many rows of a bare run make a headerless table: a matrix of two rows, or
// a pair of result lines, is not one.
const bareRows = 3

// colNames name the columns of a headerless table.
var colNames = func() (out [maxColumns]string) {
	for i := range out {
		out[i] = "col" + strconv.Itoa(i+1)
	}
	return out
}()

// bareRow notes a row of n numbers that fits no header, and adopts a headerless table's
// header when the run it continues is long enough.
func (tb *table) bareRow(n int, sep byte, f *[maxColumns]string) bool {
	first := parseNumber(f[0])
	b := &tb.bare
	if b.n == n && b.sep == sep && first > b.last {
		b.rows++
	} else {
		*b = bareRun{n: n, sep: sep, rows: 1}
	}
	b.last = first
	if b.rows < bareRows || first != first { // NaN never increases
		return false
	}
	tb.header = header{names: colNames, n: n, sep: sep, tcol: -1}
	for _, ns := range tb.named {
		if len(ns) == n {
			for i, name := range ns {
				if name != "" {
					tb.header.names[i] = name
				}
			}
			break
		}
	}
	tb.rows, tb.index, tb.other = 0, false, 0
	return true
}

// header is a table's column names.
type header struct {
	names [maxColumns]string
	n     int  // columns; 0: none
	sep   byte // the separator
	tcol  int  // the time column, -1 if none
}

// fits reports whether a row of n fields separated by sep, the first f0, belongs under h;
// index says the row carries a pandas index (a first row's index is 0).
func (h *header) fits(n int, sep byte, f0 string, first bool, indexed bool) (ok, index bool) {
	if h.n < 2 || sep != h.sep {
		return false, false
	}
	switch {
	case n == h.n && (first || !indexed):
		return true, false
	case n == h.n+1 && isIndex(f0) && (indexed || first && f0 == "0"):
		return true, true
	}
	return false, false
}

const (
	maxColumns = 32
	// tableGap is how many other lines a table with rows survives.
	tableGap = 50
)

// fields splits line at sep (' ': runs of blanks) into out, trimming blanks and dropping the
// empty first and last fields of a bordered row ("| a | b |"). ok is false for more than
// maxColumns fields.
func fields(line string, sep byte, out *[maxColumns]string) (n int, ok bool) {
	if sep == ' ' {
		for i := 0; i < len(line); {
			for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
				i++
			}
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j++
			}
			if j > i {
				if n == maxColumns {
					return 0, false
				}
				out[n] = line[i:j]
				n++
			}
			i = j
		}
		return n, true
	}
	start := 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) && line[i] != sep {
			continue
		}
		if n == maxColumns {
			return 0, false
		}
		out[n] = strings.Trim(line[start:i], " \t\r")
		n++
		start = i + 1
	}
	if n > 0 && out[0] == "" { // a leading border
		copy(out[:], out[1:n])
		n--
	}
	if n > 0 && out[n-1] == "" { // a trailing border
		n--
	}
	return n, true
}

// separator guesses how a line separates its fields. Bars of a norm (`||F||`, `|r|`) are part
// of a column name, not separators.
func separator(line string) byte {
	for _, c := range []byte{'|', ',', ';', '\t'} {
		if i := strings.IndexByte(line, c); i >= 0 && (c != '|' || hasSeparatorBar(line, i)) {
			return c
		}
	}
	return ' '
}

// hasSeparatorBar reports whether line holds, from its first bar at i, a bar that is not
// part of a norm token.
func hasSeparatorBar(line string, i int) bool {
	for i < len(line) {
		if line[i] != '|' {
			i++
			continue
		}
		if (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') && normEnd(line, i, true) > i {
			i = normEnd(line, i, true)
			continue
		}
		if i > 0 && line[i-1] != ' ' && line[i-1] != '\t' {
			// a bar inside a word: `max|u|`, `E_kin+|p|`: part of a name when the word is one
			b := strings.LastIndexAny(line[:i], " \t") + 1
			e := i
			for e < len(line) && line[e] != ' ' && line[e] != '\t' {
				e++
			}
			if w := line[b:e]; isQuantityName(w) && normClosed(w) && strings.Count(w, "|") == 2 {
				i = e // `max|u|` ends with its norm (`iter|loss|acc` is three columns)
				continue
			}
		}
		return true
	}
	return false
}

// normEnd returns the end of a norm token `|x|` or `||x||` starting at i (a bar), or i when
// there is none: one or two bars, a name without blanks or bars (that starts as a name does,
// isNameStart, when named), as many bars again, then the line's end, a blank, '=', ':', ','
// or ';'.
func normEnd(s string, i int, named bool) int {
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
	if j == i+b || named && !isNameStart(s[i+b]) {
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

// normClosed: a name that starts with a bar ends with one, or with a subscript after it
// (||F||_2, |r|_inf).
func normClosed(s string) bool {
	j := strings.LastIndexByte(s, '|')
	rest := s[j+1:]
	if rest == "" {
		return true
	}
	if rest[0] != '_' || len(rest) == 1 {
		return false
	}
	for i := 1; i < len(rest); i++ {
		if c := rest[i]; !(c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z') {
			return false
		}
	}
	return true
}

// isRule: a blank line or one drawn with - = + | : _ * only (a banner of asterisks too).
func isRule(line string) bool {
	for i := 0; i < len(line); i++ {
		if strings.IndexByte(" \t-=+|:_*", line[i]) < 0 {
			return false
		}
	}
	return true
}

// isColumnName: a letter or "_", then letters, digits, "_", "." or a bracketed index; or a
// printed quantity with punctuation, as ParseSamples reads names (see isQuantityName).
func isColumnName(s string) bool {
	if s == "" || !(isNameStart(s[0]) || s[0] == '|') {
		return false
	}
	if i := strings.IndexByte(s, ' '); i > 0 {
		// Blanks occur only in the fields of CSV, tab- and pipe-separated headers: a unit
		// after the name (`T [K]`, `E (eV)`), or a name of a few words (scipy's `f evals`,
		// `obj func`, `tr radius`).
		u := strings.TrimLeft(s[i:], " ")
		if n := len(u); n >= 3 && (u[0] == '[' && u[n-1] == ']' || u[0] == '(' && u[n-1] == ')') {
			return isUnit(u[1:n-1]) && isColumnName(s[:i])
		}
		return strings.Count(s, " ") <= 3 && isColumnName(s[:i]) && isColumnName(u)
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isIdentByte(c) && c != '.' && c != '[' && c != ']' {
			return isQuantityName(s)
		}
	}
	return s[0] != '|'
}

// isQuantityName reports whether s names a printed quantity with punctuation: a norm `|r|`
// or `||F||`, a ratio `dE/E0`, a call `f(x)`, a prime, a power. It starts with a letter, "_"
// or a bar, holds a letter, ends with neither "." nor "/", and its bars and brackets pair.
func isQuantityName(s string) bool {
	if s == "" || !(isNameStart(s[0]) || s[0] == '|') {
		return false
	}
	letter, bars, round, square := false, 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isNameStart(c):
			letter = true
		case c >= '0' && c <= '9', c == '.', c == '\'', c == '^':
		case c == '+' || c == '-':
			// a sum or a difference of quantities: KE+PE, E-E0, E_kin+E_pot
			if i == 0 || i == len(s)-1 || !(isIdentByte(s[i-1]) || s[i-1] == ')' || s[i-1] == '|') || !(isNameStart(s[i+1]) || s[i+1] == '(' || s[i+1] == '|') {
				return false
			}
		case c == '/':
			if i == 0 || s[i-1] == '/' {
				return false
			}
		case c == '|':
			bars++
		case c == '(':
			round++
		case c == ')':
			round--
		case c == '[':
			square++
		case c == ']':
			square--
		default:
			return false
		}
		if round < 0 || square < 0 {
			return false
		}
	}
	last := s[len(s)-1]
	return letter && bars%2 == 0 && round == 0 && square == 0 && last != '.' && last != '/' && (s[0] != '|' || normClosed(s))
}

// tableRow is one row's values, in header order.
type tableRow struct {
	values [maxColumns]float64
	n      int
}

// line reads one line. It returns true with row filled when the line is a row of the table.
// keep says that lines which are not rows leave the table standing however many there are
// (LAMMPS prints warnings mid-table and ends the table itself).
func (tb *table) line(line string, keep bool, row *tableRow) bool {
	if isRule(line) || tb.cand.n > 0 && isUnitsLine(line) {
		return false // transparent: a header candidate stays one (a line of units under it too)
	}
	sep := separator(line)
	var f [maxColumns]string
	n, ok := fields(line, sep, &f)
	if !ok || n == 0 {
		tb.cand.n = 0
		tb.notRow(keep)
		return false
	}
	numbers, names := true, true
	for i := range n {
		numbers = numbers && isNumberToken(f[i])
		names = names && (isColumnName(f[i]) || sep == ' ' && i > 0 && isBracketUnit(f[i])) // `t [ms]`: a unit of the name before
		if !numbers && !names {
			break
		}
	}
	switch {
	case numbers:
		if ok, index := tb.cand.fits(n, sep, f[0], true, false); ok { // the line before was its header
			tb.header, tb.rows, tb.index, tb.other = tb.cand, 0, index, 0
		} else if ok, _ := tb.header.fits(n, sep, f[0], tb.rows == 0, tb.index); !ok {
			if tb.cand.n > n && tb.short < 2 {
				tb.short++ // a first row with empty cells (scipy's least_squares): wait for a full one
				return false
			}
			tb.cand.n = 0
			if tb.rows > 0 {
				tb.n = 0 // a row of another width: the table has ended
			}
			if n < 2 || !tb.bareRow(n, sep, &f) {
				return false
			}
		}
		tb.cand.n = 0
		first := n - tb.n
		for i := first; i < n; i++ {
			row.values[i-first] = parseNumber(f[i])
		}
		row.n = tb.n
		tb.rows++
		tb.other = 0
		return true
	case names && n >= 2:
		if sep == ' ' {
			n = groupWords(line, &f, n)
		}
		tb.cand, tb.short = header{n: n, sep: sep, tcol: -1}, 0
		for i := range n {
			tb.cand.names[i] = f[i]
			if tb.cand.tcol < 0 && isTimeName(f[i]) {
				tb.cand.tcol = i
			}
		}
		tb.notRow(true)
		return false
	}
	tb.cand.n = 0
	tb.notRow(keep)
	return false
}

// notRow handles a line that is not a row.
func (tb *table) notRow(keep bool) {
	if tb.rows == 0 {
		return
	}
	tb.other++
	if !keep && tb.other > tableGap {
		tb.n = 0
	}
}

// end forgets the table (LAMMPS' "Loop time of …").
func (tb *table) end() { tb.n, tb.rows, tb.cand.n = 0, 0, 0 }

// groupWords joins the words of an aligned header into column names when the header
// separates its columns by two blanks or more and the words of a name by one: scipy's
// `Iteration     Total nfev        Cost      Cost reduction    Step norm     Optimality`
// has six columns. A header whose words are all one blank apart (LAMMPS' `Step Temp E_pair`)
// or all wider apart keeps one column per word. It returns the new number of names, which
// stay slices of line.
func groupWords(line string, f *[maxColumns]string, n int) int {
	var start, end [maxColumns]int
	k := 0
	for i := 0; i < len(line) && k < maxColumns; {
		i = skipSpaces(line, i)
		if i >= len(line) {
			break
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		start[k], end[k] = i, j
		k++
		i = j
	}
	if k != n {
		return n
	}
	// A bracketed unit belongs to the word before it: `t [ms]`, `E [J/m]`.
	units := false
	for i := 1; i < k; i++ {
		if isBracketUnit(line[start[i]:end[i]]) {
			units = true
		}
	}
	if units {
		m := 0
		for i := 0; i < k; i++ {
			if i > 0 && isBracketUnit(line[start[i]:end[i]]) && m > 0 {
				end[m-1] = end[i]
				continue
			}
			start[m], end[m] = start[i], end[i]
			m++
		}
		k = m
	}
	one, wide := false, false
	for i := 1; i < k; i++ {
		if g := start[i] - end[i-1]; g == 1 && line[end[i-1]] == ' ' {
			one = true
		} else {
			wide = true
		}
	}
	if !one || !wide {
		if units {
			for i := range k {
				f[i] = line[start[i]:end[i]]
			}
			return k
		}
		return n
	}
	m := 0
	for i := 0; i < k; {
		j := i
		for j+1 < k && start[j+1]-end[j] == 1 && line[end[j]] == ' ' && !isBracketUnit(line[start[j]:end[j]]) {
			j++
		}
		f[m] = line[start[i]:end[j]]
		m++
		i = j + 1
	}
	return m
}

// isBracketUnit: a unit in brackets, `[ms]`, `(K)`, `[%]`.
func isBracketUnit(w string) bool {
	n := len(w)
	return n >= 3 && (w[0] == '[' && w[n-1] == ']' || w[0] == '(' && w[n-1] == ')') && isUnit(w[1:n-1])
}

// isUnitsLine: a line of bracketed units only, printed under a header: `(ps)  (K)  [eV]`.
func isUnitsLine(line string) bool {
	n := 0
	for i := 0; i < len(line); {
		i = skipSpaces(line, i)
		if i >= len(line) {
			break
		}
		c := line[i]
		if c != '(' && c != '[' {
			return false
		}
		closer := byte(')')
		if c == '[' {
			closer = ']'
		}
		e := strings.IndexByte(line[i:], closer)
		if e < 2 || !isUnit(line[i+1:i+e]) {
			return false
		}
		i += e + 1
		n++
	}
	return n > 0
}

// isTimeName: t or time, with or without a unit: `time [s]`, `t(ps)`, `Time`.
func isTimeName(name string) bool {
	if i := strings.IndexAny(name, "[("); i > 0 {
		name = strings.TrimRight(name[:i], " ")
	}
	return equalFoldASCII(name, "t") || equalFoldASCII(name, "time")
}

// isIndex: a pandas row index, a non-negative integer.
func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseNumber parses a token isNumberToken accepted, without allocating: Fortran's D
// exponent, numpy's trailing dot and the non-finite words included.
func parseNumber(t string) float64 {
	if v, ok := nonFiniteValue(t); ok {
		return v
	}
	for i := 0; i < len(t); i++ {
		if t[i]|0x20 == 'd' { // 1.5D-03: mantissa and exponent apart
			m, err1 := strconv.ParseFloat(t[:i], 64)
			e, err2 := strconv.Atoi(strings.TrimPrefix(t[i+1:], "+"))
			if err1 != nil || err2 != nil {
				return nan
			}
			return m * pow10(e)
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return nan
	}
	return v
}

// stream is the reading state of one text stream: stdout, stderr or one followed file.
type stream struct {
	src   protocol.SampleSource
	table table
	qe    qe
}

func (st *stream) index() int { return sourceIndex(st.src) }
