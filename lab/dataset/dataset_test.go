package dataset_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
)

// reactions finds shared/data/reactions above the repository.
func reactions(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(".")
	for {
		p := filepath.Join(dir, "shared", "data", "reactions")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Skip("no shared/data/reactions above the repository")
		}
		dir = filepath.Dir(dir)
	}
}

const small = `sub,lig,base,yield
A,L1,B1,10
A,L1,B2,20
A,L2,B1,30
A,L2,B2,40
B,L1,B1,5
B,L1,B2,50
B,L2,B1,0
`

var smallOpts = &dataset.Options{Objective: "yield", Vars: []string{"lig", "base"}, Groups: []string{"sub"}}

func TestLookupLab(t *testing.T) {
	tb, err := dataset.Read(strings.NewReader(small), "small.csv", smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Groups) != 2 || tb.Groups[0].Key != "A" || tb.Groups[1].Key != "B" {
		t.Fatalf("groups: %+v", tb.Groups)
	}
	a, b := tb.Groups[0], tb.Groups[1]
	if a.Scale != (lab.Scale{Mean: 25, Max: 40}) {
		t.Errorf("A scale %+v", a.Scale)
	}
	if a.Space().Feasible != nil || a.Space().Size() != 4 {
		t.Errorf("A is complete: feasible %v size %d", a.Space().Feasible, a.Space().Size())
	}
	if b.Space().Size() != 3 {
		t.Errorf("B has 3 wells, size %d", b.Space().Size())
	}
	ctx := context.Background()
	m, err := b.Run(ctx, lab.Conditions{"lig": "L1", "base": "B2"})
	if err != nil || m["yield"] != 50 {
		t.Fatalf("B L1 B2: %v %v", m, err)
	}
	_, err = b.Run(ctx, lab.Conditions{"lig": "L2", "base": "B2"})
	if !errors.Is(err, lab.ErrUnavailable) {
		t.Errorf("missing well: %v, want ErrUnavailable", err)
	}
	_, err = a.Run(ctx, lab.Conditions{"lig": "L9", "base": "B2"})
	if !errors.Is(err, lab.ErrUnknownLevel) || !strings.Contains(err.Error(), `lig="L9"`) {
		t.Errorf("unknown level: %v", err)
	}
	_, err = a.Run(ctx, lab.Conditions{"lig": "L1"})
	if !errors.Is(err, lab.ErrUnknownLevel) || !strings.Contains(err.Error(), "base") {
		t.Errorf("missing variable: %v", err)
	}
	_, err = a.Run(ctx, lab.Conditions{"lig": "L1", "base": "B1", "temp": "80"})
	if !errors.Is(err, lab.ErrUnknownLevel) || !strings.Contains(err.Error(), "temp") {
		t.Errorf("extra variable: %v", err)
	}
}

func TestBadCSV(t *testing.T) {
	for _, tc := range []struct {
		name, csv string
		opts      *dataset.Options
		row       int
		column    string
	}{
		{"missing objective", "sub,lig,base,conv\nA,L1,B1,1\n", smallOpts, 1, "yield"},
		{"missing variable", "sub,lig,yield\nA,L1,1\n", smallOpts, 1, "base"},
		{"missing group column", "lig,base,yield\nL1,B1,1\n", smallOpts, 1, "sub"},
		{"non-numeric yield", "sub,lig,base,yield\nA,L1,B1,1\nA,L1,B2,n/a\n", smallOpts, 3, "yield"},
		{"empty yield", "sub,lig,base,yield\nA,L1,B1,\n", smallOpts, 2, "yield"},
		{"duplicate conditions", "sub,lig,base,yield\nA,L1,B1,1\nB,L1,B1,2\nA,L1,B1,3\n", smallOpts, 4, "lig,base"},
		{"empty group", "sub,lig,base,yield\nA,L1,B1,1\n,L1,B2,2\n", smallOpts, 3, "sub"},
		{"empty level", "sub,lig,base,yield\nA,L1,,1\n", smallOpts, 2, "base"},
		{"no rows", "sub,lig,base,yield\n", smallOpts, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dataset.Read(strings.NewReader(tc.csv), "bad.csv", tc.opts)
			var e *dataset.Error
			if !errors.As(err, &e) || !errors.Is(err, dataset.ErrBadCSV) {
				t.Fatalf("err = %v, want a *dataset.Error", err)
			}
			if e.Row != tc.row || e.Column != tc.column || e.File != "bad.csv" {
				t.Errorf("error at %s:%d column %q, want row %d column %q (%v)", e.File, e.Row, e.Column, tc.row, tc.column, err)
			}
			if !strings.Contains(err.Error(), "bad.csv:") {
				t.Errorf("message does not name the file and row: %v", err)
			}
		})
	}
}

func TestDuplicateNamesBothRows(t *testing.T) {
	_, err := dataset.Read(strings.NewReader("sub,lig,base,yield\nA,L1,B1,1\nA,L1,B1,3\n"), "d.csv", smallOpts)
	if err == nil || !strings.Contains(err.Error(), "same as line 2") || !strings.Contains(err.Error(), "d.csv:3") {
		t.Fatalf("duplicate: %v", err)
	}
}

func TestDescriptorsExcludeTheTarget(t *testing.T) {
	const other = "sub,lig,base,yield\nA,L1,B1,10\nA,L1,B2,20\nA,L2,B1,30\nA,L2,B2,40\nB,L1,B1,5\nB,L1,B2,50\nB,L2,B1,0\nC,L1,B1,7\nC,L2,B2,1\n"
	changed := strings.Replace(other, "B,L1,B2,50", "B,L1,B2,99", 1)
	t1, err := dataset.Read(strings.NewReader(other), "x.csv", smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := dataset.Read(strings.NewReader(changed), "x.csv", smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	d1, d2 := t1.Descriptors("B"), t2.Descriptors("B")
	if len(d1[0][0]) != 2 {
		t.Fatalf("descriptors have %d dimensions, want one per other group (2)", len(d1[0][0]))
	}
	for v := range d1 {
		for l := range d1[v] {
			for k := range d1[v][l] {
				if d1[v][l][k] != d2[v][l][k] {
					t.Fatalf("descriptor [%d][%d][%d] depends on the excluded group's data", v, l, k)
				}
			}
		}
	}
	// The descriptors do change when another group's data change.
	if d := t2.Descriptors("A"); d[0][0][0] == t1.Descriptors("A")[0][0][0] {
		t.Error("descriptors ignore the other groups' data")
	}
}

func TestRealData(t *testing.T) {
	dir := reactions(t)
	s, err := dataset.Open(filepath.Join(dir, "suzuki_perera2018.csv"), &dataset.Options{Objective: "yield",
		Vars: []string{"ligand", "reagent", "solvent"}, Groups: []string{"reactant_1", "reactant_2"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Groups) != 15 {
		t.Fatalf("suzuki: %d groups, want 15", len(s.Groups))
	}
	g, err := s.Group("6-Bromoquinoline / 2a, Boronic Acid")
	if err != nil {
		t.Fatal(err)
	}
	if g.N != 384 || g.Space().Size() != 384 || math.Abs(g.Scale.Mean-53.35) > 0.005 || math.Abs(g.Scale.Max-97.86) > 0.005 {
		t.Errorf("6-Bromoquinoline/2a: n %d mean %.2f max %.2f, want 384, 53.35, 97.86 (README)", g.N, g.Scale.Mean, g.Scale.Max)
	}
	bh, err := dataset.Open(filepath.Join(dir, "buchwald_hartwig_ahneman2018_with_controls.csv"), &dataset.Options{Objective: "yield",
		Vars: []string{"ligand", "additive", "base"}, Groups: []string{"aryl_halide"}, Drop: map[string][]string{"aryl_halide": {"None"}}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range bh.Groups {
		n += g.N
	}
	if len(bh.Groups) != 15 || n != 4312 {
		t.Fatalf("BH game space: %d groups, %d rows; want 15 and 4312", len(bh.Groups), n)
	}
	g, err = bh.Group("1-chloro-4-ethylbenzene")
	if err != nil {
		t.Fatal(err)
	}
	if g.N != 286 || g.Space().Size() != 286 || math.Abs(g.Scale.Mean-3.99) > 0.005 || math.Abs(g.Scale.Max-26.62) > 0.005 {
		t.Errorf("1-chloro-4-ethylbenzene: n %d size %d mean %.2f max %.2f, want 286, 286, 3.99, 26.62", g.N, g.Space().Size(), g.Scale.Mean, g.Scale.Max)
	}
	// A missing well of the game space answers "not available".
	for _, x := range allPoints(g.Space()) {
		c := g.Space().Conditions(x)
		if _, err := g.Run(context.Background(), c); err != nil {
			if !errors.Is(err, lab.ErrUnavailable) {
				t.Fatalf("%s: %v", c, err)
			}
			return
		}
	}
	t.Error("no missing well found in a 286-well group of a 288-condition space")
}

func allPoints(s *lab.Space) [][]int {
	out := [][]int{{}}
	for _, v := range s.Vars {
		var next [][]int
		for _, p := range out {
			for l := range v.Levels {
				next = append(next, append(append([]int{}, p...), l))
			}
		}
		out = next
	}
	return out
}

// Descriptors are the same to the last bit every time: the Bayesian planner's proposals depend on
// them, and a campaign must be reproducible from its seed.
func TestDescriptorsAreReproducible(t *testing.T) {
	s, err := dataset.Open(filepath.Join(reactions(t), "suzuki_perera2018.csv"), &dataset.Options{Objective: "yield",
		Vars: []string{"ligand", "reagent", "solvent"}, Groups: []string{"reactant_1", "reactant_2"}})
	if err != nil {
		t.Fatal(err)
	}
	target := s.Groups[0].Key
	want := s.Descriptors(target)
	for range 10 {
		got := s.Descriptors(target)
		for v := range want {
			for l := range want[v] {
				for k := range want[v][l] {
					if math.Float64bits(got[v][l][k]) != math.Float64bits(want[v][l][k]) {
						t.Fatalf("descriptor [%d][%d][%d]: %v, then %v", v, l, k, want[v][l][k], got[v][l][k])
					}
				}
			}
		}
	}
}
