// Package dataset serves a fully mapped condition space — a CSV with one row per experiment —
// as a lab.Instrument: a lookup lab. The caller names the variable columns, the objective
// column and the group columns; each distinct combination of group values (a substrate) is a
// Group, one campaign's space. Every group shares the table's levels; the combinations a group
// lacks (missing wells) are not Feasible and answer lab.ErrUnavailable.
//
// # Limits
//
// Read refuses a table beyond its Limits (DefaultLimits unless Options.Limits says otherwise)
// — bytes, line length, columns, rows, levels per variable and over all the variables, groups,
// variable and group columns — as it reads, before anything grows faster than the input: once
// a limit is crossed it only counts, and the *Error names the limit and the value
// (`column "ligand": 100000 levels; at most 1000 are allowed`). The defaults leave a wide
// margin over real screens: Suzuki–Miyaura (Perera 2018) is 1.9 MB, 5760 rows, 18 columns,
// at most 12 levels per variable (24 in all) and 15 groups; Buchwald–Hartwig with controls
// (Ahneman 2018) 1.7 MB, 4599 rows of at most 477 bytes, 19 columns, at most 24 levels per
// variable (31 in all) and 16 groups. What they bound downstream: a group's space has at
// most Rows points, Descriptors holds (levels over all the variables) × (groups − 1)
// numbers (at most 2 million), and a planner's level tables at most Levels entries per
// measured level.
//
// # Errors and what they show
//
// A bad file is an *Error naming the file, the line and the column. By default it also quotes
// the offending value, the header's column names and the group names, which helps whoever
// owns the file. With Options.Redact it quotes nothing read from the file — only the names the
// caller gave (columns, a group key), line numbers and counts — for a file the caller could
// not read otherwise: a server reading a path its client named (Roots.Open sets it). An upload
// is the client's own data and is read without Redact.
package dataset

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/labmate/labmate/lab"
)

// ErrBadCSV is wrapped by every *Error.
var ErrBadCSV = errors.New("dataset: bad CSV")

// ErrTooLarge is wrapped, besides ErrBadCSV, by the *Error of a table beyond its Limits.
var ErrTooLarge = errors.New("dataset: CSV too large")

// Error names the place in the file that is wrong. Row is the 1-based line of the file (the
// header is line 1; 0 for the file as a whole); Column is the column's header name. Value,
// quoted when set, is the offending cell (never set with Options.Redact).
type Error struct {
	File   string
	Row    int
	Column string
	Value  string
	Msg    string
	Limit  bool // a limit was crossed: the error wraps ErrTooLarge too
}

func (e *Error) Error() string {
	s := e.File
	if e.Row > 0 {
		s += fmt.Sprintf(":%d", e.Row)
	}
	if e.Column != "" {
		s += fmt.Sprintf(", column %q", e.Column)
	}
	if e.Value != "" {
		s += fmt.Sprintf(", value %q", e.Value)
	}
	kind := ErrBadCSV
	if e.Limit {
		kind = ErrTooLarge
	}
	return fmt.Sprintf("%s: %s: %s", kind, s, e.Msg)
}

func (e *Error) Unwrap() []error {
	if e.Limit {
		return []error{ErrBadCSV, ErrTooLarge}
	}
	return []error{ErrBadCSV}
}

// Limits bound what Read accepts; a zero field takes DefaultLimits' value.
type Limits struct {
	Bytes        int64 // the whole file
	LineBytes    int   // one line
	Columns      int   // in the header
	Rows         int   // data rows, dropped ones included
	Levels       int   // distinct levels of one variable
	TotalLevels  int   // distinct levels of all the variables together
	Groups       int   // distinct groups
	Vars         int   // variable columns
	GroupColumns int   // group columns
}

// DefaultLimits are the limits of a nil Options.Limits (see the package documentation).
var DefaultLimits = Limits{
	Bytes:        16 << 20,
	LineBytes:    64 << 10,
	Columns:      256,
	Rows:         100_000,
	Levels:       1000,
	TotalLevels:  2000,
	Groups:       1000,
	Vars:         16,
	GroupColumns: 8,
}

// or is l with its zero fields (all of them for a nil l) from DefaultLimits.
func (l *Limits) or() Limits {
	out := DefaultLimits
	if l == nil {
		return out
	}
	if l.Bytes > 0 {
		out.Bytes = l.Bytes
	}
	for _, f := range []struct{ dst, v *int }{
		{&out.LineBytes, &l.LineBytes}, {&out.Columns, &l.Columns}, {&out.Rows, &l.Rows}, {&out.Levels, &l.Levels},
		{&out.TotalLevels, &l.TotalLevels}, {&out.Groups, &l.Groups}, {&out.Vars, &l.Vars}, {&out.GroupColumns, &l.GroupColumns},
	} {
		if *f.v > 0 {
			*f.dst = *f.v
		}
	}
	return out
}

// Options say how to read the table.
type Options struct {
	Objective string   // the measured column, e.g. "yield"; must be numeric in every row
	Vars      []string // the condition columns, e.g. ligand, reagent, solvent
	Groups    []string // the columns that split the table into campaigns; none: one group
	// Drop skips the rows whose column has one of the values, e.g. {"aryl_halide": {"None"}}.
	Drop map[string][]string
	// Limits bound the table; nil: DefaultLimits.
	Limits *Limits
	// Redact keeps the file's content out of errors (see the package documentation).
	Redact bool
}

// Table is a loaded dataset.
type Table struct {
	Name      string // the file's base name without extension
	Objective string
	Vars      []lab.Variable
	Groups    []*Group // in order of first appearance
	redact    bool
}

// Group is one campaign's space: a lab.Instrument over the group's rows.
type Group struct {
	Key    string   // the group values joined with " / "
	Values []string // one per group column
	Scale  lab.Scale
	N      int // rows
	space  *lab.Space
	values map[string]float64 // by index key
	obj    string
}

// Open reads the CSV file at path: any path, for a local user's own file. A server confines
// the paths its clients name with Roots.
func Open(path string, o *Options) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	if err := checkSize(f, path, o); err != nil {
		return nil, err
	}
	return Read(f, path, o)
}

// checkSize refuses a regular file larger than the byte limit before reading it.
func checkSize(f *os.File, name string, o *Options) error {
	var lim *Limits
	if o != nil {
		lim = o.Limits
	}
	max := lim.or().Bytes
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > max {
		return &Error{File: name, Limit: true, Msg: fmt.Sprintf("%d bytes; at most %d are allowed", st.Size(), max)}
	}
	return nil
}

// Read reads a CSV from r; file names it in errors.
func Read(r io.Reader, file string, o *Options) (*Table, error) {
	if o == nil || o.Objective == "" || len(o.Vars) == 0 {
		return nil, fmt.Errorf("dataset: %s: need an objective column and at least one variable column", file)
	}
	lim := o.Limits.or()
	if err := checkColumns(file, o, &lim); err != nil {
		return nil, err
	}
	lr := &limitReader{r: r, file: file, max: lim.Bytes, maxLine: lim.LineBytes}
	cr := csv.NewReader(lr)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, &Error{File: file, Row: 1, Msg: "the file is empty (no header)"}
		}
		return nil, csvError(file, err)
	}
	if len(header) > lim.Columns {
		return nil, &Error{File: file, Row: 1, Limit: true, Msg: fmt.Sprintf("%d columns; at most %d are allowed", len(header), lim.Columns)}
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	find := func(role, name string) (int, error) {
		i, ok := col[name]
		if !ok {
			cols := fmt.Sprintf("it has %d columns", len(header))
			if !o.Redact {
				cols = "columns: " + strings.Join(header, ", ")
			}
			return 0, &Error{File: file, Row: 1, Column: name, Msg: fmt.Sprintf("no %s column %q in the header (%s)", role, name, cols)}
		}
		return i, nil
	}
	objCol, err := find("objective", o.Objective)
	if err != nil {
		return nil, err
	}
	varCols := make([]int, len(o.Vars))
	for i, v := range o.Vars {
		if varCols[i], err = find("variable", v); err != nil {
			return nil, err
		}
	}
	grpCols := make([]int, len(o.Groups))
	for i, g := range o.Groups {
		if grpCols[i], err = find("group", g); err != nil {
			return nil, err
		}
	}
	dropCols := map[int][]string{}
	for name, vals := range o.Drop {
		i, err := find("filter", name)
		if err != nil {
			return nil, err
		}
		dropCols[i] = vals
	}

	t := &Table{Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), Objective: o.Objective, redact: o.Redact}
	t.Vars = make([]lab.Variable, len(o.Vars))
	levelIdx := make([]map[string]int, len(o.Vars))
	for i, v := range o.Vars {
		t.Vars[i].Name = v
		levelIdx[i] = map[string]int{}
	}
	type row struct {
		idx  []int
		y    float64
		line int
	}
	groups := map[string]*Group{}
	rows := map[*Group][]row{}
	seen := map[string]int{} // group + condition → line
	nrows, nlevels := 0, 0
	var over *overflow // the first limit crossed; from then on the rest is only counted
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if over != nil {
				return nil, over.error(file, o, &lim, levelIdx, err)
			}
			return nil, csvError(file, err)
		}
		nrows++
		line, _ := cr.FieldPos(0)
		cell := func(c int) string { return strings.TrimSpace(rec[c]) }
		skip := false
		for c, vals := range dropCols {
			if slices.Contains(vals, cell(c)) {
				skip = true
			}
		}
		if over != nil {
			over.count(skip, cell, varCols, grpCols, levelIdx)
			continue
		}
		if nrows > lim.Rows {
			over = &overflow{kind: overRows, line: line, n: nrows}
			continue
		}
		if skip {
			continue
		}
		gv := make([]string, len(grpCols))
		for i, c := range grpCols {
			gv[i] = cell(c)
			if gv[i] == "" {
				return nil, &Error{File: file, Row: line, Column: o.Groups[i], Msg: "empty group value"}
			}
		}
		idx := make([]int, len(varCols))
		for i, c := range varCols {
			v := cell(c)
			if v == "" {
				return nil, &Error{File: file, Row: line, Column: o.Vars[i], Msg: "empty level"}
			}
			j, ok := levelIdx[i][v]
			if !ok {
				switch {
				case len(t.Vars[i].Levels) == lim.Levels:
					over = &overflow{kind: overLevels, v: i, line: line}
				case nlevels == lim.TotalLevels:
					over = &overflow{kind: overTotal, line: line}
				}
				if over != nil {
					break
				}
				j = len(t.Vars[i].Levels)
				levelIdx[i][v] = j
				t.Vars[i].Levels = append(t.Vars[i].Levels, v)
				nlevels++
			}
			idx[i] = j
		}
		if over != nil {
			over.count(false, cell, varCols, grpCols, levelIdx) // the rest of this row's levels
			continue
		}
		ys := cell(objCol)
		y, err := strconv.ParseFloat(ys, 64)
		if err != nil || math.IsNaN(y) || math.IsInf(y, 0) {
			e := &Error{File: file, Row: line, Column: o.Objective, Msg: "the objective is not a finite number"}
			if !o.Redact {
				e.Value = ys
			}
			return nil, e
		}
		key := strings.Join(gv, " / ")
		g := groups[key]
		if g == nil {
			if len(t.Groups) == lim.Groups {
				over = &overflow{kind: overGroups, line: line, keys: map[string]bool{key: true}}
				for k := range groups {
					over.keys[k] = true
				}
				continue
			}
			g = &Group{Key: key, Values: gv, obj: o.Objective}
			groups[key] = g
			t.Groups = append(t.Groups, g)
		}
		dk := key + "\x00" + indexKey(idx)
		if first, dup := seen[dk]; dup {
			msg := fmt.Sprintf("duplicate conditions: same as line %d", first)
			if !o.Redact {
				msg = fmt.Sprintf("duplicate conditions (%s) in group %q: same as line %d", condString(o.Vars, rec, varCols), key, first)
			}
			return nil, &Error{File: file, Row: line, Column: strings.Join(o.Vars, ","), Msg: msg}
		}
		seen[dk] = line
		rows[g] = append(rows[g], row{idx, y, line})
	}
	if over != nil {
		return nil, over.error(file, o, &lim, levelIdx, nil)
	}
	if len(t.Groups) == 0 {
		return nil, &Error{File: file, Row: 1, Msg: "no data rows"}
	}
	full := 1 // the product of the levels, saturated
	for _, v := range t.Vars {
		if full > math.MaxInt/len(v.Levels) {
			full = math.MaxInt
			break
		}
		full *= len(v.Levels)
	}
	for _, g := range t.Groups {
		rs := rows[g]
		g.N = len(rs)
		g.values = make(map[string]float64, len(rs))
		g.space = &lab.Space{Vars: t.Vars}
		var sum float64
		g.Scale.Max = math.Inf(-1)
		for _, r := range rs {
			g.values[indexKey(r.idx)] = r.y
			sum += r.y
			g.Scale.Max = max(g.Scale.Max, r.y)
		}
		g.Scale.Mean = sum / float64(len(rs))
		if len(rs) < full {
			// Feasible in canonical (lexicographic index) order, independent of row order.
			g.space.Feasible = make([][]int, 0, len(rs))
			for _, r := range rs {
				g.space.Feasible = append(g.space.Feasible, r.idx)
			}
			slices.SortFunc(g.space.Feasible, slices.Compare)
		}
	}
	return t, nil
}

// checkColumns checks the columns the caller names: how many, and that none plays two roles.
func checkColumns(file string, o *Options, lim *Limits) error {
	if len(o.Vars) > lim.Vars {
		return &Error{File: file, Limit: true, Msg: fmt.Sprintf("%d variable columns; at most %d are allowed", len(o.Vars), lim.Vars)}
	}
	if len(o.Groups) > lim.GroupColumns {
		return &Error{File: file, Limit: true, Msg: fmt.Sprintf("%d group columns; at most %d are allowed", len(o.Groups), lim.GroupColumns)}
	}
	role := map[string]string{o.Objective: "the objective"}
	for _, c := range []struct {
		names []string
		role  string
	}{{o.Vars, "a variable"}, {o.Groups, "a group"}} {
		for _, name := range c.names {
			if r, ok := role[name]; ok {
				if r == c.role {
					return &Error{File: file, Row: 1, Column: name, Msg: fmt.Sprintf("the column is named twice as %s", r)}
				}
				return &Error{File: file, Row: 1, Column: name, Msg: fmt.Sprintf("a column cannot be both %s and %s", r, c.role)}
			}
			role[name] = c.role
		}
	}
	return nil
}

// overflow is the first limit a table crossed, and the count of what it limits so far.
type overflow struct {
	kind int
	v    int             // the variable, for overLevels
	line int             // where the limit was crossed
	n    int             // rows, for overRows
	keys map[string]bool // the groups, for overGroups
}

const (
	overRows = iota
	overLevels
	overTotal
	overGroups
)

// count counts one more row (skip: a dropped row, which still counts as a row).
func (ov *overflow) count(skip bool, cell func(int) string, varCols, grpCols []int, levelIdx []map[string]int) {
	if ov.kind == overRows {
		ov.n++
		return
	}
	if skip {
		return
	}
	switch ov.kind {
	case overLevels:
		if v := cell(varCols[ov.v]); v != "" {
			levelIdx[ov.v][v] = 0
		}
	case overTotal:
		for i, c := range varCols {
			if v := cell(c); v != "" {
				levelIdx[i][v] = 0
			}
		}
	case overGroups:
		gv := make([]string, len(grpCols))
		for i, c := range grpCols {
			gv[i] = cell(c)
		}
		ov.keys[strings.Join(gv, " / ")] = true
	}
}

// error is the limit's error; cut, when set, is why the file could not be read to its end (the
// count is then a lower bound).
func (ov *overflow) error(file string, o *Options, lim *Limits, levelIdx []map[string]int, cut error) error {
	var what string
	var n, limit int
	e := &Error{File: file, Row: ov.line, Limit: true}
	switch ov.kind {
	case overRows:
		what, n, limit = "rows", ov.n, lim.Rows
	case overLevels:
		e.Column = o.Vars[ov.v]
		what, n, limit = "levels", len(levelIdx[ov.v]), lim.Levels
	case overTotal:
		e.Column = strings.Join(o.Vars, ",")
		for _, m := range levelIdx {
			n += len(m)
		}
		what, limit = "levels over all the variables", lim.TotalLevels
	case overGroups:
		e.Column = strings.Join(o.Groups, ",")
		what, n, limit = "groups", len(ov.keys), lim.Groups
	}
	e.Msg = fmt.Sprintf("%d %s; at most %d are allowed", n, what, limit)
	if cut != nil {
		e.Msg = fmt.Sprintf("at least %d %s; at most %d are allowed (and then: %v)", n, what, limit, csvError(file, cut))
	}
	return e
}

// limitReader enforces the byte and line limits on what the CSV reader reads.
type limitReader struct {
	r       io.Reader
	file    string
	max     int64 // bytes
	maxLine int
	n       int64 // bytes read
	line    int   // lines ended
	col     int   // bytes of the current line so far
	err     error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if rest := l.max + 1 - l.n; int64(len(p)) > rest {
		p = p[:rest] // one byte past the limit tells
	}
	k, err := l.r.Read(p)
	l.n += int64(k)
	if l.n > l.max {
		l.err = &Error{File: l.file, Limit: true, Msg: fmt.Sprintf("more than %d bytes; at most %d are allowed", l.max, l.max)}
		return 0, l.err
	}
	for b := p[:k]; len(b) > 0; {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.col += len(b)
		} else {
			l.col += i
		}
		if l.col > l.maxLine {
			l.err = l.longLine(i >= 0)
			return 0, l.err
		}
		if i < 0 {
			break
		}
		l.line, l.col, b = l.line+1, 0, b[i+1:]
	}
	return k, err
}

// longLine is the error of the current line, too long: its length, read to its end (ended:
// it ended in the last read) within the byte limit.
func (l *limitReader) longLine(ended bool) error {
	n := strconv.Itoa(l.col)
	if !ended {
		buf := make([]byte, 32<<10)
		for empty := 0; empty < 100; {
			k, err := l.r.Read(buf[:min(int64(len(buf)), l.max+1-l.n)])
			l.n += int64(k)
			if k == 0 {
				empty++
			}
			if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
				l.col += i
				n = strconv.Itoa(l.col)
				break
			}
			l.col += k
			n = strconv.Itoa(l.col)
			if l.n > l.max {
				n = "more than " + n
				break
			}
			if err != nil {
				break
			}
		}
	}
	return &Error{File: l.file, Row: l.line + 1, Limit: true, Msg: fmt.Sprintf("the line has %s bytes; at most %d are allowed", n, l.maxLine)}
}

func csvError(file string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: file, Row: pe.Line, Column: fmt.Sprintf("#%d", pe.Column), Msg: pe.Err.Error()}
	}
	return fmt.Errorf("%w: %s: %w", ErrBadCSV, file, err)
}

func condString(names []string, rec []string, cols []int) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = names[i] + "=" + rec[c]
	}
	return strings.Join(parts, ", ")
}

func indexKey(idx []int) string {
	b := make([]byte, 0, 4*len(idx))
	for _, i := range idx {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ',')
	}
	return string(b)
}

// Group returns the group with the given key.
func (t *Table) Group(key string) (*Group, error) {
	for _, g := range t.Groups {
		if g.Key == key {
			return g, nil
		}
	}
	keys := make([]string, len(t.Groups))
	for i, g := range t.Groups {
		keys[i] = g.Key
	}
	if t.redact {
		return nil, fmt.Errorf("dataset %s: no group %q (it has %d groups)", t.Name, key, len(keys))
	}
	return nil, fmt.Errorf("dataset %s: no group %q (groups: %s)", t.Name, key, strings.Join(keys, "; "))
}

// Space is the group's condition space (the table's levels; Feasible set when wells are missing).
func (g *Group) Space() *lab.Space { return g.space }

// Run looks the conditions up.
func (g *Group) Run(ctx context.Context, c lab.Conditions) (lab.Measurement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	idx, err := g.space.Index(c)
	if err != nil {
		return nil, err
	}
	y, ok := g.values[indexKey(idx)]
	if !ok {
		return nil, fmt.Errorf("%w: %s has no measurement for %s", lab.ErrUnavailable, g.Key, c)
	}
	return lab.Measurement{g.obj: y}, nil
}

// Measured returns every measured value of the group (for exact baselines and tests).
func (g *Group) Measured() []float64 {
	out := make([]float64, 0, len(g.values))
	for _, v := range g.values {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// Descriptors describes every level of every variable by how it behaved in the groups other
// than exclude: Descriptors()[v][l][k] is the mean, over the rows of the k-th other group with
// level l of variable v, of that group's standardized objective (z-score within the group), or
// 0 when the group has no such row. Levels that help or hurt the same substrates get similar
// vectors. Nothing of the excluded group enters.
func (t *Table) Descriptors(exclude string) [][][]float64 {
	var others []*Group
	for _, g := range t.Groups {
		if g.Key != exclude {
			others = append(others, g)
		}
	}
	out := make([][][]float64, len(t.Vars))
	for v, vr := range t.Vars {
		out[v] = make([][]float64, len(vr.Levels))
		for l := range vr.Levels {
			out[v][l] = make([]float64, len(others))
		}
	}
	for k, g := range others {
		keys := slices.Sorted(maps.Keys(g.values)) // a fixed order: the same sums to the last bit, run after run
		m, sd := g.Scale.Mean, 0.0
		for _, key := range keys {
			y := g.values[key]
			sd += (y - m) * (y - m)
		}
		sd = math.Sqrt(sd / float64(len(g.values)))
		if sd == 0 {
			sd = 1
		}
		sums := make([][]float64, len(t.Vars))
		counts := make([][]int, len(t.Vars))
		for v, vr := range t.Vars {
			sums[v] = make([]float64, len(vr.Levels))
			counts[v] = make([]int, len(vr.Levels))
		}
		for _, key := range keys {
			y := g.values[key]
			idx := parseIndexKey(key)
			for v, l := range idx {
				sums[v][l] += (y - m) / sd
				counts[v][l]++
			}
		}
		for v := range t.Vars {
			for l := range sums[v] {
				if counts[v][l] > 0 {
					out[v][l][k] = sums[v][l] / float64(counts[v][l])
				}
			}
		}
	}
	return out
}

func parseIndexKey(key string) []int {
	parts := strings.Split(strings.TrimSuffix(key, ","), ",")
	idx := make([]int, len(parts))
	for i, p := range parts {
		idx[i], _ = strconv.Atoi(p)
	}
	return idx
}
