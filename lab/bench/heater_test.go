package bench_test

import (
	"context"
	"encoding/csv"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/bench"
)

const (
	suzukiCSV = "data/reactions/suzuki_perera2018.csv"
	bhCSV     = "data/reactions/buchwald_hartwig_ahneman2018_with_controls.csv"
	standard  = "1,3-diethylbenzene" // the internal standard of Perera's screen
)

// insReactions are the Suzuki and Buchwald–Hartwig maps, loaded once.
var insReactions = sync.OnceValues(func() ([]*bench.Reaction, error) {
	var out []*bench.Reaction
	for _, f := range []struct {
		rel  string
		spec *bench.ReactionSpec
	}{{suzukiCSV, &bench.Suzuki}, {bhCSV, &bench.BuchwaldHartwig}} {
		p, err := eval.Find(f.rel)
		if err != nil {
			return nil, err
		}
		r, err := bench.LoadReaction(p, f.spec)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
})

func insHeaterShaker(t testing.TB, o *bench.HeaterShakerOptions) *bench.HeaterShaker {
	t.Helper()
	rx, err := insReactions()
	if err != nil {
		t.Fatal(err)
	}
	h, err := bench.NewHeaterShaker(rx, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// insRow is one experiment of a dataset, read here with encoding/csv, apart from lab/dataset.
type insRow map[string]string

func insRows(t testing.TB, rel string) []insRow {
	t.Helper()
	p, err := eval.Find(rel)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []insRow
	for _, rec := range recs[1:] {
		r := insRow{}
		for i, h := range recs[0] {
			r[h] = rec[i]
		}
		out = append(out, r)
	}
	return out
}

// suzukiWell is the well a chemist makes up for a Suzuki row: 0.5 µmol of reactant_1 (the
// limiting reagent), 0.6 of reactant_2, 5 mol % Pd, 10 mol % ligand, 3 equiv of base, the
// solvent and 0.25 µmol of internal standard in 100 µL.
func suzukiWell(r insRow) *bench.Contents {
	c := &bench.Contents{Volume: 100, Species: map[string]float64{
		r["reactant_1"]: 0.5, r["reactant_2"]: 0.6, r["catalyst"]: 0.025, r["solvent"]: 1900, standard: 0.25}}
	if r["ligand"] != "None" {
		c.Species[r["ligand"]] = 0.05
	}
	if r["reagent"] != "None" {
		c.Species[r["reagent"]] = 1.5
	}
	return c
}

// bhWell is the well of a Buchwald–Hartwig row: 0.5 µmol each of aryl halide and
// p-toluidine, the precatalyst, base and additive, in DMSO, with the internal standard.
func bhWell(r insRow) *bench.Contents {
	c := &bench.Contents{Volume: 100, Species: map[string]float64{
		r["aryl_halide"]: 0.5, r["amine"]: 0.5, r["ligand"]: 0.025, r["base"]: 0.75, "DMSO": 1400, standard: 0.25}}
	if r["additive"] != "None" {
		c.Species[r["additive"]] = 0.5
	}
	return c
}

// TestReactionsReproduceDatasets runs a sample of each dataset's rows, a plate at a time, on
// the heater-shaker at the dataset's conditions and measures them with the analysis twin: the
// yields are the dataset's, exactly without noise and within it with.
func TestReactionsReproduceDatasets(t *testing.T) {
	lw := insPlate(t)
	var wellIDs []string
	for _, col := range lw.Ordering {
		wellIDs = append(wellIDs, col...)
	}
	for _, ds := range []struct {
		rel       string
		every     int
		make      func(insRow) *bench.Contents
		limiting  func(insRow) string
		reactants []string
		spec      *bench.ReactionSpec
	}{
		{suzukiCSV, 29, suzukiWell, func(r insRow) string { return r["reactant_1"] }, []string{"reactant_1", "reactant_2"}, &bench.Suzuki},
		{bhCSV, 23, bhWell, func(r insRow) string { return r["aryl_halide"] }, []string{"aryl_halide", "amine"}, &bench.BuchwaldHartwig},
	} {
		var sample []insRow
		for i, r := range insRows(t, ds.rel) {
			if i%ds.every == 0 && r["aryl_halide"] != "None" {
				sample = append(sample, r)
			}
		}
		for _, noisy := range []bool{false, true} {
			ho, ao := &bench.HeaterShakerOptions{Seed: 1}, &bench.AnalyzerOptions{Seed: 2}
			if noisy {
				ho.YieldNoise, ao.Noise = 1, 0.005
			}
			h := insHeaterShaker(t, ho)
			if err := h.SetTemperature(ds.spec.Temperature); err != nil {
				t.Fatal(err)
			}
			var sumDiff float64
			for start := 0; start < len(sample); start += len(wellIDs) {
				plate := map[string]*bench.Contents{}
				rows := map[string]insRow{}
				for i, r := range sample[start:min(len(sample), start+len(wellIDs))] {
					plate[wellIDs[i]], rows[wellIDs[i]] = ds.make(r), r
				}
				ev, err := h.Hold(context.Background(), lw, plate, ds.spec.Time)
				if err != nil {
					t.Fatal(err)
				}
				if len(ev.Wells) != len(plate) {
					t.Fatalf("%d outcomes for %d wells", len(ev.Wells), len(plate))
				}
				for _, out := range ev.Wells {
					r := rows[out.Well]
					want, _ := strconv.ParseFloat(r["yield"], 64)
					if !out.Reacted || out.DatasetYield != want || out.Product != r["product_smiles"] {
						t.Fatalf("%s row %v: %+v; want yield %v and product %s", ds.rel, r, out, want, r["product_smiles"])
					}
					a, err := bench.NewAnalyzer(map[string]float64{out.Product: 1.8, standard: 1.0, ds.limiting(r): 1.2}, ao)
					if err != nil {
						t.Fatal(err)
					}
					ch, err := a.Analyze(context.Background(), out.Well, plate[out.Well])
					if err != nil {
						t.Fatal(err)
					}
					vsStd, err1 := ch.YieldVsStandard(out.Product, standard, 0.25, 0.5)
					vsLim, err2 := ch.YieldVsLimiting(out.Product, ds.limiting(r))
					if err := errors.Join(err1, err2); err != nil {
						t.Fatal(err)
					}
					tol := 1e-9
					if noisy {
						tol = 6 // 1 pp of reaction noise and 0.5 % of area noise, at over 5 σ
					}
					if math.Abs(vsStd-want) > tol || math.Abs(vsLim-want) > tol {
						t.Errorf("%s %s: analysis gives %.4f %% (standard), %.4f %% (limiting); the dataset %.4f %%", ds.rel, out.Well, vsStd, vsLim, want)
					}
					sumDiff += vsStd - want
				}
			}
			if mean := sumDiff / float64(len(sample)); math.Abs(mean) > 0.5 {
				t.Errorf("%s (noise %v): the analysed yields are off the dataset's by %.3f pp on average", ds.rel, noisy, mean)
			}
		}
	}
}

// TestHoldConservesMass holds random wells, some complete reactions and some not: every
// reactant lost is product formed, and nothing else changes.
func TestHoldConservesMass(t *testing.T) {
	lw := insPlate(t)
	rows := insRows(t, suzukiCSV)
	rng := rand.New(rand.NewPCG(5, 6))
	plate := map[string]*bench.Contents{}
	for _, col := range lw.Ordering {
		for _, id := range col {
			c := suzukiWell(rows[rng.IntN(len(rows))])
			for sp := range c.Species {
				c.Species[sp] *= 0.1 + rng.Float64()
				if rng.IntN(20) == 0 {
					delete(c.Species, sp) // an incomplete well
				}
			}
			plate[id] = c
		}
	}
	before := map[string]bench.Contents{}
	for id, c := range plate {
		before[id] = c.Clone()
	}
	h := insHeaterShaker(t, &bench.HeaterShakerOptions{YieldNoise: 2, Seed: 9})
	if err := h.SetTemperature(bench.Suzuki.Temperature); err != nil {
		t.Fatal(err)
	}
	ev, err := h.Hold(context.Background(), lw, plate, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	reacted := 0
	for _, out := range ev.Wells {
		b, a := before[out.Well], plate[out.Well]
		if a.Volume != b.Volume {
			t.Errorf("%s: volume %g → %g", out.Well, b.Volume, a.Volume)
		}
		if !out.Reacted {
			if out.Note == "" || !cmp.Equal(a.Species, b.Species) {
				t.Errorf("%s did not react (%q) but changed: %v → %v", out.Well, out.Note, b.Species, a.Species)
			}
			continue
		}
		reacted++
		isReactant := map[string]bool{}
		limiting := math.Inf(1)
		for _, sp := range out.Reactants {
			isReactant[sp] = true
			limiting = min(limiting, b.Species[sp])
		}
		if len(isReactant) != 2 || math.Abs(out.Formed-out.Yield/100*limiting) > 1e-12*limiting {
			t.Errorf("%s: formed %g µmol at %g %% of the limiting %g µmol of %v", out.Well, out.Formed, out.Yield, limiting, out.Reactants)
		}
		var lost float64
		for sp, n := range b.Species {
			switch d := n - a.Species[sp]; {
			case isReactant[sp]:
				lost += d
				if math.Abs(d-out.Formed) > 1e-12*n {
					t.Errorf("%s: reactant %s lost %g µmol, product formed %g", out.Well, sp, d, out.Formed)
				}
			case d != 0:
				t.Errorf("%s: %s changed by %g µmol", out.Well, sp, -d)
			}
		}
		if a.Species[out.Product] != out.Formed || b.Species[out.Product] != 0 || math.Abs(lost-2*out.Formed) > 1e-12*lost {
			t.Errorf("%s: product %g µmol, formed %g; the reactants lost %g in all", out.Well, a.Species[out.Product], out.Formed, lost)
		}
	}
	if reacted < 40 || reacted == len(ev.Wells) {
		t.Errorf("%d of %d wells reacted: the test wants both kinds", reacted, len(ev.Wells))
	}
}

// TestHoldOutcomes: what a hold says of each well, exactly.
func TestHoldOutcomes(t *testing.T) {
	lw := insPlate(t)
	suzuki := insRow{"reactant_1": "6-chloroquinoline", "reactant_2": "2a, Boronic Acid", "catalyst": "Pd(OAc)2",
		"ligand": "SPhos", "reagent": "K3PO4", "solvent": "MeCN"}
	bh := insRow{"aryl_halide": "2-iodopyridine", "amine": "p-toluidine", "ligand": "XPhos", "base": "MTBD", "additive": "None"}
	with := func(c *bench.Contents, change map[string]float64) *bench.Contents {
		for sp, n := range change {
			if n == 0 {
				delete(c.Species, sp)
			} else {
				c.Species[sp] = n
			}
		}
		return c
	}
	const product = "C1=C(C2=C(C)C=CC3N(C4OCCCC4)N=CC2=3)C=CC2=NC=CC=C12"
	suzukiRx := &bench.WellOutcome{Reaction: "suzuki_perera2018", Reactants: []string{"6-chloroquinoline", "2a, Boronic Acid"},
		Conditions: lab.Conditions{"catalyst": "Pd(OAc)2", "ligand": "SPhos", "reagent": "K3PO4", "solvent": "MeCN"}, Product: product}
	for _, c := range []struct {
		name   string
		temp   float64 // 0: the heater off
		hold   time.Duration
		well   *bench.Contents
		note   string
		suzuki bool // the outcome names the Suzuki row
	}{
		{"dye", 90, time.Hour, &bench.Contents{Volume: 50, Species: map[string]float64{"tartrazine": 0.01}},
			"holds no reactant of a mapped reaction (suzuki_perera2018, buchwald_hartwig_ahneman2018_with_controls)", false},
		{"solvent only", 90, time.Hour, &bench.Contents{Volume: 50}, "holds no reactant of a mapped reaction (suzuki_perera2018, buchwald_hartwig_ahneman2018_with_controls)", false},
		{"no reactant_2", 90, time.Hour, with(suzukiWell(suzuki), map[string]float64{"2a, Boronic Acid": 0}),
			"holds no reactant_2 (2a, Boronic Acid; 2b, Boronic Ester; 2c, Trifluoroborate; 2d, Bromide)", false},
		{"two ligands", 90, time.Hour, with(suzukiWell(suzuki), map[string]float64{"XPhos": 0.05}), "holds more than one ligand: SPhos; XPhos", false},
		{"no catalyst", 90, time.Hour, with(suzukiWell(suzuki), map[string]float64{"Pd(OAc)2": 0}), "holds no catalyst (Pd(OAc)2)", false},
		{"no solvent", 90, time.Hour, with(suzukiWell(suzuki), map[string]float64{"MeCN": 0}), "holds no solvent (DMF; MeCN; MeOH; THF)", false},
		{"unmapped pair", 90, time.Hour, with(suzukiWell(suzuki), map[string]float64{"2a, Boronic Acid": 0, "2d, Bromide": 0.6}),
			"the dataset has no reaction of 6-chloroquinoline + 2d, Bromide", false},
		{"no DMSO", 60, 16 * time.Hour, with(bhWell(bh), map[string]float64{"DMSO": 0}), "holds no DMSO", false},
		{"two reactions", 90, time.Hour, with(suzukiWell(suzuki), map[string]float64{"2-iodopyridine": 0.5}),
			"holds reactants of more than one mapped reaction (suzuki_perera2018, buchwald_hartwig_ahneman2018_with_controls)", false},
		{"ambient", 0, time.Hour, suzukiWell(suzuki), "needs 90 °C for 1h0m0s; held at 25 °C", true},
		{"too hot", 91, time.Hour, suzukiWell(suzuki), "needs 90 °C for 1h0m0s; held at 91 °C", true},
		{"too short", 90, 59 * time.Minute, suzukiWell(suzuki), "needs 1h0m0s at 90 °C; held 59m0s", true},
		{"already reacted", 90, time.Hour, with(suzukiWell(suzuki), map[string]float64{product: 0.2}),
			"already holds the product (0.2 µmol); the dataset maps a fresh reaction", true},
		{"within tolerance", 90.5, 3 * time.Hour, suzukiWell(suzuki), "", true},
	} {
		h := insHeaterShaker(t, &bench.HeaterShakerOptions{})
		if c.temp != 0 {
			if err := h.SetTemperature(c.temp); err != nil {
				t.Fatal(err)
			}
		}
		ev, err := h.Hold(context.Background(), lw, map[string]*bench.Contents{"C7": c.well}, c.hold)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(ev.Wells) != 1 {
			t.Fatalf("%s: %d outcomes", c.name, len(ev.Wells))
		}
		out := ev.Wells[0]
		if out.Well != "C7" || out.Note != c.note || out.Reacted != (c.note == "") {
			t.Errorf("%s: %+v\nwant note %q", c.name, out, c.note)
		}
		if c.suzuki {
			want := *suzukiRx
			want.Well, want.Note, want.Reacted = "C7", c.note, c.note == ""
			want.DatasetYield, want.Yield, want.Formed = out.DatasetYield, out.Yield, out.Formed
			if diff := cmp.Diff(&want, &out); diff != "" || out.DatasetYield <= 0 {
				t.Errorf("%s: the outcome differs (-want +got):\n%s", c.name, diff)
			}
		}
	}
}

func TestHoldIsSeeded(t *testing.T) {
	lw := insPlate(t)
	rows := insRows(t, suzukiCSV)
	yields := func(seed uint64) []float64 {
		h := insHeaterShaker(t, &bench.HeaterShakerOptions{YieldNoise: 1, Seed: seed})
		if err := h.SetTemperature(90); err != nil {
			t.Fatal(err)
		}
		plate := map[string]*bench.Contents{}
		for i, id := range lw.Ordering[0] {
			plate[id] = suzukiWell(rows[100*i+7])
		}
		ev, err := h.Hold(context.Background(), lw, plate, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, w := range ev.Wells {
			out = append(out, w.Yield-w.DatasetYield)
		}
		return out
	}
	a, b, c := yields(1), yields(1), yields(2)
	if !cmp.Equal(a, b) || cmp.Equal(a, c) {
		t.Errorf("seed 1 twice: %v, %v; seed 2: %v", a, b, c)
	}
	for _, d := range a {
		if d == 0 || math.Abs(d) > 5 {
			t.Errorf("yield noise of σ 1 pp drew %g", d)
		}
	}
}

func TestHeaterShakerErrors(t *testing.T) {
	lw := insPlate(t)
	h := insHeaterShaker(t, nil)
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || err.Error() != want || !errors.Is(err, bench.ErrHeaterShaker) {
			t.Errorf("%s:\n got %v\nwant %s", name, err, want)
		}
	}
	check("too cool", h.SetTemperature(30), "bench: heater-shaker: temperature 30 °C is outside 37–95 °C")
	check("too hot", h.SetTemperature(100), "bench: heater-shaker: temperature 100 °C is outside 37–95 °C")
	check("slow", h.SetShakeSpeed(100), "bench: heater-shaker: shake speed 100 rpm is outside 200–3000 rpm")
	check("latch open", h.SetShakeSpeed(1000), "bench: heater-shaker: cannot shake at 1000 rpm with the labware latch open")
	h.CloseLatch()
	if err := h.SetShakeSpeed(1000); err != nil {
		t.Fatal(err)
	}
	check("open while shaking", h.OpenLatch(), "bench: heater-shaker: cannot open the labware latch while shaking at 1000 rpm")
	h.DeactivateShaker()
	if err := h.OpenLatch(); err != nil {
		t.Error(err)
	}
	_, err := h.Hold(context.Background(), lw, map[string]*bench.Contents{"A1": {}, "Q1": {}}, time.Hour)
	check("unknown well", err, "bench: heater-shaker: labware corning_96_wellplate_360ul_flat has no well Q1")
	_, err = h.Hold(context.Background(), lw, nil, 0)
	check("no time", err, "bench: heater-shaker: hold of 0s: the duration must be positive")
	_, err = bench.NewHeaterShaker(nil, &bench.HeaterShakerOptions{YieldNoise: -1})
	check("noise", err, "bench: heater-shaker: yield noise -1 must be finite and not negative")
	if err := h.SetTemperature(60); err != nil || h.Temperature() != 60 {
		t.Errorf("set 60 °C: %v, %g °C", err, h.Temperature())
	}
	if h.DeactivateHeater(); h.Temperature() != 25 {
		t.Errorf("off: %g °C, want ambient 25 °C", h.Temperature())
	}
}

// BenchmarkHold96 is a hold of a 96-well plate of Suzuki reactions.
func BenchmarkHold96(b *testing.B) {
	lw := insPlate(b)
	rows := insRows(b, suzukiCSV)
	h := insHeaterShaker(b, nil)
	if err := h.SetTemperature(90); err != nil {
		b.Fatal(err)
	}
	fresh := map[string]*bench.Contents{}
	i := 0
	for _, col := range lw.Ordering {
		for _, id := range col {
			fresh[id] = suzukiWell(rows[i*59])
			i++
		}
	}
	plate := map[string]*bench.Contents{}
	for b.Loop() {
		b.StopTimer()
		for id, c := range fresh {
			cc := c.Clone()
			plate[id] = &cc
		}
		b.StartTimer()
		if _, err := h.Hold(context.Background(), lw, plate, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReaderSeesTheProduct reads a Suzuki well, diluted 20-fold as a chemist would, before
// and after its reaction at 350 nm, the edge of the product's UV band: the absorbance rises by
// the product's ε·c·l, and stays near zero at 450 nm (the product is colourless).
func TestReaderSeesTheProduct(t *testing.T) {
	lw := insPlate(t)
	r := insReader(t, &bench.ReaderOptions{})
	well := suzukiWell(insRow{"reactant_1": "6-Iodoquinoline", "reactant_2": "2b, Boronic Ester", "catalyst": "Pd(OAc)2",
		"ligand": "XPhos", "reagent": "KOH", "solvent": "THF"})
	read := func() *bench.Reading {
		dilute := bench.Contents{Volume: 200, Species: map[string]float64{}} // 10 µL in 190 µL
		for sp, n := range well.Species {
			dilute.Species[sp] = n / 10
		}
		rd, err := r.Read(context.Background(), lw, map[string]*bench.Contents{"D4": &dilute}, []float64{350, 450})
		if err != nil {
			t.Fatal(err)
		}
		return rd
	}
	before := read()
	h := insHeaterShaker(t, &bench.HeaterShakerOptions{})
	if err := h.SetTemperature(90); err != nil {
		t.Fatal(err)
	}
	ev, err := h.Hold(context.Background(), lw, map[string]*bench.Contents{"D4": well}, time.Hour)
	if err != nil || !ev.Wells[0].Reacted {
		t.Fatalf("hold: %v, %+v", err, ev)
	}
	after := read()
	out := ev.Wells[0]
	want := insEpsilon(t, out.Product, 350) * out.Formed / 10 / 200 * insPath(lw, 200)
	got := after.Well("D4").OD[0] - before.Well("D4").OD[0]
	if math.Abs(got-want) > 1e-12 || want < 0.1 || after.Well("D4").OD[0] >= bench.DefaultCeiling || after.Well("D4").OD[1] > 1e-3 {
		t.Errorf("the product (%g µmol) adds %g OD at 350 nm, want %g; at 450 nm %g, want about 0", out.Formed, got, want, after.Well("D4").OD[1])
	}
	if len(before.Warnings) != 7 || len(after.Warnings) != 7 {
		t.Errorf("warnings of the species without a spectrum: %q, %q", before.Warnings, after.Warnings)
	}
}
