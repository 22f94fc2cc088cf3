package bench_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/lab/bench"
)

func TestPlateMap(t *testing.T) {
	d := testDeck(t)
	do(t, d, "transfer", bench.Args{Mount: "left", Volumes: []float64{50, 120.5}, Source: []string{"res/A2"}, Dest: []string{"plate/B1", "plate/C2"}})
	do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	do(t, d, "return_tip", bench.Args{Mount: "left"})
	tests := []struct {
		labware string
		show    bench.Show
		want    string
	}{
		{"res", bench.ShowVolume, `res: NEST 12 Well Reservoir 15 mL in slot 2 (volume, µL)
        1       2       3       4       5       6       7       8       9      10      11      12
A 10000.0  9829.5       .       .       .       .       .       .       .       .       .       .
`},
		{"2", bench.ShowSpecies, `res: NEST 12 Well Reservoir 15 mL in slot 2 (dominant species)
        1       2       3       4       5       6       7       8       9      10      11      12
A    NaCl glucose       .       .       .       .       .       .       .       .       .       .
`},
		{"plate", bench.ShowSpecies, `plate: Corning 96 Well Plate 360 µL Flat in slot 1 (dominant species)
        1       2       3       4       5       6       7       8       9      10      11      12
A       -       .       .       .       .       .       .       .       .       .       .       .
B glucose       .       .       .       .       .       .       .       .       .       .       .
C       . glucose       .       .       .       .       .       .       .       .       .       .
D       .       .       .       .       .       .       .       .       .       .       .       .
E       .       .       .       .       .       .       .       .       .       .       .       .
F       .       .       .       .       .       .       .       .       .       .       .       .
G       .       .       .       .       .       .       .       .       .       .       .       .
H       .       .       .       .       .       .       .       .       .       .       .       .
`},
		{"tips", bench.ShowVolume, `tips: Opentrons OT-2 96 Tip Rack 300 µL in slot 3 (tips: o unused, u used, . none)
   1  2  3  4  5  6  7  8  9 10 11 12
A  .  o  o  o  o  o  o  o  o  o  o  o
B  u  o  o  o  o  o  o  o  o  o  o  o
C  o  o  o  o  o  o  o  o  o  o  o  o
D  o  o  o  o  o  o  o  o  o  o  o  o
E  o  o  o  o  o  o  o  o  o  o  o  o
F  o  o  o  o  o  o  o  o  o  o  o  o
G  o  o  o  o  o  o  o  o  o  o  o  o
H  o  o  o  o  o  o  o  o  o  o  o  o
`},
		{"tubes", bench.ShowVolume, `tubes: Opentrons 24 Tube Rack with Eppendorf 1.5 mL Safe-Lock Snapcap in slot 5 (volume, µL)
  1 2 3 4 5 6
A . . . . . .
B . . . . . .
C . . . . . .
D . . . . . .
`},
	}
	for _, tc := range tests {
		got, err := d.PlateMap(tc.labware, tc.show)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("plate map of %s (-want +got):\n%s", tc.labware, diff)
		}
	}
	if _, err := d.PlateMap("lid", bench.ShowVolume); err == nil || err.Error() != `bench: plate map: no labware "lid" on the deck (loaded: plate, res, tips, tips20, tubes)` {
		t.Errorf("plate map of no labware: %v", err)
	}
}

func TestSnapshot(t *testing.T) {
	d := bench.NewDeck()
	if err := d.LoadLabware("nest_12_reservoir_15ml", "1", ""); err != nil {
		t.Fatal(err)
	}
	if err := d.LoadLabware("opentrons_96_tiprack_20ul", "2", "tips"); err != nil {
		t.Fatal(err)
	}
	if err := d.LoadInstrument("p20_single_gen2", "right", "tips"); err != nil {
		t.Fatal(err)
	}
	do(t, d, "load_liquid", bench.Args{Well: "1/A1", Volume: 1000, Concentrations: map[string]float64{"tartrazine": 0.001}})
	do(t, d, "pick_up_tip", bench.Args{Mount: "right"})
	do(t, d, "aspirate", bench.Args{Mount: "right", Volume: 10, Well: "1/A1"})
	do(t, d, "dispense", bench.Args{Mount: "right", Volume: 4, Well: "1/A2"})
	if _, err := d.Do(bench.Command{Name: "pick_up_tip", Args: bench.Args{Mount: "right"}}); err == nil {
		t.Error("a second tip picked up")
	}
	var fresh []string
	for c := 1; c <= 12; c++ {
		for _, r := range "ABCDEFGH" {
			if c > 1 || r != 'A' {
				fresh = append(fresh, fmt.Sprintf("%c%d", r, c))
			}
		}
	}
	want := &bench.Snapshot{
		Labware: []bench.LabwareState{
			{Slot: 1, Name: "1", LoadName: "nest_12_reservoir_15ml", DisplayName: "NEST 12 Well Reservoir 15 mL", Wells: map[string]bench.Contents{
				"A1": {Volume: 990, Species: map[string]float64{"tartrazine": 0.99}},
				"A2": {Volume: 4, Species: map[string]float64{"tartrazine": 0.004}},
			}},
			{Slot: 2, Name: "tips", LoadName: "opentrons_96_tiprack_20ul", DisplayName: "Opentrons OT-2 96 Tip Rack 20 µL", Fresh: fresh},
		},
		Pipettes: []bench.PipetteState{{Mount: "right", Name: "p20_single_gen2", Channels: 1, MinVolume: 1, MaxVolume: 20, TipRacks: []string{"tips"},
			Tips: []bench.TipState{{Origin: "tips/A1", Used: true, Contents: bench.Contents{Volume: 6, Species: map[string]float64{"tartrazine": 0.006}},
				Touched: []string{"1/A1", "1/A2"}, Species: []string{"tartrazine"}}}}},
		Loaded: bench.Contents{Volume: 1000, Species: map[string]float64{"tartrazine": 1}},
	}
	near := cmp.Comparer(func(a, b float64) bool { return abs(a-b) <= 1e-12*max(abs(a), abs(b)) })
	got := d.Snapshot()
	if diff := cmp.Diff(want, got, near); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var back bench.Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, &back); diff != "" {
		t.Errorf("snapshot through JSON (-before +after):\n%s", diff)
	}
}

func TestClone(t *testing.T) {
	d := testDeck(t)
	do(t, d, "pick_up_tip", bench.Args{Mount: "left"})
	do(t, d, "aspirate", bench.Args{Mount: "left", Volume: 100, Well: "res/A2"})
	before := d.Snapshot()
	c := d.Clone()
	if diff := cmp.Diff(before, c.Snapshot()); diff != "" {
		t.Fatalf("clone differs (-deck +clone):\n%s", diff)
	}
	do(t, c, "dispense", bench.Args{Mount: "left", Volume: 100, Well: "plate/B1"})
	do(t, c, "drop_tip", bench.Args{Mount: "left"})
	do(t, c, "pick_up_tip", bench.Args{Mount: "left"})
	if ev := do(t, c, "aspirate", bench.Args{Mount: "left", Volume: 50, Well: "res/A1"}); ev.Warnings != nil {
		t.Errorf("the clone's new tip warns: %q", ev.Warnings)
	}
	do(t, c, "load_liquid", bench.Args{Well: "tubes/A1", Volume: 500})
	if err := c.LoadLabware("corning_96_wellplate_360ul_flat", "6", "plate2"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, d.Snapshot()); diff != "" {
		t.Errorf("commands on the clone changed the deck (-before +after):\n%s", diff)
	}
	if got := c.Snapshot().Labware[2].Fresh[0]; got != "C1" {
		t.Errorf("the clone's next tip is %s, want C1", got)
	}
	// and the other way: the deck goes on without the clone
	do(t, d, "dispense", bench.Args{Mount: "left", Volume: 100, Well: "plate/H12"})
	if _, ok := c.Snapshot().Labware[0].Wells["H12"]; ok {
		t.Error("a dispense on the deck reached the clone")
	}
}
