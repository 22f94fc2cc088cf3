package benchrun_test

import (
	"testing"

	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
)

// A dye shows the colour complementary to what it absorbs: tartrazine (λmax 426 nm) yellow,
// brilliant blue (630 nm) blue; water is the solvent's pale grey.
func TestColor(t *testing.T) {
	lib, err := bench.NewLibrary(bench.DefaultSpectra()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		species map[string]float64
		want    string
	}{
		{map[string]float64{"tartrazine": 1}, "#c3ff00"},
		{map[string]float64{"brilliant blue FCF": 1}, "#00c4ff"},
		{map[string]float64{"tartrazine": 1, "brilliant blue FCF": 1}, "#62e280"},
		{nil, "#d8e4ee"},
		{map[string]float64{"not_a_dye": 1}, "#d8e4ee"},
	} {
		if got := benchrun.Color(bench.Contents{Volume: 100, Species: tc.species}, lib); got != tc.want {
			t.Errorf("Color(%v) = %s, want %s", tc.species, got, tc.want)
		}
	}
}

func TestView(t *testing.T) {
	d := bench.NewDeck()
	for _, c := range []bench.Command{
		{Name: "load_labware", Args: bench.Args{LoadName: "corning_96_wellplate_360ul_flat", Slot: "1", Label: "plate"}},
		{Name: "load_liquid", Args: bench.Args{Well: "plate/B3", Volume: 50, Concentrations: map[string]float64{"tartrazine": 0.001}}},
	} {
		if _, err := d.Do(c); err != nil {
			t.Fatal(err)
		}
	}
	lib, _ := bench.NewLibrary(bench.DefaultSpectra()...)
	v, err := benchrun.View(d, lib)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 1 || len(v[0].Columns) != 12 || len(v[0].Columns[0]) != 8 || len(v[0].Wells) != 1 {
		t.Fatalf("view = %+v", v)
	}
	if w := v[0].Wells["B3"]; w.Volume != 50 || w.Species != "tartrazine" || w.Color != "#c3ff00" {
		t.Errorf("B3 = %+v", w)
	}
}
