package bench_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/lab/bench"
)

// randomProtocol writes random commands for a deck of plates, a reservoir, a tube rack and
// tip racks, with a p300 single-channel on the left and a p20 8-channel on the right; many are
// refused (a dry well, a full tip, no tip), as a careless protocol's would be.
type randomProtocol struct {
	r       *rand.Rand
	species []string
	tip     map[string]bool // whether the pipette on a mount has a tip, as far as accepted commands say
}

func randomDeck(t testing.TB) *bench.Deck {
	t.Helper()
	d := bench.NewDeck()
	for _, l := range [][3]string{
		{"corning_96_wellplate_360ul_flat", "1", "plate"},
		{"nest_12_reservoir_15ml", "2", "res"},
		{"opentrons_96_tiprack_300ul", "3", "tips"},
		{"opentrons_96_tiprack_20ul", "4", "tips20"},
		{"opentrons_24_tuberack_eppendorf_1.5ml_safelock_snapcap", "5", "tubes"},
		{"corning_96_wellplate_360ul_flat", "6", "plate2"},
		{"opentrons_96_tiprack_300ul", "7", "tips2"},
		{"opentrons_96_tiprack_20ul", "8", "tips20b"},
		{"opentrons_96_tiprack_300ul", "9", "tips3"},
		{"opentrons_96_tiprack_20ul", "10", "tips20c"},
	} {
		if err := d.LoadLabware(l[0], l[1], l[2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.LoadInstrument("p300_single_gen2", "left", "tips", "tips2", "tips3"); err != nil {
		t.Fatal(err)
	}
	if err := d.LoadInstrument("p20_multi_gen2", "right", "tips20", "tips20b", "tips20c"); err != nil {
		t.Fatal(err)
	}
	return d
}

func (p *randomProtocol) well(multi bool) string {
	row := "ABCDEFGH"[p.r.IntN(8)]
	if multi && p.r.IntN(10) > 0 {
		row = 'A'
	}
	switch p.r.IntN(5) {
	case 0, 1:
		return fmt.Sprintf("plate/%c%d", row, 1+p.r.IntN(12))
	case 2:
		return fmt.Sprintf("plate2/%c%d", row, 1+p.r.IntN(12))
	case 3:
		return fmt.Sprintf("res/A%d", 1+p.r.IntN(12))
	}
	return fmt.Sprintf("tubes/%c%d", "ABCD"[p.r.IntN(4)], 1+p.r.IntN(6))
}

func (p *randomProtocol) wells(multi bool) []string {
	w := make([]string, 1+p.r.IntN(4))
	for i := range w {
		w[i] = p.well(multi)
	}
	return w
}

func (p *randomProtocol) next() bench.Command {
	r := p.r
	mount, lo, hi, multi, racks := "left", 20.0, 300.0, false, []string{"tips", "tips2", "tips3"}
	if r.IntN(2) == 0 {
		mount, lo, hi, multi, racks = "right", 1, 20, true, []string{"tips20", "tips20b", "tips20c"}
	}
	v := lo + r.Float64()*(hi-lo)
	a := bench.Args{Mount: mount}
	name := ""
	k := r.IntN(100)
	if !p.tip[mount] && r.IntN(4) > 0 {
		k = 10 // mostly pick up a tip when there is none
	}
	switch {
	case k < 6:
		name, a = "load_liquid", bench.Args{Well: p.well(false), Volume: 1 + r.Float64()*400, Concentrations: map[string]float64{}}
		for _, s := range p.species {
			if r.IntN(2) == 0 {
				a.Concentrations[s] = r.Float64()
			}
		}
	case k < 16:
		name = "pick_up_tip"
		if r.IntN(2) == 0 {
			a.Well = fmt.Sprintf("%s/%c%d", racks[r.IntN(len(racks))], "ABCDEFGH"[r.IntN(8)], 1+r.IntN(12))
		}
	case k < 17:
		name = "drop_tip"
	case k < 23:
		name = "return_tip"
	case k < 48:
		name, a.Volume, a.Well = "aspirate", v, p.well(multi)
	case k < 70:
		name, a.Volume, a.Well = "dispense", v, p.well(multi)
		if r.IntN(4) == 0 {
			a.Volume = 0
		}
	case k < 75:
		name = "blow_out"
		if r.IntN(2) == 0 {
			a.Well = p.well(multi)
		}
	case k < 80:
		name, a.Repetitions, a.Volume, a.Well = "mix", 1+r.IntN(3), v, p.well(multi)
	case k < 90:
		name, a.Source, a.Dest = "transfer", p.wells(multi), p.wells(multi)
		a.NewTip = "never"
		if !p.tip[mount] {
			a.NewTip = []string{"once", "once", "always"}[r.IntN(3)]
		}
		a.Volume = v * 2 * r.Float64()
	case k < 95:
		name, a.Source, a.Dest, a.Volume = "distribute", p.wells(multi)[:1], p.wells(multi), v/3
	default:
		name, a.Source, a.Dest, a.Volume = "consolidate", p.wells(multi), p.wells(multi)[:1], v/2
	}
	if (name == "distribute" || name == "consolidate") && p.tip[mount] {
		a.NewTip = "never"
	}
	return bench.Command{Name: name, Args: a}
}

// done follows the tips of an accepted command.
func (p *randomProtocol) done(c bench.Command) {
	switch {
	case c.Name == "pick_up_tip":
		p.tip[c.Args.Mount] = true
	case c.Name == "drop_tip" || c.Name == "return_tip":
		p.tip[c.Args.Mount] = false
	case c.Args.NewTip == "once" || c.Args.NewTip == "always":
		p.tip[c.Args.Mount] = false
	}
}

// TestMassBalance runs 10,000 random commands the deck accepts (and the many it refuses) and
// checks after each that the liquid and every species on the deck, in the tips and in the
// trash is what was loaded, to 1e-12 relative, and that a refused command changed nothing.
func TestMassBalance(t *testing.T) {
	d := randomDeck(t)
	p := &randomProtocol{r: rand.New(rand.NewPCG(1, 2)), species: []string{"NaCl", "glucose", "tartrazine", "urea"}, tip: map[string]bool{}}
	for i := range 4 {
		do(t, d, "load_liquid", bench.Args{Well: fmt.Sprintf("res/A%d", i+1), Volume: 12000, Concentrations: map[string]float64{p.species[i]: 0.1 * float64(i+1)}})
	}
	done := map[string]int{}
	refused := 0
	last := d.Totals() // the totals after the last accepted command
	worst := 0.0       // the largest relative deviation from what was loaded
	for done[""] < 10000 {
		if refused > 100000 {
			t.Fatalf("%d commands refused for %d done: the random protocol is stuck", refused, done[""])
		}
		cmd := p.next()
		if _, err := d.Do(cmd); err != nil {
			refused++
			if refused%4 == 0 { // a quarter of them, to keep the test fast
				if now := d.Totals(); !same(last, now) {
					t.Fatalf("refused %s (%v) changed the totals: %s", cmd.Name, err, cmp.Diff(last, now))
				}
			}
			continue
		}
		p.done(cmd)
		done[""]++
		done[cmd.Name]++
		var dev float64
		last, dev = balanced(t, d, cmd)
		worst = max(worst, dev)
	}
	for _, name := range []string{"load_liquid", "pick_up_tip", "drop_tip", "return_tip", "aspirate", "dispense", "blow_out", "mix", "transfer", "distribute", "consolidate"} {
		if done[name] < 20 {
			t.Errorf("only %d %s done: the test does not exercise it", done[name], name)
		}
	}
	t.Logf("done %v, refused %d; largest relative deviation %.2g", done, refused, worst)
}

// balanced checks the deck's totals against what was loaded and returns them with the largest
// relative deviation.
func balanced(t *testing.T, d *bench.Deck, cmd bench.Command) (bench.Contents, float64) {
	t.Helper()
	loaded, now := d.Loaded(), d.Totals()
	worst := 0.0
	off := func(a, b float64) bool {
		if a == b {
			return false
		}
		dev := abs(a-b) / max(abs(a), abs(b))
		worst = max(worst, dev)
		return dev > 1e-12
	}
	if off(loaded.Volume, now.Volume) {
		t.Fatalf("after %s %+v: %.17g µL on the deck, %.17g loaded", cmd.Name, cmd.Args, now.Volume, loaded.Volume)
	}
	for _, s := range slices.Concat(loaded.Names(), now.Names()) {
		if off(loaded.Species[s], now.Species[s]) {
			t.Fatalf("after %s %+v: %.17g µmol %s on the deck, %.17g loaded", cmd.Name, cmd.Args, now.Species[s], s, loaded.Species[s])
		}
	}
	return now, worst
}

// same is whether two totals are bit for bit the same.
func same(a, b bench.Contents) bool {
	if a.Volume != b.Volume || len(a.Species) != len(b.Species) {
		return false
	}
	for s, n := range a.Species {
		if m, ok := b.Species[s]; !ok || m != n {
			return false
		}
	}
	return true
}
