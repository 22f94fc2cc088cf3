package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// model is a pipette model: its channels, its volume range in µL and its default flow rates
// in µL/s (aspirate, dispense, blow-out; before and from API level 2.6, where GEN2 single-channel
// defaults doubled) — Opentrons' pipette name specs (shared-data/pipette, Apache-2.0).
type model struct {
	name     string
	channels int
	min, max float64
	gen      string
	flow     [3]float64 // API 2.0–2.5
	flow26   [3]float64 // API 2.6 and later; zero: as flow
}

var models = map[string]model{
	"p10_single":        {"p10_single", 1, 1, 10, "GEN1", [3]float64{5, 10, 1000}, [3]float64{}},
	"p10_multi":         {"p10_multi", 8, 1, 10, "GEN1", [3]float64{5, 10, 1000}, [3]float64{}},
	"p50_single":        {"p50_single", 1, 5, 50, "GEN1", [3]float64{25, 50, 1000}, [3]float64{}},
	"p50_multi":         {"p50_multi", 8, 5, 50, "GEN1", [3]float64{25, 50, 1000}, [3]float64{}},
	"p300_single":       {"p300_single", 1, 30, 300, "GEN1", [3]float64{150, 300, 1000}, [3]float64{}},
	"p300_multi":        {"p300_multi", 8, 30, 300, "GEN1", [3]float64{150, 300, 1000}, [3]float64{}},
	"p1000_single":      {"p1000_single", 1, 100, 1000, "GEN1", [3]float64{500, 1000, 1000}, [3]float64{}},
	"p20_single_gen2":   {"p20_single_gen2", 1, 1, 20, "GEN2", [3]float64{3.78, 3.78, 3.78}, [3]float64{7.56, 7.56, 7.56}},
	"p300_single_gen2":  {"p300_single_gen2", 1, 20, 300, "GEN2", [3]float64{46.43, 46.43, 46.43}, [3]float64{92.86, 92.86, 92.86}},
	"p1000_single_gen2": {"p1000_single_gen2", 1, 100, 1000, "GEN2", [3]float64{137.35, 137.35, 137.35}, [3]float64{274.7, 274.7, 274.7}},
	"p20_multi_gen2":    {"p20_multi_gen2", 8, 1, 20, "GEN2", [3]float64{7.6, 7.6, 7.6}, [3]float64{}},
	"p300_multi_gen2":   {"p300_multi_gen2", 8, 20, 300, "GEN2", [3]float64{94, 94, 94}, [3]float64{}},
}

// flowRates are the model's default aspirate, dispense and blow-out flow rates at an API level
// (2.6 and later when level is 0).
func (m model) flowRates(minor int) [3]float64 {
	if m.flow26[0] > 0 && (minor == 0 || minor >= 6) {
		return m.flow26
	}
	return m.flow
}

var mounts = [2]string{"left", "right"}

// pipette is an instrument on a mount.
type pipette struct {
	model   model
	mount   string
	lenient bool       // a protocol run's: partial tip pick-ups, channels between tubes
	reuse   bool       // a protocol's below API 2.2: a tip put back in a rack is unused again
	racks   []*labware // where pick_up_tip takes the next unused tip
	tips    []*tip     // by channel; all nil without tips
	// A protocol's configure_nozzle_layout (API level 2.16): nozzles is how many channels are
	// active (0: all of them); back is a primary nozzle H1, the others behind it (toward row
	// A), else the primary nozzle is A1 and the others in front of it.
	nozzles int
	back    bool
}

// active is how many channels take tips: all, or those a nozzle layout leaves.
func (p *pipette) active() int {
	if p.nozzles > 0 {
		return p.nozzles
	}
	return p.model.channels
}

func (p *pipette) describe() string { return "the " + p.mount + " pipette (" + p.model.name + ")" }

// capacity is what the attached tips take: the tip's volume, at most the pipette's maximum.
func (p *pipette) capacity() float64 { return min(p.tips[0].volume, p.model.max) }

func (p *pipette) noTip() error { return fail(ErrNoTip, "no tip on %s", p.describe()) }

// inRange checks a volume a channel aspirates or dispenses against the pipette's range.
func (p *pipette) inRange(v float64) error {
	switch {
	case v < p.model.min-volTol:
		return fail(ErrPipetteRange, "%s µL is below the minimum volume of %s (%s µL)", µl(v), p.model.name, µl(p.model.min))
	case v > p.model.max+volTol:
		return fail(ErrPipetteRange, "%s µL is above the maximum volume of %s (%s µL)", µl(v), p.model.name, µl(p.model.max))
	}
	return nil
}

// spot is a well of loaded labware.
type spot struct {
	lw *labware
	w  int
}

func (s spot) String() string { return s.lw.wellName(s.w) }

// tip is a pipette tip, in its rack or on a pipette.
type tip struct {
	rack    *labware
	well    int     // its place in the rack
	volume  float64 // what it holds when full, µL
	c       Contents
	air     float64         // µL of air (air_gap) below the liquid
	known   bool            // holds liquid of a well load_liquid declared (a protocol run)
	used    bool            // picked up at least once
	touched []spot          // wells it entered, each once, in order
	species map[string]spot // each species it touched and the first well it touched it in
}

func (t *tip) origin() string { return t.rack.wellName(t.well) }

// copyTo returns a deep copy whose labware references are mapped by m (nil: the same deck).
func (t *tip) copyTo(m map[*labware]*labware) *tip {
	c := *t
	c.c = t.c.Clone()
	c.touched = slices.Clone(t.touched)
	c.species = maps.Clone(t.species)
	if m != nil {
		c.rack = m[t.rack]
		for i, s := range c.touched {
			c.touched[i].lw = m[s.lw]
		}
		for sp, s := range c.species {
			c.species[sp] = spot{m[s.lw], s.w}
		}
	}
	return &c
}

// LoadInstrument puts a pipette model on a mount ("left" or "right") with the tip racks
// (labels or slot numbers) pick_up_tip takes tips from, in order.
func (d *Deck) LoadInstrument(name, mount string, tipRacks ...string) error {
	_, err := d.Do(Command{Name: "load_instrument", Args: Args{Instrument: name, Mount: mount, TipRacks: tipRacks}})
	return err
}

func (d *Deck) loadInstrument(a *Args) error {
	m, ok := models[a.Instrument]
	if !ok {
		return fail(ErrInstrument, "unknown instrument %q (known: %s)", a.Instrument, strings.Join(slices.Sorted(maps.Keys(models)), ", "))
	}
	i := slices.Index(mounts[:], a.Mount)
	if i < 0 {
		return fail(ErrInstrument, "mount %q is not left or right", a.Mount)
	}
	if p := d.pipettes[i]; p != nil {
		return fail(ErrInstrument, "the %s mount already holds %s", a.Mount, p.model.name)
	}
	p := &pipette{model: m, mount: a.Mount, tips: make([]*tip, m.channels), lenient: d.prun != nil, reuse: d.prun != nil && d.prun.minor < 2}
	for _, name := range a.TipRacks {
		lw, err := d.labware(name)
		if err != nil {
			return err
		}
		if lw.tips == nil {
			return fail(ErrBadArgs, "tip rack %s is not a tip rack", lw.describe())
		}
		p.racks = append(p.racks, lw)
	}
	d.pipettes[i] = p
	return nil
}

// pipette returns the pipette on a mount.
func (d *Deck) pipette(mount string) (*pipette, error) {
	i := slices.Index(mounts[:], mount)
	switch {
	case i < 0:
		return nil, fail(ErrInstrument, "mount %q is not left or right", mount)
	case d.pipettes[i] == nil:
		return nil, fail(ErrInstrument, "no pipette on the %s mount", mount)
	}
	return d.pipettes[i], nil
}

// reach is the wells a pipette's channels reach when it addresses one well: the well itself
// for a single channel; for 8 channels, the 8 wells of a column addressed by its row A well,
// or 8 times the one well of a single-row labware (a reservoir).
type reach struct {
	lw     *labware
	at     int    // the addressed well
	wells  [8]int // by channel
	n      int    // channels
	shared bool   // all channels in one well
	off    int    // channels that reach no well (between tubes, beyond the labware)
}

func (p *pipette) reach(d *Deck, ref string) (reach, error) {
	lw, i, err := d.well(ref)
	if err != nil {
		return reach{}, err
	}
	return p.reachWell(lw, i)
}

func (p *pipette) reachWell(lw *labware, i int) (reach, error) {
	r := reach{lw: lw, at: i, n: p.active()}
	if r.n == 1 {
		r.wells[0] = i
		return r, nil
	}
	if t := p.tips[0]; t != nil && len(p.tips) < r.n {
		r.n = len(p.tips) // fewer tips than channels: the channels with tips
	}
	col := lw.def.cols[lw.def.col[i]]
	if p.nozzles > 0 {
		if len(col) == 1 {
			r.shared = true
			for k := range r.n {
				r.wells[k] = i
			}
			return r, nil
		}
		return p.reachByGeometry(lw, i, r)
	}
	switch {
	case p.lenient && lw.tips != nil && len(col) == r.n && lw.def.row[i] != 0:
		r.n = len(col) - lw.def.row[i] // a partial pick-up: the channels over the rack
		copy(r.wells[:], col[lw.def.row[i]:])
		return r, nil
	case len(col) > r.n || p.lenient && len(col) != 1 && (len(col) != r.n || lw.def.row[i] != 0):
		return p.reachByGeometry(lw, i, r)
	case len(col) == 1:
		r.shared = true
		for k := range r.n {
			r.wells[k] = i
		}
	case len(col) != r.n:
		return r, fail(ErrChannels, "%s has %d channels: %s has %d rows, not %d or 1", p.model.name, r.n, lw.describe(), lw.def.rows, r.n)
	case lw.def.row[i] != 0:
		return r, fail(ErrChannels, "%s has %d channels: address a column by its row A well, not %s", p.model.name, r.n, lw.wellName(i))
	default:
		copy(r.wells[:], col)
	}
	return r, nil
}

// nextTips finds the first unused tip (for 8 channels: the first column of 8 unused tips) in
// the pipette's tip racks.
func (p *pipette) nextTips(from *spot) (reach, error) {
	started := from == nil
	var partial *reach
	for _, lw := range p.racks {
		for _, col := range lw.def.cols {
			if p.nozzles > 0 && !p.back {
				col = slices.Clone(col) // a primary nozzle A1 takes tips from the front of a column
				slices.Reverse(col)
			}
			for _, i := range col {
				if !started && lw == from.lw && i == from.w {
					started = true
				}
				// A used tip put back is not taken again: from API level 2.2 on, the Opentrons
				// API's tip tracking keeps it used (below it, a protocol's returned tip was
				// tracked as unused again).
				if t := lw.tips[i]; !started || t == nil || t.used && !p.reuse {
					continue
				}
				r, err := p.reachWell(lw, i)
				if err != nil || !fresh(lw, r, p.lenient) {
					continue
				}
				if r.n < p.active() {
					// The Opentrons API takes a full cluster of tips (a column with used
					// ones is passed over); the twin falls back on the first partial one.
					if partial == nil {
						partial = &r
					}
					continue
				}
				return r, nil
			}
		}
	}
	if partial != nil {
		return *partial, nil
	}
	if len(p.racks) == 0 {
		return reach{}, fail(ErrNoTipLeft, "%s has no tip racks: name a tip (tips/A1) or load it with tip racks", p.describe())
	}
	var names []string
	for _, lw := range p.racks {
		names = append(names, lw.name)
	}
	what := "unused tip"
	if n := p.active(); n > 1 {
		what = fmt.Sprintf("column of %d unused tips", n)
	}
	return reach{}, fail(ErrNoTipLeft, "no %s left in the tip racks (%s) of %s", what, strings.Join(names, ", "), p.describe())
}

// reachByGeometry finds the well under each channel (9 mm apart, channel 1 at the addressed
// well): a 384-well plate's every other row, a tube rack's tubes, a trough. A channel beyond
// the labware is an error; one between wells reaches none (-1).
func (p *pipette) reachByGeometry(lw *labware, i int, r reach) (reach, error) {
	def := lw.def.lw
	at := def.Wells[lw.def.names[i]]
	all := true
	step := -9.0 // channel k+1 is 9 mm in front of channel k
	if p.back {
		step = 9 // a primary nozzle H1: the other active channels are behind it
	}
	for k := range r.n {
		y := at.Y + step*float64(k)
		if (y < 0 || y > def.Dimensions.Y) && p.lenient {
			r.wells[k] = -1 // off the labware: what it holds goes nowhere
			r.off++
			all = false
			continue
		}
		if y < 0 || y > def.Dimensions.Y {
			return r, fail(ErrChannels, "%s has %d channels: addressing %s puts channel %d off %s", p.model.name, r.n, lw.wellName(i), k+1, lw.describe())
		}
		r.wells[k] = -1
		for j, name := range lw.def.names {
			w := def.Wells[name]
			dx, dy := at.X-w.X, y-w.Y
			in := false
			if w.Shape == "circular" {
				in = dx*dx+dy*dy <= w.Diameter*w.Diameter/4
			} else {
				in = 2*dx <= w.XDim && -2*dx <= w.XDim && 2*dy <= w.YDim && -2*dy <= w.YDim
			}
			if in {
				r.wells[k] = j
				break
			}
		}
		if r.wells[k] < 0 {
			r.off++
		}
		all = all && r.wells[k] == i
	}
	r.shared = all
	if lw.tips != nil {
		for k := range r.n {
			if r.wells[k] < 0 && p.lenient && k > 0 {
				// Opentrons' tip tracking (use_tips) takes the tips under the channels that
				// are over the rack: min(rows left, channels).
				r.n, r.off, r.shared = k, 0, false
				break
			}
			if r.wells[k] < 0 {
				return r, fail(ErrChannels, "%s has %d channels: channel %d finds no tip at %s", p.model.name, r.n, k+1, lw.wellName(i))
			}
		}
	}
	return r, nil
}

func fresh(lw *labware, r reach, returned bool) bool {
	for _, i := range r.wells[:r.n] {
		if i < 0 {
			return false
		}
		if t := lw.tips[i]; t == nil || t.used && !returned {
			return false
		}
	}
	return true
}

// startingTip is where the pipette's next tip is looked for from (starting_tip), nil: its first
// rack's first well.
func (d *Deck) startingTip(p *pipette) *spot {
	if d.prun == nil {
		return nil
	}
	if s, ok := d.prun.start[p]; ok {
		return &s
	}
	return nil
}

func (d *Deck) pickUpTip(ev *Event, a *Args) error {
	p, err := d.pipette(a.Mount)
	if err != nil {
		return err
	}
	if t := p.tips[0]; t != nil {
		return fail(ErrTipAttached, "%s already has a tip (%s)", p.describe(), t.origin())
	}
	var r reach
	if a.Well == "" {
		r, err = p.nextTips(d.startingTip(p))
	} else {
		r, err = p.reach(d, a.Well)
	}
	if err != nil {
		return err
	}
	if r.lw.tips == nil {
		return fail(ErrNoTipLeft, "%s is not a tip rack", r.lw.describe())
	}
	for _, i := range r.wells[:r.n] {
		if i >= 0 && r.lw.tips[i] == nil && p.lenient {
			warn(ev, fmt.Sprintf("%s holds no tip (the twin has it used): taken as put back by hand", r.lw.wellName(i)))
			d.keepRack(r.lw, i)
			r.lw.tips[i] = &tip{rack: r.lw, well: i, volume: r.lw.def.lw.Wells[r.lw.def.names[i]].TotalLiquidVolume, used: true}
		}
		if i < 0 || r.lw.tips[i] == nil {
			return fail(ErrNoTipLeft, "%s holds no tip", r.lw.wellName(max(i, r.at)))
		}
	}
	d.keepTips(p)
	if r.n < len(p.tips) {
		p.tips = make([]*tip, r.n)
		warn(ev, fmt.Sprintf("%s picks up %d tips with its %d channels", p.describe(), r.n, p.model.channels))
	}
	for k, i := range r.wells[:r.n] {
		d.keepRack(r.lw, i)
		t := r.lw.tips[i]
		d.keepTip(t)
		t.used = true
		p.tips[k], r.lw.tips[i] = t, nil
	}
	ev.Steps = append(ev.Steps, Step{Action: "pick_up_tip", Mount: p.mount, Well: r.lw.wellName(r.at), Channels: r.n})
	return nil
}

// dropTip discards the tips, and what they hold, into the trash.
func (d *Deck) dropTip(ev *Event, a *Args) error {
	p, err := d.pipette(a.Mount)
	if err != nil {
		return err
	}
	if p.tips[0] == nil {
		return p.noTip()
	}
	d.keepTips(p)
	d.keepTrash()
	var v float64
	for k, t := range p.tips {
		d.keepTip(t)
		v += move(&t.c, &d.trash, t.c.Volume)
		t.air = 0
		p.tips[k] = nil
		d.tipsOut++
	}
	ev.Steps = append(ev.Steps, Step{Action: "drop_tip", Mount: p.mount, Well: trashName, Channels: len(p.tips), Volume: v})
	p.tips = make([]*tip, p.active())
	return nil
}

// returnTip puts the tips back where they came from, or into the empty places of a tip rack a
// names (drop_tip(location)), with what they hold; they count as used.
func (d *Deck) returnTip(ev *Event, a *Args) error {
	p, err := d.pipette(a.Mount)
	if err != nil {
		return err
	}
	if p.tips[0] == nil {
		return p.noTip()
	}
	at := p.tips[0].origin()
	if a.Well != "" {
		r, err := p.reach(d, a.Well)
		if err != nil {
			return err
		}
		if r.lw.tips == nil {
			return fail(ErrBadArgs, "%s is not a tip rack: drop tips into the trash or a tip rack", r.lw.describe())
		}
		for _, i := range r.wells[:r.n] {
			if (i < 0 || r.lw.tips[i] != nil) && p.lenient {
				warn(ev, fmt.Sprintf("%s holds a tip already: the tips go to the trash", r.lw.wellName(max(i, r.at))))
				return d.dropTip(ev, &Args{Mount: a.Mount})
			}
			if i < 0 || r.lw.tips[i] != nil {
				return fail(ErrBadArgs, "%s holds a tip already", r.lw.wellName(max(i, r.at)))
			}
		}
		d.keepTips(p)
		if extra := len(p.tips) - r.n; extra > 0 {
			d.keepTrash()
			warn(ev, fmt.Sprintf("%d of the %d tips fall beyond %s: counted as in the trash", extra, len(p.tips), r.lw.describe()))
			for k := r.n; k < len(p.tips); k++ {
				d.keepTip(p.tips[k])
				move(&p.tips[k].c, &d.trash, p.tips[k].c.Volume)
				d.tipsOut++
			}
			p.tips = p.tips[:r.n]
		}
		for k, t := range p.tips {
			i := r.wells[k]
			d.keepRack(r.lw, i)
			d.keepTip(t)
			t.rack, t.well = r.lw, i
			r.lw.tips[i], p.tips[k] = t, nil
		}
		ev.Steps = append(ev.Steps, Step{Action: "return_tip", Mount: p.mount, Well: r.lw.wellName(r.at), Channels: len(p.tips)})
		p.tips = make([]*tip, p.active())
		return nil
	}
	d.keepTips(p)
	for k, t := range p.tips {
		d.keepRack(t.rack, t.well)
		t.rack.tips[t.well], p.tips[k] = t, nil
	}
	ev.Steps = append(ev.Steps, Step{Action: "return_tip", Mount: p.mount, Well: at, Channels: len(p.tips)})
	p.tips = make([]*tip, p.active())
	return nil
}
