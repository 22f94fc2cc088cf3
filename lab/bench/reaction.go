package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
)

// ErrReaction is wrapped by the errors of a reaction map that cannot be loaded.
var ErrReaction = errors.New("bench: reaction")

// ReactionSpec says how a fully mapped reaction dataset (a CSV, one row per experiment) maps
// onto the contents of a well.
//
// # Species
//
// The species of a well are the dataset's level names: a well holding "6-chloroquinoline",
// "2a, Boronic Acid", "Pd(OAc)2", "SPhos", "K3PO4" and "MeCN" (any positive amount of each)
// is the Suzuki row with those levels. Each Reactants column names a reactant, each
// Components column another component (catalyst, ligand, base, solvent, additive); the well
// must hold exactly one level of each column, or none of a column that has the None level
// (ligand "None": no ligand). Species that are no level of any column (an internal standard,
// water, a dye) take no part. Require lists species the dataset's conditions need though no
// column names them (the one solvent of a screen). The product is the species the Product
// column names (its SMILES).
//
// # Stoichiometry and conditions
//
// The reactants react 1:1: the limiting reagent is the reactant of least amount, and a
// reaction of yield y (percent) forms y/100 of its amount of product and consumes as much of
// every reactant. The dataset maps identities, not amounts: any positive amount of a
// component counts. The reaction needs Temperature (within TemperatureTolerance) for at least
// Time; Basis says where these come from.
type ReactionSpec struct {
	Objective   string              // the yield column, in percent
	Reactants   []string            // the reactant columns
	Components  []string            // the other components' columns
	Product     string              // the column naming the product species
	None        string              // the level meaning "none of this component"
	Drop        map[string][]string // rows to leave out, as dataset.Options.Drop
	Require     []string            // species every reacting well must hold
	Temperature float64             // °C
	Time        time.Duration
	Basis       string
}

// Suzuki maps the Suzuki–Miyaura screen of Perera et al. (Science 2018),
// data/reactions/suzuki_perera2018.csv.
var Suzuki = ReactionSpec{
	Objective:   "yield",
	Reactants:   []string{"reactant_1", "reactant_2"},
	Components:  []string{"catalyst", "ligand", "reagent", "solvent"},
	Product:     "product_smiles",
	None:        "None",
	Temperature: 90,
	Time:        time.Hour,
	Basis: "Perera et al. screened these conditions in a heated flow reactor; the CSV records no " +
		"temperature or time, and a plate on a heater-shaker is no flow reactor, so the twin's plate " +
		"protocol is a convention: 90 °C for 1 h",
}

// BuchwaldHartwig maps the Buchwald–Hartwig screen of Ahneman et al. (Science 2018), either
// data/reactions/buchwald_hartwig_ahneman2018_with_controls.csv (the wells without an aryl
// halide left out: Coscientist's game space, additive "None" included) or its standard
// 3,955-reaction subset, buchwald_hartwig_ahneman2018.csv. A ligand level names the Pd
// precatalyst of that ligand.
var BuchwaldHartwig = ReactionSpec{
	Objective:   "yield",
	Reactants:   []string{"aryl_halide", "amine"},
	Components:  []string{"ligand", "base", "additive"},
	Product:     "product_smiles",
	None:        "None",
	Drop:        map[string][]string{"aryl_halide": {"None"}},
	Require:     []string{"DMSO"},
	Temperature: 60,
	Time:        16 * time.Hour,
	Basis:       "Ahneman et al. ran the plates in DMSO at 60 °C for 16 h; the CSV has no solvent, temperature or time column",
}

// Specs are the reaction maps of the shared reaction datasets (data/reactions), by the
// dataset file's base name.
var Specs = map[string]*ReactionSpec{
	"suzuki_perera2018":                          &Suzuki,
	"buchwald_hartwig_ahneman2018":               &BuchwaldHartwig,
	"buchwald_hartwig_ahneman2018_with_controls": &BuchwaldHartwig,
}

// SpecOf returns the reaction map of dataset name (the file's base name without extension),
// or an error naming the datasets the bench maps.
func SpecOf(name string) (*ReactionSpec, error) {
	if s, ok := Specs[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("the bench maps no reaction of dataset %s (it maps %s)", name, strings.Join(slices.Sorted(maps.Keys(Specs)), ", "))
}

// Reaction is a reaction dataset loaded as a map from well contents to yields.
type Reaction struct {
	Name   string // the dataset file's base name without extension
	Path   string // the dataset file LoadReaction read, absolute
	Spec   ReactionSpec
	cols   []column // the reactant columns, then the components
	level  map[string][]int
	groups map[string]*reactantGroup // by the reactant levels joined with " + "
}

// column is one reactant or component column and its levels.
type column struct {
	name     string
	reactant bool
	levels   []string // in name order, None excluded
	none     bool     // the column has the None level
}

type reactantGroup struct {
	g       *dataset.Group
	product string
}

// LoadReaction reads the dataset at path with lab/dataset and maps it as spec says.
func LoadReaction(path string, spec *ReactionSpec) (*Reaction, error) {
	r, err := ReadReaction(path, spec, func(o *dataset.Options) (*dataset.Table, error) { return dataset.Open(path, o) })
	if err != nil {
		return nil, err
	}
	if r.Path, err = filepath.Abs(path); err != nil {
		r.Path = path
	}
	return r, nil
}

// ReadReaction maps, as spec says, the dataset that read reads with the options it is given
// (an upload, a file under a server's data roots); file names it in errors. The Reaction has
// no Path: a journal cannot open it again.
func ReadReaction(file string, spec *ReactionSpec, read func(*dataset.Options) (*dataset.Table, error)) (*Reaction, error) {
	switch {
	case len(spec.Reactants) == 0 || spec.Product == "" || spec.Objective == "":
		return nil, fmt.Errorf("%w: %s: the spec needs reactant columns, a product column and an objective", ErrReaction, file)
	case !(spec.Time > 0) || math.IsNaN(spec.Temperature):
		return nil, fmt.Errorf("%w: %s: the spec needs a temperature and a positive time", ErrReaction, file)
	}
	groups := append(slices.Clone(spec.Reactants), spec.Product)
	t, err := read(&dataset.Options{Objective: spec.Objective, Vars: spec.Components, Groups: groups, Drop: spec.Drop})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReaction, err)
	}
	r := &Reaction{Name: t.Name, Spec: *spec, level: map[string][]int{}, groups: map[string]*reactantGroup{}}
	r.Spec.Reactants, r.Spec.Components, r.Spec.Require = slices.Clone(spec.Reactants), slices.Clone(spec.Components), slices.Clone(spec.Require)
	r.Spec.Drop = maps.Clone(spec.Drop)
	seen := make([]map[string]bool, len(spec.Reactants))
	for i := range seen {
		seen[i] = map[string]bool{}
	}
	for _, g := range t.Groups {
		n := len(spec.Reactants)
		key := strings.Join(g.Values[:n], " + ")
		if prev, dup := r.groups[key]; dup {
			return nil, fmt.Errorf("%w: %s: reactants %s give two products, %s and %s", ErrReaction, file, key, prev.product, g.Values[n])
		}
		r.groups[key] = &reactantGroup{g: g, product: g.Values[n]}
		for i, v := range g.Values[:n] {
			seen[i][v] = true
		}
	}
	for i, name := range spec.Reactants {
		if seen[i][spec.None] {
			return nil, fmt.Errorf("%w: %s: reactant column %s has rows without a reactant (%q): drop them", ErrReaction, file, name, spec.None)
		}
		r.addColumn(column{name: name, reactant: true}, slices.Collect(maps.Keys(seen[i])))
	}
	for _, v := range t.Vars {
		r.addColumn(column{name: v.Name}, v.Levels)
	}
	return r, nil
}

func (r *Reaction) addColumn(c column, levels []string) {
	for _, l := range levels {
		if l == r.Spec.None {
			c.none = true
			continue
		}
		c.levels = append(c.levels, l)
		r.level[l] = append(r.level[l], len(r.cols))
	}
	slices.Sort(c.levels)
	r.cols = append(r.cols, c)
}

// involves reports whether c holds any reactant of r.
func (r *Reaction) involves(c *Contents) bool {
	for sp, n := range c.Species {
		if n > 0 {
			for _, i := range r.level[sp] {
				if r.cols[i].reactant {
					return true
				}
			}
		}
	}
	return false
}

// mapped is a well's contents matched to one row of the dataset.
type mapped struct {
	reactants  []string // the reactant species
	key        string   // the reactant levels joined with " + "
	conditions lab.Conditions
	product    string
	yield      float64 // the dataset's, percent
}

// match finds the row of the dataset that c is; note says why there is none.
func (r *Reaction) match(ctx context.Context, c *Contents) (m *mapped, note string, err error) {
	present := make([][]string, len(r.cols))
	for _, sp := range c.Names() {
		if c.Species[sp] > 0 {
			for _, i := range r.level[sp] {
				present[i] = append(present[i], sp)
			}
		}
	}
	m = &mapped{conditions: lab.Conditions{}}
	for i, col := range r.cols {
		switch p := present[i]; {
		case len(p) > 1:
			return nil, fmt.Sprintf("holds more than one %s: %s", col.name, strings.Join(p, "; ")), nil
		case len(p) == 1 && col.reactant:
			m.reactants = append(m.reactants, p[0])
		case len(p) == 1:
			m.conditions[col.name] = p[0]
		case col.none:
			m.conditions[col.name] = r.Spec.None
		default:
			return nil, fmt.Sprintf("holds no %s (%s)", col.name, levelList(col.levels)), nil
		}
	}
	for _, sp := range r.Spec.Require {
		if !(c.Species[sp] > 0) {
			return nil, fmt.Sprintf("holds no %s", sp), nil
		}
	}
	m.key = strings.Join(m.reactants, " + ")
	g := r.groups[m.key]
	if g == nil {
		return nil, fmt.Sprintf("the dataset has no reaction of %s", m.key), nil
	}
	meas, err := g.g.Run(ctx, m.conditions)
	if errors.Is(err, lab.ErrUnavailable) {
		return nil, fmt.Sprintf("the dataset has no measurement of %s with %s", m.key, m.conditions), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s: %w", ErrReaction, r.Name, err)
	}
	m.product, m.yield = g.product, meas[r.Spec.Objective]
	return m, "", nil
}

// levelList names a column's levels in a note (levels may hold commas): all of them up to six.
func levelList(levels []string) string {
	if len(levels) <= 6 {
		return strings.Join(levels, "; ")
	}
	return fmt.Sprintf("%s; or %d more", strings.Join(levels[:6], "; "), len(levels)-6)
}
