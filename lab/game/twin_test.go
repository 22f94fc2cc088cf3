package game_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
)

// The Suzuki and Buchwald–Hartwig games as the campaign benchmark sets them up (by pair of
// reactants, or by aryl halide), played on the bench twin: the same turns and yields as the
// lookup.
func TestPlayOnBench(t *testing.T) {
	for _, c := range []struct {
		file   string
		vars   []string
		groups []string
	}{
		{"suzuki_perera2018", []string{"ligand", "reagent", "solvent"}, []string{"reactant_1", "reactant_2"}},
		{"buchwald_hartwig_ahneman2018", []string{"ligand", "additive", "base"}, []string{"aryl_halide"}},
	} {
		p, err := eval.Find("data/reactions/" + c.file + ".csv")
		if err != nil {
			t.Fatal(err)
		}
		tb, err := dataset.Open(p, &dataset.Options{Objective: "yield", Vars: c.vars, Groups: c.groups})
		if err != nil {
			t.Fatal(err)
		}
		rx, err := bench.LoadReaction(p, bench.Specs[c.file])
		if err != nil {
			t.Fatal(err)
		}
		g := tb.Groups[1]
		want, err := (&game.Game{Table: tb}).Play(context.Background(), g, "random", 3, 12, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := (&game.Game{Table: tb, Bench: rx}).Play(context.Background(), g, "random", 3, 12, false)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if len(got.Steps) != 12 || len(want.Steps) != 12 {
			t.Fatalf("%s: %d and %d steps", c.file, len(got.Steps), len(want.Steps))
		}
		for i, w := range want.Steps {
			s := got.Steps[i]
			if !s.OK || s.Conditions.Key() != w.Conditions.Key() || math.Abs(s.Value-w.Value) > 1e-9 {
				t.Errorf("%s turn %d: bench %s → %v (%s), lookup %s → %v", c.file, i+1, s.Conditions, s.Value, s.Error, w.Conditions, w.Value)
			}
		}
	}
	p, err := eval.Find("data/reactions/suzuki_perera2018.csv")
	if err != nil {
		t.Fatal(err)
	}
	rx, err := bench.LoadReaction(p, &bench.Suzuki)
	if err != nil {
		t.Fatal(err)
	}
	odd := "reactant_1,reactant_2,ligand,temperature,yield\n6-chloroquinoline,\"2a, Boronic Acid\",SPhos,60,10\n"
	tb2, err := dataset.Read(strings.NewReader(odd), "odd.csv", &dataset.Options{Objective: "yield", Vars: []string{"ligand", "temperature"}, Groups: []string{"reactant_1", "reactant_2"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&game.Game{Table: tb2, Bench: rx}).Play(context.Background(), tb2.Groups[0], "random", 1, 1, false); err == nil || !strings.Contains(err.Error(), "temperature is no component") {
		t.Errorf("a table with a variable the reaction does not have: %v", err)
	}
}
