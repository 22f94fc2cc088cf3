package benchtasks

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab/bench"
)

// The labware of the tasks' decks.
const (
	plateName = "corning_96_wellplate_360ul_flat"
	reservoir = "nest_12_reservoir_15ml"
	tipRack   = "opentrons_96_tiprack_300ul"
	// volumeTolerance is how far (µL) a well's volume may be from the asked one.
	volumeTolerance = 5.0
)

// api is what every goal says about the bench.
const api = `You have an Opentrons OT-2 liquid handler (labmate's bench twin) in your Python kernel: ` +
	"`import labmate; protocol = labmate.bench()` is its Opentrons Protocol API v2 ProtocolContext. " +
	"The deck is already set up; `protocol.loaded_labwares` gives its labware by slot number. " +
	"No pipette is loaded yet: load one with `protocol.load_instrument(\"p300_single_gen2\", \"left\", tip_racks=[protocol.loaded_labwares[3]])` " +
	"(20–300 µL). "

func cmd(name string, a bench.Args) bench.Command { return bench.Command{Name: name, Args: a} }

// dyeDeck is a plate in slot 1, a reservoir with a dye in A1 in slot 2 and tips in slot 3.
func dyeDeck(dye string, molar float64) []bench.Command {
	return []bench.Command{
		cmd("load_labware", bench.Args{LoadName: plateName, Slot: "1", Label: "plate"}),
		cmd("load_labware", bench.Args{LoadName: reservoir, Slot: "2", Label: "reservoir"}),
		cmd("load_labware", bench.Args{LoadName: tipRack, Slot: "3", Label: "tips"}),
		cmd("load_liquid", bench.Args{Well: "reservoir/A1", Volume: 10000, Concentrations: map[string]float64{dye: molar}}),
	}
}

// wellsGrade grades a plate against the wells that should hold v µL of dye, the others
// empty: the score is the share of wells right.
func wellsGrade(d *bench.Deck, dye string, v float64, filled []string) *eval.Grade {
	lw, err := d.Labware("plate")
	if err != nil {
		return failed(err.Error())
	}
	var wrong []string
	n := 0
	for _, col := range lw.Ordering {
		for _, w := range col {
			n++
			c, err := d.Well("plate/" + w)
			if err != nil {
				return failed(err.Error())
			}
			want := 0.0
			if slices.Contains(filled, w) {
				want = v
			}
			ok := math.Abs(c.Volume-want) <= volumeTolerance && (want == 0 || c.Species[dye] > 0)
			if !ok {
				wrong = append(wrong, fmt.Sprintf("%s holds %.1f µL (want %g µL)", w, c.Volume, want))
			}
		}
	}
	g := &eval.Grade{Score: 100 * float64(n-len(wrong)) / float64(n), Passed: len(wrong) == 0,
		Details: map[string]any{"wells": n, "wrong": len(wrong)}}
	if len(wrong) > 0 {
		g.Details["first_wrong"] = wrong[:min(len(wrong), 8)]
	}
	return g
}

func colourRows() *task {
	const dye, v = "brilliant blue FCF", 100.0
	var filled []string
	for _, r := range "ACEG" {
		for c := 1; c <= 12; c++ {
			filled = append(filled, fmt.Sprintf("%c%d", r, c))
		}
	}
	return &task{
		item: eval.Item{ID: "colour_rows", Group: "liquid handling", Kernel: "python", Goal: api +
			"Deck: slot 1 a Corning 96-well plate (empty, label \"plate\"), slot 2 a 12-well reservoir whose A1 holds 10 mL of " +
			"brilliant blue FCF solution, slot 3 a rack of 300 µL tips. " +
			"Task: colour every other row of the plate: put 100 µL of the dye into every well of rows A, C, E and G, and leave " +
			"rows B, D, F and H empty. Then answer with a one-line summary of what you did."},
		setup: dyeDeck(dye, 1e-4),
		grade: func(d *bench.Deck, _ string) *eval.Grade { return wellsGrade(d, dye, v, filled) },
	}
}

// crossWells is the shape of draw_shape: a cross, row D and column 6.
var crossWells = func() []string {
	var w []string
	for c := 1; c <= 12; c++ {
		w = append(w, fmt.Sprintf("D%d", c))
	}
	for _, r := range "ABCEFGH" {
		w = append(w, fmt.Sprintf("%c6", r))
	}
	return w
}()

func drawShape() *task {
	const dye, v = "allura red AC", 50.0
	return &task{
		item: eval.Item{ID: "draw_shape", Group: "liquid handling", Kernel: "python", Goal: api +
			"Deck: slot 1 a Corning 96-well plate (empty, label \"plate\"), slot 2 a 12-well reservoir whose A1 holds 10 mL of " +
			"allura red AC solution, slot 3 a rack of 300 µL tips. " +
			"Task: draw a cross on the plate with the dye: put 50 µL of it into each of the wells " + strings.Join(crossWells, ", ") +
			" (row D and column 6), and into no other well. Then answer with a one-line summary of what you did."},
		setup: dyeDeck(dye, 1e-4),
		grade: func(d *bench.Deck, _ string) *eval.Grade { return wellsGrade(d, dye, v, crossWells) },
	}
}

// dyes are the candidates of identify_dyes: species, how an answer names it, λmax (nm).
var dyes = []struct {
	species, name string
	lambdaMax     int
}{
	{"tartrazine", "tartrazine", 426},
	{"sunset yellow FCF", "sunset yellow", 480},
	{"allura red AC", "allura red", 504},
	{"erythrosine", "erythrosin", 526},
	{"indigo carmine", "indigo carmine", 610},
	{"brilliant blue FCF", "brilliant blue", 630},
}

// unknowns are identify_dyes's wells: A1, A2 and A3, 200 µL each at these concentrations (M),
// reading about 0.3–0.8 OD at their maximum.
var unknowns = []struct {
	well, species string
	molar         float64
}{
	{"A1", "allura red AC", 5e-5},
	{"A2", "brilliant blue FCF", 8e-6},
	{"A3", "tartrazine", 4e-5},
}

var wellAnswer = regexp.MustCompile(`(?i)\bA([123])\s*[:=\-–]\s*([^,;\n]+)`)

func identifyDyes() *task {
	setup := []bench.Command{
		cmd("load_labware", bench.Args{LoadName: plateName, Slot: "1", Label: "unknowns"}),
		cmd("load_labware", bench.Args{LoadName: tipRack, Slot: "3", Label: "tips"}),
	}
	for _, u := range unknowns {
		setup = append(setup, cmd("load_liquid", bench.Args{Well: "unknowns/" + u.well, Volume: 200, Concentrations: map[string]float64{u.species: u.molar}}))
	}
	var cands []string
	for _, d := range dyes {
		cands = append(cands, fmt.Sprintf("%s (λmax %d nm)", d.name, d.lambdaMax))
	}
	return &task{
		item: eval.Item{ID: "identify_dyes", Group: "spectroscopy", Kernel: "python", Goal: api +
			"Deck: slot 1 a Corning 96-well plate (label \"unknowns\") whose wells A1, A2 and A3 each hold 200 µL of an aqueous " +
			"solution of one unknown food dye, at an unknown concentration; slot 3 a rack of 300 µL tips. Slots 4–11 are free for " +
			"modules: an absorbance plate reader is `protocol.load_module(\"absorbanceReaderV1\", 7)`, then " +
			"`reader.initialize(\"multi\", [wavelengths in nm, 350–800])` and `reader.read(plate)` → {nm: {well: absorbance}} " +
			"(the twin reads the plate where it sits). Each dye is one of: " + strings.Join(cands, ", ") + ". " +
			"Task: identify the three dyes. Answer in the form \"A1: <dye>, A2: <dye>, A3: <dye>\"."},
		setup: setup,
		grade: func(_ *bench.Deck, answer string) *eval.Grade { return gradeDyes(answer) },
	}
}

func gradeDyes(answer string) *eval.Grade {
	named := map[string]string{}
	for _, m := range wellAnswer.FindAllStringSubmatch(answer, -1) {
		named["A"+m[1]] = strings.ToLower(m[2])
	}
	right := 0
	got := map[string]string{}
	for _, u := range unknowns {
		text := named[u.well]
		var says []string
		for _, d := range dyes {
			if strings.Contains(strings.NewReplacer("_", " ", "-", " ").Replace(text), d.name) {
				says = append(says, d.species)
			}
		}
		got[u.well] = strings.Join(says, "+")
		if len(says) == 1 && says[0] == u.species {
			right++
		}
	}
	return &eval.Grade{Score: 100 * float64(right) / float64(len(unknowns)), Passed: right == len(unknowns),
		Details: map[string]any{"right": right, "named": got}}
}
