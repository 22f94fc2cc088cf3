package bench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab/bench"
)

// A Suzuki well on a heater-shaker reacts only once held at 90 °C for an hour in all (over two
// delays; a clone's hold is its own), the product's peak then shows it, the plate reader reads a dye well, the mass
// balance holds through the reaction, and the journal replays to the same state.
func TestModules(t *testing.T) {
	p, err := eval.Find(suzukiCSV)
	if err != nil {
		t.Fatal(err)
	}
	rx, err := bench.LoadReaction(p, &bench.Suzuki)
	if err != nil {
		t.Fatal(err)
	}
	const product = "C1=C(C2=C(C)C=CC3N(C4OCCCC4)N=CC2=3)C=CC2=NC=CC=C12"
	equip := &bench.Equipment{Reactions: []*bench.Reaction{rx}, HeaterShaker: &bench.HeaterShakerOptions{},
		Calibration: map[string]float64{product: 2, "6-Bromoquinoline": 1}, Analyzer: &bench.AnalyzerOptions{}}
	d := bench.NewDeck()
	if err := d.Equip(equip); err != nil {
		t.Fatal(err)
	}
	cmd := func(name string, a bench.Args) bench.Command { return bench.Command{Name: name, Args: a} }
	well := map[string]float64{"6-Bromoquinoline": 0.01, "2a, Boronic Acid": 0.01, "Pd(OAc)2": 0.001, "SPhos": 0.002, "NaOH": 0.02, "MeCN": 19}
	cmds := []bench.Command{
		cmd("load_module", bench.Args{Module: bench.HeaterShakerModule, Slot: "4"}),
		cmd("load_labware", bench.Args{LoadName: "corning_96_wellplate_360ul_flat", Slot: "4", Label: "rx"}),
		cmd("load_liquid", bench.Args{Well: "rx/A1", Volume: 100, Concentrations: well}),
		cmd("hs_close_latch", bench.Args{Slot: "4"}),
		cmd("hs_set_temperature", bench.Args{Slot: "4", Celsius: 90}),
		cmd("delay", bench.Args{Minutes: 30}),
	}
	var journal bytes.Buffer
	run := func(cs ...bench.Command) *bench.Event {
		t.Helper()
		var ev *bench.Event
		for _, c := range cs {
			var err error
			if ev, err = d.Do(c); err != nil {
				t.Fatal(err)
			}
			json.NewEncoder(&journal).Encode(c)
		}
		return ev
	}
	ev := run(cmds...)
	if len(ev.Holds) != 1 || ev.Holds[0].Wells[0].Reacted || ev.Holds[0].Wells[0].Note == "" {
		t.Fatalf("after 30 min: %+v, want no reaction yet and why", ev.Holds)
	}
	// A clone holds on its own: its reaction leaves the deck's well as it was.
	c := d.Clone()
	if ev, err := c.Do(cmd("delay", bench.Args{Minutes: 30})); err != nil || !ev.Holds[0].Wells[0].Reacted {
		t.Fatalf("the clone after 60 min: %+v, %v", ev, err)
	}
	if w, _ := d.Well("rx/A1"); w.Species[product] != 0 {
		t.Fatalf("the clone's reaction formed %g µmol in the deck's well", w.Species[product])
	}
	ev = run(cmd("delay", bench.Args{Minutes: 30}))
	if o := ev.Holds[0].Wells[0]; !o.Reacted || math.Abs(o.Yield-92.63) > 0.01 || o.Product != product {
		t.Fatalf("after 60 min: %+v, want the dataset's 92.6 %%", o)
	}
	ev = run(cmd("analyze", bench.Args{Well: "rx/A1"}))
	y, err := ev.Chromatogram.YieldVsLimiting(product, "6-Bromoquinoline")
	if err != nil || math.Abs(y-92.63) > 0.01 {
		t.Errorf("yield from the peaks %g (%v), want 92.6 %%", y, err)
	}
	if tot, l := d.Totals(), d.Loaded(); math.Abs(tot.Species[product]-l.Species[product]) > 1e-12 || l.Species[product] == 0 ||
		math.Abs(tot.Species["6-Bromoquinoline"]-l.Species["6-Bromoquinoline"]) > 1e-12 {
		t.Errorf("mass balance: totals %v, loaded %v", tot.Species, l.Species)
	}
	ev = run(cmd("load_labware", bench.Args{LoadName: "corning_96_wellplate_360ul_flat", Slot: "1", Label: "dyes"}),
		cmd("load_liquid", bench.Args{Well: "dyes/B2", Volume: 200, Concentrations: map[string]float64{"tartrazine": 1e-4}}),
		cmd("load_module", bench.Args{Module: bench.AbsorbanceReader, Slot: "7"}),
		cmd("reader_initialize", bench.Args{Slot: "7", Mode: "multi", Wavelengths: []float64{426, 630}}),
		cmd("read_plate", bench.Args{Slot: "7", Well: "dyes"}))
	if r := ev.Reading.Well("B2"); r == nil || !(r.OD[0] > 10*r.OD[1]) || !(r.OD[0] > 0.5) {
		t.Errorf("tartrazine read %+v, want a band at 426 nm and none at 630 nm", r)
	}
	if _, err := d.Do(cmd("hs_set_shake_speed", bench.Args{Slot: "7", RPM: 500})); !errors.Is(err, bench.ErrModule) {
		t.Errorf("shaking a plate reader: %v", err)
	}
	replayed := bench.NewDeck()
	if err := replayed.Equip(equip); err != nil {
		t.Fatal(err)
	}
	if _, err := bench.Replay(t.Context(), replayed, &journal); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(d.Snapshot())
	b, _ := json.Marshal(replayed.Snapshot())
	if !bytes.Equal(a, b) {
		t.Errorf("replayed deck\n%s\nwant\n%s", b, a)
	}
}
