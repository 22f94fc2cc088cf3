package bench

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A protocol run: what an Opentrons protocol (lab/bench/client/python/opentrons) adds to the deck.
//
//	protocol         api_level ("2.13"): the deck runs a protocol from here on. Liquid in a
//	                 well no load_liquid declared (nor a pipette filled from one) is a user-loaded
//	                 unknown: an aspirate short of it assumes the missing volume was put there by
//	                 hand (a warning, tracked per well); a volume below the pipette's minimum and a well filled over its
//	                 capacity are warnings (the robot does them; the volumes are wrong), not
//	                 refusals. Declared liquid stays exact.
//	params           the protocol's parameters (get_values): the event's params
//	note             text, seconds: a command with no liquid (comment, pause, home, move_to,
//	                 touch_tip, set_rail_lights, …), logged and timed
//	air_gap          mount, volume: air into the tip; a dispense expels it first
//	reset_tipracks   mount: every well of the pipette's tip racks holds a fresh tip again;
//	                 label: every well of that rack (Labware.reset)
//	configure_nozzle_layout mount, nozzles, start: the active channels (0: all) and the primary nozzle (A1, H1)
//	starting_tip     mount, well: where the pipette's next tip is looked for from
//	set_tip_racks    mount, tip_racks: the pipette's tip racks from now on
//	unload_labware   slot: the labware taken off the deck (del protocol.deck[slot])
//
// Every command takes time on the protocol clock (Event.Start, Event.Seconds): moves, tips,
// liquid at the flow rate (args flow_rate, µL/s, else the model's default), delays and the
// modules' ramps and holds.

// Params are a protocol's parameter values by name (get_values), as JSON values.
type Params map[string]json.RawMessage

// protocolRun is the state of a protocol run on the deck.
type protocolRun struct {
	level      string
	minor      int
	declared   map[spot]bool      // wells load_liquid put liquid in
	userLoaded map[string]float64 // µL assumed loaded by hand, by well
	warned     map[string]bool    // warnings given once per well
	start      map[*pipette]spot  // starting_tip
}

func (r *protocolRun) clone(m map[*labware]*labware, pm map[*pipette]*pipette) *protocolRun {
	if r == nil {
		return nil
	}
	c := *r
	c.userLoaded = maps.Clone(r.userLoaded)
	c.warned = maps.Clone(r.warned)
	c.declared = make(map[spot]bool, len(r.declared))
	for s := range r.declared {
		c.declared[spot{m[s.lw], s.w}] = true
	}
	c.start = make(map[*pipette]spot, len(r.start))
	for p, s := range r.start {
		c.start[pm[p]] = spot{m[s.lw], s.w}
	}
	return &c
}

// SetParams gives the protocol's parameters (get_values) to the deck; the params command
// returns them.
func (d *Deck) SetParams(p Params) { d.params = maps.Clone(p) }

// UserLoaded is the liquid a protocol run assumed loaded by hand, µL by well.
func (d *Deck) UserLoaded() map[string]float64 {
	if d.prun == nil {
		return nil
	}
	return maps.Clone(d.prun.userLoaded)
}

// Clock is the protocol's time so far, in seconds.
func (d *Deck) Clock() float64 { return d.clock }

// Timeline is what the modules did, in order.
func (d *Deck) Timeline() []ModuleEvent { return slices.Clone(d.timeline) }

// ModuleEvent is a module's change of state at a time of the protocol clock.
type ModuleEvent struct {
	At      float64 `json:"at_s"`
	Slot    int     `json:"slot"`
	Model   string  `json:"model"`
	What    string  `json:"what"`
	Seconds float64 `json:"seconds,omitempty"` // how long it took (a ramp, a hold, a profile)
}

var protocolCommands = []string{"air_gap", "configure_nozzle_layout", "note", "params", "protocol", "reset_tipracks", "set_tip_racks", "starting_tip", "unload_labware"}

// doProtocol carries out a protocol command; ok is false for a name that is none.
func (d *Deck) doProtocol(ev *Event, name string, a *Args) (ok bool, err error) {
	switch name {
	case "protocol":
		major, minor, found := strings.Cut(a.APILevel, ".")
		n, err := strconv.Atoi(minor)
		if !found || major != "2" || err != nil {
			return true, fail(ErrBadArgs, "api_level %q is not 2.x", a.APILevel)
		}
		if d.prun == nil {
			d.prun = &protocolRun{declared: map[spot]bool{}, userLoaded: map[string]float64{}, warned: map[string]bool{}, start: map[*pipette]spot{}}
		}
		d.prun.level, d.prun.minor = a.APILevel, n
		for _, p := range d.pipettes {
			if p != nil {
				p.lenient, p.reuse = true, n < 2
			}
		}
		return true, nil
	case "params":
		ev.Params = maps.Clone(d.params)
		if ev.Params == nil {
			ev.Params = Params{}
		}
		return true, nil
	case "note":
		if math.IsNaN(a.Seconds) || a.Seconds < 0 {
			return true, fail(ErrBadArgs, "note of %v s", a.Seconds)
		}
		ev.Text = a.Text
		return true, nil
	case "air_gap":
		return true, d.airGap(ev, a)
	case "reset_tipracks":
		if a.Label != "" { // one rack: Labware.reset()
			lw, err := d.labware(a.Label)
			if err != nil {
				return true, err
			}
			if lw.tips == nil {
				return true, fail(ErrBadArgs, "%s is not a tip rack", lw.describe())
			}
			for i := range lw.tips {
				d.keepRack(lw, i)
				lw.tips[i] = &tip{rack: lw, well: i, volume: lw.def.lw.Wells[lw.def.names[i]].TotalLiquidVolume}
			}
			return true, nil
		}
		p, err := d.pipette(a.Mount)
		if err != nil {
			return true, err
		}
		for _, lw := range p.racks {
			for i := range lw.tips {
				d.keepRack(lw, i)
				lw.tips[i] = &tip{rack: lw, well: i, volume: lw.def.lw.Wells[lw.def.names[i]].TotalLiquidVolume}
			}
		}
		if d.prun != nil {
			delete(d.prun.start, p)
		}
		return true, nil
	case "unload_labware":
		n, err := strconv.Atoi(a.Slot)
		if err != nil || n < 1 || n > deckSlots || d.slots[n-1] == nil {
			return true, fail(ErrSlot, "no labware in slot %q to take off the deck", a.Slot)
		}
		lw := d.slots[n-1]
		for name, l := range d.byName {
			if l == lw {
				delete(d.byName, name)
			}
		}
		d.slots[n-1] = nil
		return true, nil
	case "set_tip_racks":
		p, err := d.pipette(a.Mount)
		if err != nil {
			return true, err
		}
		var racks []*labware
		for _, name := range a.TipRacks {
			lw, err := d.labware(name)
			if err != nil {
				return true, err
			}
			if lw.tips == nil {
				return true, fail(ErrBadArgs, "tip rack %s is not a tip rack", lw.describe())
			}
			racks = append(racks, lw)
		}
		p.racks = racks
		return true, nil
	case "configure_nozzle_layout":
		p, err := d.pipette(a.Mount)
		if err != nil {
			return true, err
		}
		switch {
		case a.Nozzles < 0 || a.Nozzles > p.model.channels:
			return true, fail(ErrBadArgs, "%d nozzles: %s has %d", a.Nozzles, p.model.name, p.model.channels)
		case a.Start != "" && a.Start != "A1" && a.Start != "H1":
			return true, fail(ErrBadArgs, "primary nozzle %q is not A1 or H1", a.Start)
		}
		p.nozzles, p.back = a.Nozzles, a.Start == "H1"
		if p.nozzles == p.model.channels {
			p.nozzles = 0
		}
		if p.tips[0] != nil {
			warn(ev, fmt.Sprintf("%s configures its nozzles with tips on: they stay on until dropped", p.describe()))
			return true, nil
		}
		p.tips = make([]*tip, p.active())
		return true, nil
	case "starting_tip":
		p, err := d.pipette(a.Mount)
		if err != nil {
			return true, err
		}
		lw, i, err := d.well(a.Well)
		if err != nil {
			return true, err
		}
		if lw.tips == nil {
			return true, fail(ErrBadArgs, "%s is not a tip rack", lw.describe())
		}
		if d.prun == nil {
			d.prun = &protocolRun{declared: map[spot]bool{}, userLoaded: map[string]float64{}, warned: map[string]bool{}, start: map[*pipette]spot{}}
		}
		d.prun.start[p] = spot{lw, i}
		return true, nil
	}
	return false, nil
}

// lenient is whether the deck runs a protocol (user-loaded unknowns, warnings for the robot's
// inaccuracies).
func (d *Deck) lenient() bool { return d.prun != nil }

// warnOnce warns about a well once per kind.
func (d *Deck) warnOnce(ev *Event, key, msg string) {
	if d.prun == nil || d.prun.warned[key] {
		return
	}
	d.prun.warned[key] = true
	warn(ev, msg)
}

// assumeLoaded tops a well no load_liquid declared up to need µL: liquid a person put there.
// It reports false when the well was declared (exact tracking) or cannot hold need.
func (d *Deck) assumeLoaded(ev *Event, lw *labware, i int, need float64) bool {
	if d.prun == nil || d.prun.declared[spot{lw, i}] {
		return false
	}
	w := &lw.wells[i]
	short := need - w.Volume
	if short <= volTol {
		return true
	}
	if limit := lw.def.lw.Wells[lw.def.names[i]].TotalLiquidVolume; need > limit+volTol {
		return false
	}
	d.keepContents(w)
	w.Volume += short
	name := lw.wellName(i)
	d.prun.userLoaded[name] += short
	d.warnOnce(ev, "unknown "+lw.name, fmt.Sprintf("%s (%s first): liquid the protocol never declared (load_liquid) is taken as loaded by hand (user-loaded unknown; the amounts per well are in the report)", lw.name, name))
	return true
}

// overAspirate is a protocol run aspirating more than an undeclared well can hold: the well is
// taken as full, the tip takes what there is and air (the volumes are wrong, the robot goes on).
func (d *Deck) overAspirate(ev *Event, lw *labware, i int, need float64) bool {
	if d.prun == nil || d.prun.declared[spot{lw, i}] {
		return false
	}
	limit := lw.def.lw.Wells[lw.def.names[i]].TotalLiquidVolume
	d.assumeLoaded(ev, lw, i, limit)
	warn(ev, fmt.Sprintf("%s holds at most %s µL, less than the %s µL aspirated: the tip takes air for the rest", lw.wellName(i), µl(limit), µl(need)))
	return true
}

func (d *Deck) airGap(ev *Event, a *Args) error {
	p, err := d.pipette(a.Mount)
	if err != nil {
		return err
	}
	if p.tips[0] == nil {
		return p.noTip()
	}
	if err := volume(a.Volume, false); err != nil {
		return err
	}
	capacity := p.capacity()
	for _, t := range p.tips {
		if t.c.Volume+t.air+a.Volume > capacity+volTol {
			return fail(ErrTipFull, "the tip (%s) holds %s µL; an air gap of %s µL more exceeds its capacity of %s µL", t.origin(), µl(t.c.Volume+t.air), µl(a.Volume), µl(capacity))
		}
	}
	for _, t := range p.tips {
		d.keepTip(t)
		t.air += a.Volume
	}
	ev.Steps = append(ev.Steps, Step{Action: "air_gap", Mount: p.mount, Well: "air", Channels: len(p.tips), Volume: a.Volume * float64(len(p.tips))})
	return nil
}

// The protocol clock's estimates of the robot's motions, in seconds.
const (
	moveSeconds   = 2.0 // from one labware to another
	tipSeconds    = 3.0 // pressing a tip on or ejecting it
	blowOutFlow   = 1000.0
	minLiquidTime = 0.2
)

// timeOf is how long an event took on the robot.
func (d *Deck) timeOf(ev *Event, name string, a *Args) float64 {
	switch name {
	case "note":
		return a.Seconds
	case "delay":
		return a.Minutes * 60
	}
	var s float64
	for _, st := range ev.Steps {
		switch st.Action {
		case "pick_up_tip", "drop_tip", "return_tip":
			s += moveSeconds + tipSeconds
		case "aspirate", "dispense", "blow_out", "air_gap":
			flow := a.FlowRate
			if flow <= 0 || len(ev.Steps) > 1 {
				flow = d.defaultFlow(st.Mount, st.Action)
			}
			per := st.Volume
			if st.Channels > 0 {
				per /= float64(st.Channels)
			}
			s += moveSeconds/2 + max(per/flow, minLiquidTime)
		}
	}
	return s
}

func (d *Deck) defaultFlow(mount, action string) float64 {
	p, err := d.pipette(mount)
	if err != nil {
		return blowOutFlow
	}
	minor := 0
	if d.prun != nil {
		minor = d.prun.minor
	}
	f := p.model.flowRates(minor)
	switch action {
	case "dispense":
		return f[1]
	case "blow_out":
		return f[2]
	}
	return f[0]
}

// AddDefinition makes a labware definition's load name available on this deck, in place of a
// definition of the same load name (a protocol's own labware goes before the standard one).
func (d *Deck) AddDefinition(lw *Labware) { d.defs[lw.Parameters.LoadName] = newDefinition(lw) }

// TipsUsed is how many tips of each tip rack were used (picked up at least once or gone), by
// the rack's name.
func (d *Deck) TipsUsed() map[string]int {
	out := map[string]int{}
	for _, lw := range d.slots {
		if lw == nil || lw.tips == nil {
			continue
		}
		n := 0
		for _, t := range lw.tips {
			if t == nil || t.used {
				n++
			}
		}
		out[lw.name] = n
	}
	return out
}

// RanProtocol is whether a protocol run (the protocol command) happened on the deck.
func (d *Deck) RanProtocol() bool { return d.prun != nil }
