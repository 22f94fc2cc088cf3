package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/labmate/labmate/lab"
)

// The layout of an Instrument's deck: stock reservoirs from slot 1 (slot 4 skipped), the
// heater-shaker with the reaction plate in slot 4, tip racks in the slots left.
const (
	instrumentPlate     = "corning_96_wellplate_360ul_flat"
	instrumentReservoir = "nest_12_reservoir_15ml"
	instrumentTips      = "opentrons_96_tiprack_300ul"
	instrumentHS        = 4
	// stockUL is each stock well's volume, µL; stock concentrations in mol/L.
	stockUL       = 14000
	limitingMolar = 0.1  // the first reactant: the limiting reagent
	excessMolar   = 0.15 // the other reactants
	otherMolar    = 0.05 // catalysts, ligands, bases, additives
	solventMolar  = 1.0  // a solvent's stock: any amount of it counts
)

// InstrumentOptions configure an Instrument; nil means the defaults.
type InstrumentOptions struct {
	// HeaterShaker and Analyzer are the deck's modules' options; nil: no noise, so that the
	// measured yield is the dataset's.
	HeaterShaker *HeaterShakerOptions
	Analyzer     *AnalyzerOptions
	// VolumeUL is how much of each stock goes into a reaction well (default 20 µL).
	VolumeUL float64
}

// Instrument is one group (one set of reactants) of a mapped reaction dataset run as
// protocols on the bench twin, a lab.Instrument: each experiment fills the next well of a
// plate on the heater-shaker with VolumeUL of the stock of each reactant and of each level of
// the conditions, a new tip for each, holds the plate at the reaction's temperature for its
// time, injects a sample of the well into the analysis twin and measures the yield against
// the limiting reagent (the first reactant). The species the reaction requires besides (its
// one solvent) are dispensed into every well too. Its deck has a reservoir well of stock for every
// level of the group's space; a plate that is full, or tips that run out, are replaced by a
// fresh deck set up alike. An Instrument is safe for concurrent use: experiments run one at a
// time. Conditions the dataset has no measurement of are lab.ErrUnavailable, as the dataset's
// own instrument says.
type Instrument struct {
	rx        *Reaction
	group     *reactantGroup
	reactants []string // the group's reactant species, in column order
	o         InstrumentOptions
	stocks    map[string]string // species → its stock well

	mu   sync.Mutex
	base *Deck // set up, nothing run
	deck *Deck // the current plate's
	next int   // the next well of the plate, in its ordering
}

// Instrument returns group key of the reaction as an Instrument: key is the reactant levels,
// with or without the product after them, joined with " / " (a dataset's group key when the
// table is grouped by those columns), or some of them that only one group has (a table
// grouped by the aryl halide of a screen with one amine).
func (r *Reaction) Instrument(key string, o *InstrumentOptions) (*Instrument, error) {
	var g *reactantGroup
	var keys []string
	n := len(r.Spec.Reactants)
	var partial []*reactantGroup // groups whose reactants include every part of key
	for _, rg := range r.groups {
		keys = append(keys, rg.g.Key)
		if rg.g.Key == key || strings.Join(rg.g.Values[:n], " / ") == key {
			g = rg
		}
		parts := strings.Split(key, " / ")
		if len(parts) < n && !slices.ContainsFunc(parts, func(p string) bool { return !slices.Contains(rg.g.Values[:n], p) }) {
			partial = append(partial, rg)
		}
	}
	if g == nil && len(partial) == 1 {
		g = partial[0]
	}
	if g == nil {
		slices.Sort(keys)
		return nil, fmt.Errorf("%w: %s: no group %q (groups: %s)", ErrReaction, r.Name, key, strings.Join(keys, "; "))
	}
	in := &Instrument{rx: r, group: g, reactants: g.g.Values[:len(r.Spec.Reactants)], stocks: map[string]string{}}
	if o != nil {
		in.o = *o
	}
	if in.o.VolumeUL == 0 {
		in.o.VolumeUL = 20
	}
	if in.o.HeaterShaker == nil {
		in.o.HeaterShaker = &HeaterShakerOptions{}
	}
	if in.o.Analyzer == nil {
		in.o.Analyzer = &AnalyzerOptions{}
	}
	base, err := in.setUp()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the instrument's deck: %w", ErrReaction, key, err)
	}
	in.base = base
	in.deck = base.Clone()
	return in, nil
}

// setUp makes the deck: modules, stocks and tips.
func (in *Instrument) setUp() (*Deck, error) {
	d := NewDeck()
	err := d.Equip(&Equipment{
		Reactions:    []*Reaction{in.rx},
		HeaterShaker: in.o.HeaterShaker,
		Calibration:  map[string]float64{in.group.product: 1, in.reactants[0]: 1},
		Analyzer:     in.o.Analyzer,
	})
	if err != nil {
		return nil, err
	}
	type stock struct {
		species string
		molar   float64
	}
	var stocks []stock
	for i, sp := range in.reactants {
		stocks = append(stocks, stock{sp, map[bool]float64{true: limitingMolar, false: excessMolar}[i == 0]})
	}
	for _, sp := range in.rx.Spec.Require {
		stocks = append(stocks, stock{sp, solventMolar})
	}
	for _, v := range in.Space().Vars {
		for _, l := range v.Levels {
			if l == in.rx.Spec.None {
				continue
			}
			m := otherMolar
			if strings.Contains(strings.ToLower(v.Name), "solvent") {
				m = solventMolar
			}
			stocks = append(stocks, stock{l, m})
		}
	}
	var cmds []Command
	add := func(name string, a Args) { cmds = append(cmds, Command{Name: name, Args: a}) }
	add("load_module", Args{Module: HeaterShakerModule, Slot: fmt.Sprint(instrumentHS)})
	add("load_labware", Args{LoadName: instrumentPlate, Slot: fmt.Sprint(instrumentHS), Label: "rx"})
	slot := 0
	nextSlot := func() int {
		if slot++; slot == instrumentHS {
			slot++
		}
		return slot
	}
	for i, s := range stocks {
		if i%12 == 0 {
			add("load_labware", Args{LoadName: instrumentReservoir, Slot: fmt.Sprint(nextSlot()), Label: fmt.Sprintf("stocks%d", i/12+1)})
		}
		well := fmt.Sprintf("stocks%d/A%d", i/12+1, i%12+1)
		in.stocks[s.species] = well
		add("load_liquid", Args{Well: well, Volume: stockUL, Concentrations: map[string]float64{s.species: s.molar}})
	}
	var racks []string
	for slot < 11 {
		n := nextSlot()
		racks = append(racks, fmt.Sprintf("tips%d", n))
		add("load_labware", Args{LoadName: instrumentTips, Slot: fmt.Sprint(n), Label: racks[len(racks)-1]})
	}
	if len(racks) == 0 {
		return nil, fmt.Errorf("%d stocks leave no slot for tips", len(stocks))
	}
	add("load_instrument", Args{Instrument: "p300_single_gen2", Mount: "left", TipRacks: racks})
	add("hs_close_latch", Args{Slot: fmt.Sprint(instrumentHS)})
	add("hs_set_temperature", Args{Slot: fmt.Sprint(instrumentHS), Celsius: in.rx.Spec.Temperature})
	if _, err := d.Run(context.Background(), cmds); err != nil {
		return nil, err
	}
	return d, nil
}

// Space is the group's condition space.
func (in *Instrument) Space() *lab.Space { return in.group.g.Space() }

// Run runs the conditions as a protocol on the next well of the plate and measures the
// yield.
func (in *Instrument) Run(ctx context.Context, c lab.Conditions) (lab.Measurement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A condition the dataset has no measurement of is no reaction the twin can run.
	if _, err := in.group.g.Run(ctx, c); err != nil {
		return nil, err
	}
	species := append(slices.Clone(in.reactants), in.rx.Spec.Require...)
	for _, v := range in.Space().Vars {
		if l := c[v.Name]; l != in.rx.Spec.None {
			species = append(species, l)
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	y, err := in.run(ctx, species)
	if errors.Is(err, ErrNoTipLeft) || errors.Is(err, ErrWellShort) || errors.Is(err, errPlateFull) {
		in.deck, in.next = in.base.Clone(), 0 // a fresh plate, tips and stocks
		y, err = in.run(ctx, species)
	}
	if err != nil {
		return nil, fmt.Errorf("bench instrument: %s: %w", c, err)
	}
	return lab.Measurement{in.rx.Spec.Objective: y}, nil
}

var errPlateFull = errors.New("bench: the plate is full")

// run is one experiment on the current deck; a failed one leaves the deck as it was.
func (in *Instrument) run(ctx context.Context, species []string) (float64, error) {
	plate, err := in.deck.Labware("rx")
	if err != nil {
		return 0, err
	}
	var wells []string
	for _, col := range plate.Ordering {
		wells = append(wells, col...)
	}
	if in.next >= len(wells) {
		return 0, errPlateFull
	}
	well := "rx/" + wells[in.next]
	var cmds []Command
	add := func(name string, a Args) { cmds = append(cmds, Command{Name: name, Args: a, Line: len(cmds) + 1}) }
	for _, sp := range species {
		add("transfer", Args{Mount: "left", Volume: in.o.VolumeUL, Source: []string{in.stocks[sp]}, Dest: []string{well}, NewTip: "always"})
	}
	add("hs_set_shake_speed", Args{Slot: fmt.Sprint(instrumentHS), RPM: 1000})
	add("delay", Args{Minutes: in.rx.Spec.Time.Minutes()})
	add("hs_deactivate_shaker", Args{Slot: fmt.Sprint(instrumentHS)})
	add("analyze", Args{Well: well})
	d := in.deck.Clone()
	evs, err := d.Run(ctx, cmds)
	if err != nil {
		return 0, err
	}
	for _, h := range evs[len(evs)-3].Holds {
		for _, w := range h.Wells {
			if "rx/"+w.Well == well && !w.Reacted {
				return 0, fmt.Errorf("%w: %s did not react: %s", ErrReaction, well, w.Note)
			}
		}
	}
	y, err := evs[len(evs)-1].Chromatogram.YieldVsLimiting(in.group.product, in.reactants[0])
	if err != nil {
		return 0, err
	}
	in.deck, in.next = d, in.next+1
	return y, nil
}

// Deck returns a copy of the deck of the current plate.
func (in *Instrument) Deck() *Deck {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.deck.Clone()
}
