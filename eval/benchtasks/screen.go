package benchtasks

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab/bench"
)

// The Suzuki screen: 6-bromoquinoline with boronic acid 2a, Pd(OAc)2 in MeCN, four ligands by
// two bases — eight rows of Perera et al.'s dataset.
const (
	product   = "C1=C(C2=C(C)C=CC3N(C4OCCCC4)N=CC2=3)C=CC2=NC=CC=C12"
	halide    = "6-Bromoquinoline"
	boronic   = "2a, Boronic Acid"
	catalyst  = "Pd(OAc)2"
	solvent   = "MeCN"
	mecnMolar = 19.1 // neat acetonitrile, mol/L
	stockUL   = 10000
)

var (
	ligands = []string{"P(tBu)3", "SPhos", "dppf", "P(Ph)3"}
	bases   = []string{"NaOH", "K3PO4"}
)

// calibration is the analysis method's response factors (area per mM): the product and the
// limiting reagent.
var calibration = map[string]float64{product: 1.8, halide: 1.0}

// stock is one reservoir well of the screen's deck.
type stock struct {
	well, species string
	molar         float64
}

var stocks = func() []stock {
	s := []stock{{"A1", halide, 0.1}, {"A2", boronic, 0.1}, {"A3", catalyst, 0.01}}
	for i, l := range ligands {
		s = append(s, stock{fmt.Sprintf("A%d", 4+i), l, 0.02})
	}
	for i, b := range bases {
		s = append(s, stock{fmt.Sprintf("A%d", 4+len(ligands)+i), b, 0.3})
	}
	return s
}()

// condition is screen condition i (0-based): ligand i/2, base i%2.
func condition(i int) (ligand, base string) { return ligands[i/len(bases)], bases[i%len(bases)] }

func newScreen(equip *bench.Equipment) (*task, error) {
	yields, err := datasetYields(equip)
	if err != nil {
		return nil, err
	}
	best := 0
	for i, y := range yields {
		if y > yields[best] {
			best = i
		}
	}
	setup := []bench.Command{
		cmd("load_labware", bench.Args{LoadName: reservoir, Slot: "2", Label: "stocks"}),
		cmd("load_labware", bench.Args{LoadName: tipRack, Slot: "3", Label: "tips"}),
	}
	var stockText, condText []string
	for _, s := range stocks {
		setup = append(setup, cmd("load_liquid", bench.Args{Well: "stocks/" + s.well, Volume: stockUL,
			Concentrations: map[string]float64{s.species: s.molar, solvent: mecnMolar}}))
		stockText = append(stockText, fmt.Sprintf("%s: %s %g M", s.well, s.species, s.molar))
	}
	for i := range yields {
		l, b := condition(i)
		condText = append(condText, fmt.Sprintf("%d: ligand %s, base %s", i+1, l, b))
	}
	goal := api + "Deck: slot 2 a 12-well reservoir (label \"stocks\") of stock solutions in MeCN, 10 mL each — " +
		strings.Join(stockText, "; ") + "; slot 3 a rack of 300 µL tips. " +
		"A heater-shaker is `hs = protocol.load_module(\"heaterShakerModuleV1\", 4)`; load a Corning 96-well plate on it with " +
		"`hs.load_labware(\"" + plateName + "\")`, then `hs.close_labware_latch()`, `hs.set_and_wait_for_temperature(°C)`, " +
		"`hs.set_and_wait_for_shake_speed(rpm)`; `protocol.delay(minutes=…)` lets time pass while the plate is held (the twin " +
		"does not wait). labmate's analysis twin (an HPLC, not part of Opentrons): `protocol.analyze(well)` returns peak areas, " +
		"and `.yield_vs_limiting(product, \"" + halide + "\")` the percent yield, the product's species being \"" + product + "\". " +
		"Task: run a Suzuki–Miyaura screen of 8 conditions, each in its own well of the heater-shaker plate with 20 µL of each of " +
		halide + ", " + boronic + ", " + catalyst + ", the condition's ligand and its base: " + strings.Join(condText, "; ") + ". " +
		"The reactions need 90 °C for 60 minutes, shaking. Analyse every well and answer \"best condition: N\" with the number " +
		"of the condition of highest yield."
	return &task{
		item:  eval.Item{ID: "suzuki_screen", Group: "reaction screen", Kernel: "python", Goal: goal},
		setup: setup,
		grade: func(d *bench.Deck, answer string) *eval.Grade { return gradeScreen(d, answer, best, yields) },
	}, nil
}

// datasetYields runs the eight conditions on a scratch deck without noise: the dataset's
// yields, by condition.
func datasetYields(equip *bench.Equipment) ([]float64, error) {
	e := *equip
	e.HeaterShaker = &bench.HeaterShakerOptions{}
	d := bench.NewDeck()
	if err := d.Equip(&e); err != nil {
		return nil, fmt.Errorf("benchtasks: %w", err)
	}
	cmds := []bench.Command{
		cmd("load_module", bench.Args{Module: bench.HeaterShakerModule, Slot: "4"}),
		cmd("load_labware", bench.Args{LoadName: plateName, Slot: "4", Label: "rx"}),
		cmd("hs_set_temperature", bench.Args{Slot: "4", Celsius: bench.Suzuki.Temperature}),
	}
	n := len(ligands) * len(bases)
	for i := range n {
		l, b := condition(i)
		cmds = append(cmds, cmd("load_liquid", bench.Args{Well: fmt.Sprintf("rx/A%d", i+1), Volume: 100, Concentrations: map[string]float64{
			halide: 0.02, boronic: 0.02, catalyst: 0.002, l: 0.004, b: 0.06, solvent: mecnMolar}}))
	}
	cmds = append(cmds, cmd("delay", bench.Args{Minutes: bench.Suzuki.Time.Minutes()}))
	evs, err := d.Run(context.Background(), cmds)
	if err != nil {
		return nil, fmt.Errorf("benchtasks: the screen's conditions: %w", err)
	}
	out := make([]float64, n)
	for _, w := range evs[len(evs)-1].Holds[0].Wells {
		i, _ := strconv.Atoi(strings.TrimPrefix(w.Well, "A"))
		if !w.Reacted {
			return nil, fmt.Errorf("benchtasks: screen condition %d does not react: %s", i, w.Note)
		}
		out[i-1] = w.DatasetYield
	}
	return out, nil
}

var bestAnswer = regexp.MustCompile(`(?i)best condition\D{0,5}(\d+)`)

// gradeScreen: half the score for the eight conditions run on the heater-shaker's plate (a
// well of each that formed product), half for naming the best.
func gradeScreen(d *bench.Deck, answer string, best int, yields []float64) *eval.Grade {
	snap := d.Snapshot()
	slot := 0
	for _, m := range snap.Modules {
		if m.Model == bench.HeaterShakerModule {
			slot = m.Slot
		}
	}
	ran := make([]bool, len(yields))
	for _, lw := range snap.Labware {
		if slot == 0 || lw.Slot != slot {
			continue
		}
		for _, c := range lw.Wells {
			if !(c.Species[product] > 0) {
				continue
			}
			for i := range ran {
				l, b := condition(i)
				if c.Species[l] > 0 && c.Species[b] > 0 {
					ran[i] = true
				}
			}
		}
	}
	nran := 0
	var missing []int
	for i, r := range ran {
		if r {
			nran++
		} else {
			missing = append(missing, i+1)
		}
	}
	named := 0
	if m := bestAnswer.FindStringSubmatch(answer); m != nil {
		named, _ = strconv.Atoi(m[1])
	}
	score := 50 * float64(nran) / float64(len(ran))
	if named == best+1 {
		score += 50
	}
	details := map[string]any{"conditions_run": nran, "named": named, "best": best + 1, "best_yield": yields[best]}
	if slot == 0 {
		details["heater_shaker"] = "none loaded"
	}
	if missing != nil {
		details["not_run"] = missing
	}
	return &eval.Grade{Score: score, Passed: nran == len(ran) && named == best+1, Details: details}
}
