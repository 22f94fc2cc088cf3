// Package dataset serves a fully mapped condition space — a CSV with one row per experiment —
// as a lab.Instrument: a lookup lab. The caller names the variable columns, the objective
// column and the group columns; each distinct combination of group values (a substrate) is a
// Group, one campaign's space. Every group shares the table's levels; the combinations a group
// lacks (missing wells) are not Feasible and answer lab.ErrUnavailable.
package dataset

import (
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

// Error names the place in the file that is wrong. Row is the 1-based line of the file (the
// header is line 1); Column is the column's header name.
type Error struct {
	File   string
	Row    int
	Column string
	Value  string
	Msg    string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s:%d", e.File, e.Row)
	if e.Column != "" {
		s += fmt.Sprintf(", column %q", e.Column)
	}
	if e.Value != "" {
		s += fmt.Sprintf(", value %q", e.Value)
	}
	return fmt.Sprintf("%s: %s: %s", ErrBadCSV, s, e.Msg)
}

func (e *Error) Unwrap() error { return ErrBadCSV }

// Options say how to read the table.
type Options struct {
	Objective string   // the measured column, e.g. "yield"; must be numeric in every row
	Vars      []string // the condition columns, e.g. ligand, reagent, solvent
	Groups    []string // the columns that split the table into campaigns; none: one group
	// Drop skips the rows whose column has one of the values, e.g. {"aryl_halide": {"None"}}.
	Drop map[string][]string
}

// Table is a loaded dataset.
type Table struct {
	Name      string // the file's base name without extension
	Objective string
	Vars      []lab.Variable
	Groups    []*Group // in order of first appearance
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

// Open reads the CSV file at path.
func Open(path string, o *Options) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	t, err := Read(f, path, o)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Read reads a CSV from r; file names it in errors.
func Read(r io.Reader, file string, o *Options) (*Table, error) {
	if o == nil || o.Objective == "" || len(o.Vars) == 0 {
		return nil, fmt.Errorf("dataset: %s: need an objective column and at least one variable column", file)
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, &Error{File: file, Row: 1, Msg: "the file is empty (no header)"}
		}
		return nil, csvError(file, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	find := func(role, name string) (int, error) {
		i, ok := col[name]
		if !ok {
			return 0, &Error{File: file, Row: 1, Column: name, Msg: fmt.Sprintf("no %s column %q in the header (columns: %s)", role, name, strings.Join(header, ", "))}
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
		if slices.Contains(o.Vars, g) {
			return nil, &Error{File: file, Row: 1, Column: g, Msg: "a column cannot be both a variable and a group"}
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

	t := &Table{Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), Objective: o.Objective}
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
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(file, err)
		}
		line, _ := cr.FieldPos(0)
		cell := func(c int) string { return strings.TrimSpace(rec[c]) }
		skip := false
		for c, vals := range dropCols {
			if slices.Contains(vals, cell(c)) {
				skip = true
			}
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
				j = len(t.Vars[i].Levels)
				levelIdx[i][v] = j
				t.Vars[i].Levels = append(t.Vars[i].Levels, v)
			}
			idx[i] = j
		}
		ys := cell(objCol)
		y, err := strconv.ParseFloat(ys, 64)
		if err != nil || math.IsNaN(y) || math.IsInf(y, 0) {
			return nil, &Error{File: file, Row: line, Column: o.Objective, Value: ys, Msg: "the objective is not a finite number"}
		}
		key := strings.Join(gv, " / ")
		g := groups[key]
		if g == nil {
			g = &Group{Key: key, Values: gv, obj: o.Objective}
			groups[key] = g
			t.Groups = append(t.Groups, g)
		}
		dk := key + "\x00" + indexKey(idx)
		if first, dup := seen[dk]; dup {
			return nil, &Error{File: file, Row: line, Column: strings.Join(o.Vars, ","),
				Msg: fmt.Sprintf("duplicate conditions (%s) in group %q: same as line %d", condString(o.Vars, rec, varCols), key, first)}
		}
		seen[dk] = line
		rows[g] = append(rows[g], row{idx, y, line})
	}
	if len(t.Groups) == 0 {
		return nil, &Error{File: file, Row: 1, Msg: "no data rows"}
	}
	for _, g := range t.Groups {
		rs := rows[g]
		g.N = len(rs)
		g.values = make(map[string]float64, len(rs))
		g.space = &lab.Space{Vars: t.Vars}
		full := 1
		for _, v := range t.Vars {
			full *= len(v.Levels)
		}
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

func csvError(file string, err error) error {
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
