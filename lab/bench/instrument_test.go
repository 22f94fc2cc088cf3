package bench_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
)

// A campaign on the Suzuki dataset through the bench instrument (each experiment a protocol:
// stocks pipetted into a well of the heater-shaker's plate, 90 °C for an hour, an analysis)
// measures the dataset's yields, turn by turn the same campaign as the dataset's own
// instrument gives; more turns than a plate has wells go on to a fresh plate.
func TestInstrumentCampaignMatchesDataset(t *testing.T) {
	p, err := eval.Find(suzukiCSV)
	if err != nil {
		t.Fatal(err)
	}
	rx, err := bench.LoadReaction(p, &bench.Suzuki)
	if err != nil {
		t.Fatal(err)
	}
	s := bench.Suzuki
	tab, err := dataset.Open(p, &dataset.Options{Objective: s.Objective, Vars: s.Components, Groups: append(append([]string{}, s.Reactants...), s.Product)})
	if err != nil {
		t.Fatal(err)
	}
	g := tab.Groups[3]
	inst, err := rx.Instrument(g.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inst.Space().Size(), g.Space().Size(); got != want {
		t.Fatalf("the instrument's space has %d conditions, the group's %d", got, want)
	}
	const budget = 100 // over the plate's 96 wells
	campaign := func(in lab.Instrument) []lab.Step {
		pl, err := game.NewPlanner("random", in.Space(), 7, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var steps []lab.Step
		for st, err := range lab.Run(context.Background(), in, pl, &lab.Campaign{ID: "c", Objective: s.Objective, Group: g.Key, Budget: budget}, nil) {
			if err != nil {
				t.Fatal(err)
			}
			steps = append(steps, *st)
		}
		return steps
	}
	want, got := campaign(g), campaign(inst)
	if len(got) != budget || len(want) != budget {
		t.Fatalf("%d and %d steps, want %d", len(got), len(want), budget)
	}
	positive := 0
	for i := range want {
		w, s := want[i], got[i]
		if w.Value > 1 {
			positive++
		}
		if !s.OK || !w.OK || w.Conditions.Key() != s.Conditions.Key() || math.Abs(s.Value-w.Value) > 1e-9 {
			t.Errorf("turn %d: bench %s → %v (ok %v: %s), dataset %s → %v", i+1, s.Conditions, s.Value, s.OK, s.Error, w.Conditions, w.Value)
		}
	}
	if positive < budget/4 {
		t.Errorf("only %d of %d yields over 1 %%", positive, budget)
	}
	// The plate holds the last experiments: four wells of the second plate with product.
	snap := inst.Deck().Snapshot()
	formed := 0
	for _, lw := range snap.Labware {
		if lw.Name == "rx" {
			for _, c := range lw.Wells {
				if c.Volume > 0 {
					formed++
				}
			}
		}
	}
	if formed != budget-96 {
		t.Errorf("%d wells of the current plate are filled, want %d", formed, budget-96)
	}
	if _, err := inst.Run(context.Background(), lab.Conditions{"ligand": "nope"}); !errors.Is(err, lab.ErrUnknownLevel) {
		t.Errorf("an unknown level: %v", err)
	}
	if _, err := rx.Instrument("no such group", nil); !errors.Is(err, bench.ErrReaction) {
		t.Errorf("an unknown group: %v", err)
	}
}
