package bench_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/lab/bench"
)

// TestBuiltinLabware checks the embedded definitions against Opentrons' own numbers.
func TestBuiltinLabware(t *testing.T) {
	type well struct {
		name                 string
		x, y, z              float64
		shape                string
		diameter, xDim, yDim float64
		depth, totalLiquid   float64
	}
	tests := []struct {
		loadName    string
		category    string
		cols, rows  int
		x, y, z     float64 // footprint, mm
		tipLength   float64
		first, last well
	}{
		{"corning_96_wellplate_360ul_flat", "wellPlate", 12, 8, 127.76, 85.47, 14.22, 0,
			well{"A1", 14.38, 74.24, 3.55, "circular", 6.86, 0, 0, 10.67, 360}, well{"H12", 113.38, 11.24, 3.55, "circular", 6.86, 0, 0, 10.67, 360}},
		{"nest_12_reservoir_15ml", "reservoir", 12, 1, 127.76, 85.48, 31.4, 0,
			well{"A1", 14.38, 42.78, 4.55, "rectangular", 0, 8.2, 71.2, 26.85, 15000}, well{"A12", 113.38, 42.78, 4.55, "rectangular", 0, 8.2, 71.2, 26.85, 15000}},
		{"opentrons_96_tiprack_20ul", "tipRack", 12, 8, 127.76, 85.48, 64.69, 39.2,
			well{"A1", 14.38, 74.24, 25.49, "circular", 3.27, 0, 0, 39.2, 20}, well{"H12", 113.38, 11.24, 25.49, "circular", 3.27, 0, 0, 39.2, 20}},
		{"opentrons_96_tiprack_300ul", "tipRack", 12, 8, 127.76, 85.48, 64.49, 59.3,
			well{"A1", 14.38, 74.24, 5.39, "circular", 5.23, 0, 0, 59.3, 300}, well{"H12", 113.38, 11.24, 5.39, "circular", 5.23, 0, 0, 59.3, 300}},
		{"opentrons_96_tiprack_1000ul", "tipRack", 12, 8, 127.76, 85.48, 97.47, 88,
			well{"A1", 14.38, 74.24, 9.47, "circular", 7.23, 0, 0, 88, 1000}, well{"H12", 113.38, 11.24, 9.47, "circular", 7.23, 0, 0, 88, 1000}},
		{"opentrons_24_tuberack_eppendorf_1.5ml_safelock_snapcap", "tubeRack", 6, 4, 127.75, 85.5, 79.85, 0,
			well{"A1", 18.21, 75.43, 42.05, "circular", 8.7, 0, 0, 37.8, 1500}, well{"D6", 117.66, 17.59, 42.05, "circular", 8.7, 0, 0, 37.8, 1500}},
	}
	d := bench.NewDeck()
	// labmate's six and Opentrons' standard definitions (labware/opentrons, adapters and lids
	// without wells left out).
	if n := len(d.LoadNames()); n != 84 {
		t.Errorf("%d built-in definitions, want 84: %q", n, d.LoadNames())
	}
	for i, tc := range tests {
		if err := d.LoadLabware(tc.loadName, string(rune('1'+i)), ""); err != nil {
			t.Fatal(err)
		}
		lw, err := d.Labware(string(rune('1' + i)))
		if err != nil {
			t.Fatal(err)
		}
		p := lw.Parameters
		if p.LoadName != tc.loadName || lw.Metadata.DisplayCategory != tc.category || p.IsTiprack != (tc.category == "tipRack") || p.TipLength != tc.tipLength {
			t.Errorf("%s: parameters %+v, category %s", tc.loadName, p, lw.Metadata.DisplayCategory)
		}
		if len(lw.Ordering) != tc.cols || len(lw.Ordering[0]) != tc.rows || len(lw.Wells) != tc.cols*tc.rows {
			t.Errorf("%s: %d columns of %d, %d wells; want %d × %d", tc.loadName, len(lw.Ordering), len(lw.Ordering[0]), len(lw.Wells), tc.cols, tc.rows)
		}
		if dm := lw.Dimensions; dm.X != tc.x || dm.Y != tc.y || dm.Z != tc.z {
			t.Errorf("%s: footprint %+v, want %v × %v × %v", tc.loadName, dm, tc.x, tc.y, tc.z)
		}
		for _, w := range []well{tc.first, tc.last} {
			got := lw.Wells[w.name]
			want := bench.WellDef{Depth: w.depth, TotalLiquidVolume: w.totalLiquid, Shape: w.shape, Diameter: w.diameter, XDim: w.xDim, YDim: w.yDim, X: w.x, Y: w.y, Z: w.z}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("%s well %s (-want +got):\n%s", tc.loadName, w.name, diff)
			}
		}
	}
}

const vials = `{
  "ordering": [["A1", "B1"]],
  "metadata": {"displayName": "Two 4 mL vials", "displayCategory": "tubeRack", "displayVolumeUnits": "mL"},
  "dimensions": {"xDimension": 127.76, "yDimension": 85.48, "zDimension": 50},
  "wells": {
    "A1": {"depth": 40, "totalLiquidVolume": 4000, "shape": "circular", "diameter": 12, "x": 20, "y": 60, "z": 10},
    "B1": {"depth": 40, "totalLiquidVolume": 4000, "shape": "circular", "diameter": 12, "x": 20, "y": 30, "z": 10}
  },
  "parameters": {"format": "irregular", "isTiprack": false, "loadName": "labmate_2_vials_4ml"},
  "schemaVersion": 2
}`

func TestLoadDefinition(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vials.json")
	if err := os.WriteFile(file, []byte(vials), 0o644); err != nil {
		t.Fatal(err)
	}
	d := testDeck(t)
	lw, err := d.LoadDefinition(file)
	if err != nil {
		t.Fatal(err)
	}
	if lw.Metadata.DisplayName != "Two 4 mL vials" {
		t.Errorf("display name %q", lw.Metadata.DisplayName)
	}
	if err := d.LoadLabware("labmate_2_vials_4ml", "6", "vials"); err != nil {
		t.Fatal(err)
	}
	do(t, d, "transfer", bench.Args{Mount: "left", Volume: 1000, Source: []string{"res/A1"}, Dest: []string{"vials/B1"}})
	if c := d.Snapshot().Labware[5].Wells["B1"]; c.Volume != 1000 || abs(c.Species["NaCl"]-100) > 1e-9 {
		t.Errorf("vials/B1 holds %+v, want 1000 µL and 100 µmol NaCl", c)
	}
	if other := bench.NewDeck(); slices.Contains(other.LoadNames(), "labmate_2_vials_4ml") {
		t.Errorf("a definition loaded on one deck is known to another: %q", other.LoadNames())
	}

	_, err = d.LoadDefinition(file)
	if want := "bench: labware definition " + file + `: load name "labmate_2_vials_4ml" is already defined`; err == nil || err.Error() != want {
		t.Errorf("loading it twice: %v, want %s", err, want)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(vials, `"schemaVersion": 2`, `"schemaVersion": 3`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = d.LoadDefinition(bad)
	if want := bad + `: bench: labware "labmate_2_vials_4ml": schemaVersion 3 (the twin reads schema 2)`; err == nil || err.Error() != want {
		t.Errorf("schema 3: %v, want %s", err, want)
	}
	if _, err := d.LoadDefinition(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestWellAccess(t *testing.T) {
	d := testDeck(t)
	w, err := d.Well("1/A1") // by slot number
	if err != nil {
		t.Fatal(err)
	}
	if w.Volume != 100 {
		t.Errorf("plate/A1 holds %v µL, want 100", w.Volume)
	}
	w.Species = map[string]float64{"product": 2} // a reaction in place
	if got := d.Snapshot().Labware[0].Wells["A1"].Species["product"]; got != 2 {
		t.Errorf("a change through Well is not on the deck: %v µmol", got)
	}
	lw, wells, err := d.Wells("res")
	if err != nil {
		t.Fatal(err)
	}
	if lw.Parameters.LoadName != "nest_12_reservoir_15ml" || len(wells) != 12 || wells["A2"].Species["glucose"] != 5000 {
		t.Errorf("res: %s, %d wells, A2 %+v", lw.Parameters.LoadName, len(wells), wells["A2"])
	}
	wells["A12"].Volume = 1 // a change through Wells is on the deck too
	if got := d.Snapshot().Labware[1].Wells["A12"].Volume; got != 1 {
		t.Errorf("a change through Wells is not on the deck: %v µL", got)
	}
	if _, _, err := d.Wells("9"); !errors.Is(err, bench.ErrUnknownLabware) || err.Error() != `bench: no labware "9" on the deck (loaded: plate, res, tips, tips20, tubes)` {
		t.Errorf("wells of an empty slot: %v", err)
	}
	if _, err := d.Well("plate/M1"); err == nil || err.Error() != `bench: plate (corning_96_wellplate_360ul_flat) has no well "M1" (wells A1…H12)` {
		t.Errorf("unknown well: %v", err)
	}
	if _, err := d.Labware("nothing"); err == nil || err.Error() != `bench: no labware "nothing" on the deck (loaded: plate, res, tips, tips20, tubes)` {
		t.Errorf("unknown labware: %v", err)
	}
	if _, err := bench.NewDeck().Labware("1"); err == nil || err.Error() != `bench: no labware "1" on the deck (the deck is empty)` {
		t.Errorf("empty deck: %v", err)
	}
}
