package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The deck's errors; every error Do returns is a *CommandError that unwraps to one of them.
var (
	ErrUnknownCommand = errors.New("bench: unknown command")
	ErrBadArgs        = errors.New("bench: invalid arguments")
	ErrUnknownLabware = errors.New("bench: unknown labware")
	ErrSlot           = errors.New("bench: slot unavailable")
	ErrUnknownWell    = errors.New("bench: unknown well")
	ErrInstrument     = errors.New("bench: instrument unavailable")
	ErrChannels       = errors.New("bench: wells out of the channels' reach")
	ErrPipetteRange   = errors.New("bench: volume outside the pipette's range")
	ErrWellShort      = errors.New("bench: not enough liquid in the well")
	ErrTipFull        = errors.New("bench: more than the tip holds")
	ErrTipShort       = errors.New("bench: not enough liquid in the tip")
	ErrOverflow       = errors.New("bench: over the well's capacity")
	ErrNoTip          = errors.New("bench: no tip attached")
	ErrTipAttached    = errors.New("bench: tip already attached")
	ErrNoTipLeft      = errors.New("bench: no tip there")
)

// volTol is the volume (µL) below which two volumes are the same: aspirating a well's volume
// within volTol takes all of it, so rounding never leaves a film or refuses the last drop.
const volTol = 1e-9

// Command is one instruction to the liquid handler, as a protocol, a kernel client or a
// simulation writes it: {"name": "aspirate", "args": {"mount": "left", "volume": 50,
// "well": "res/A1"}, "line": 12}. The commands and their arguments (Opentrons Protocol API v2
// semantics; a well is "labware/well", labware being a label or a slot number):
//
//	load_labware     load_name, slot ("1"–"11"), label (optional)
//	load_instrument  instrument (p20_single_gen2, p300_single_gen2, p1000_single_gen2,
//	                 p20_multi_gen2, p300_multi_gen2), mount (left, right), tip_racks
//	load_liquid      well, volume, concentrations (mol/L of each species; none for a solvent)
//	pick_up_tip      mount, well (optional: the next unused tip of the pipette's tip racks)
//	drop_tip         mount (into the trash)
//	return_tip       mount (back to the rack, used)
//	aspirate         mount, volume (0: what the tip can still take), well
//	dispense         mount, volume (0: all the tip holds), well
//	blow_out         mount, well (none: the trash) — all the tip holds
//	mix              mount, repetitions (0: 1), volume (0: what the tip can still take), well
//	transfer         mount, volume or volumes, source, dest (lists; the shorter repeated),
//	                 new_tip (once, always, never)
//	distribute       mount, volume or volumes, source (one well), dest, new_tip
//	consolidate      mount, volume or volumes, source, dest (one well), new_tip
//
// The modules' commands (a module's slot names it; modules.go):
//
//	load_module      module (heaterShakerModuleV1, absorbanceReaderV1), slot; labware loaded
//	                 into that slot then sits on the module
//	hs_set_temperature, hs_deactivate_heater, hs_set_shake_speed (rpm), hs_deactivate_shaker,
//	hs_open_latch, hs_close_latch
//	                 slot, and celsius or rpm: a heater-shaker, reached at once
//	delay            minutes: time passes; every heater-shaker holds its labware that long,
//	                 running the mapped reactions (the event's holds)
//	reader_initialize slot, mode (single, multi), wavelengths (nm)
//	read_plate       slot, well (the labware to read, where it sits): absorbance per well
//	analyze          well: a chromatogram of a sample (labmate's analysis twin, not Opentrons)
//	deck             what is loaded: labware and modules (for a client that joins a set deck)
//
// An 8-channel pipette addresses a column by its row A well and moves all 8 rows; in a
// single-row labware (a reservoir) all 8 channels draw from, and dispense into, the one well.
// Volumes are per channel, in µL.
type Command struct {
	Name string `json:"name"`
	Args Args   `json:"args"`
	Line int    `json:"line,omitempty"` // the protocol line the command came from, when known
}

// Args are a command's arguments; each command reads the ones it takes.
type Args struct {
	LoadName       string             `json:"load_name,omitempty"`
	Slot           string             `json:"slot,omitempty"`
	Label          string             `json:"label,omitempty"`
	Instrument     string             `json:"instrument,omitempty"`
	Mount          string             `json:"mount,omitempty"`
	TipRacks       []string           `json:"tip_racks,omitempty"`
	Well           string             `json:"well,omitempty"`
	Volume         float64            `json:"volume,omitempty"`
	Volumes        []float64          `json:"volumes,omitempty"`
	Concentrations map[string]float64 `json:"concentrations,omitempty"`
	Repetitions    int                `json:"repetitions,omitempty"`
	Source         []string           `json:"source,omitempty"`
	Dest           []string           `json:"dest,omitempty"`
	NewTip         string             `json:"new_tip,omitempty"`
	// The modules' commands (modules.go).
	Module      string    `json:"module,omitempty"`
	Celsius     float64   `json:"celsius,omitempty"`
	RPM         int       `json:"rpm,omitempty"`
	Minutes     float64   `json:"minutes,omitempty"`
	Mode        string    `json:"mode,omitempty"`
	Wavelengths []float64 `json:"wavelengths,omitempty"`
	// A protocol run's (protocol.go, modules_ot2.go).
	Definition json.RawMessage `json:"definition,omitempty"` // load_labware: the labware's own definition
	Version    int             `json:"version,omitempty"`    // load_labware: a standard definition's version
	APILevel   string          `json:"api_level,omitempty"`
	FlowRate   float64         `json:"flow_rate,omitempty"` // µL/s, for the clock
	Text       string          `json:"text,omitempty"`
	Seconds    float64         `json:"seconds,omitempty"`
	Height     *float64        `json:"height,omitempty"`
	Profile    []ProfileStep   `json:"profile,omitempty"`
	Wait       bool            `json:"wait,omitempty"`
	Nozzles    int             `json:"nozzles,omitempty"` // configure_nozzle_layout: the active nozzles (0: all)
	Start      string          `json:"start,omitempty"`   // configure_nozzle_layout: the primary nozzle, A1 or H1
	// transfer, distribute and consolidate's options, as Opentrons' keywords.
	MixBefore  []float64 `json:"mix_before,omitempty"` // repetitions, volume
	MixAfter   []float64 `json:"mix_after,omitempty"`
	AirGap     float64   `json:"air_gap,omitempty"`
	TouchTip   bool      `json:"touch_tip,omitempty"`
	BlowOut    string    `json:"blow_out,omitempty"` // "", trash, source well, destination well
	Disposal   *float64  `json:"disposal_volume,omitempty"`
	ReturnTips bool      `json:"return_tips,omitempty"` // trash=False
}

// Event is what a command did: its steps as the robot performs them and the warnings a
// careful chemist would give.
type Event struct {
	Name     string   `json:"name"`
	Line     int      `json:"line,omitempty"`
	Steps    []Step   `json:"steps,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Volumes is what each well the command aspirated from or dispensed into holds after it
	// (µL, by "labware/well"; all 8 wells of a column an 8-channel pipette reached), so a
	// client can watch volumes without asking for the whole deck.
	Volumes map[string]float64 `json:"volumes_ul,omitempty"`
	// What a module command did or measured: the module's state after it, a plate reading,
	// the heater-shakers' holds of a delay, a chromatogram.
	Module       *ModuleState  `json:"module,omitempty"`
	Reading      *Reading      `json:"reading,omitempty"`
	Holds        []*HoldEvent  `json:"holds,omitempty"`
	Chromatogram *Chromatogram `json:"chromatogram,omitempty"`
	// What a deck command found loaded.
	Labware []LabwareReply `json:"labware,omitempty"`
	Modules []ModuleState  `json:"modules,omitempty"`
	// A protocol run's: its parameters (params), a note's text, and when on the protocol
	// clock the command started and how long it took (s).
	Params  Params  `json:"params,omitempty"`
	Text    string  `json:"text,omitempty"`
	Start   float64 `json:"start_s,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
}

// Step is one movement of a pipette: pick_up_tip, aspirate, dispense, blow_out, drop_tip,
// return_tip, or load_liquid (by hand, no pipette).
type Step struct {
	Action   string  `json:"action"`
	Mount    string  `json:"mount,omitempty"`
	Well     string  `json:"well"`                // the addressed well (row A for 8 channels), a tip's place, or "trash"
	Channels int     `json:"channels,omitempty"`  // channels that moved
	Volume   float64 `json:"volume_ul,omitempty"` // liquid moved by all channels together
}

func (s Step) String() string {
	var b strings.Builder
	b.WriteString(s.Action)
	if s.Volume != 0 {
		b.WriteString(" " + µl(s.Volume) + " µL")
	}
	switch s.Action {
	case "aspirate", "pick_up_tip":
		b.WriteString(" from ")
	case "return_tip":
		b.WriteString(" to ")
	default:
		b.WriteString(" into ")
	}
	b.WriteString(s.Well)
	if s.Mount != "" {
		fmt.Fprintf(&b, " (%s", s.Mount)
		if s.Channels > 1 {
			fmt.Fprintf(&b, ", %d channels", s.Channels)
		}
		b.WriteString(")")
	}
	return b.String()
}

// CommandError is a command the deck refused. Error reads
// "bench: line 12: aspirate 50 µL from res/A1 (left): res/A1 holds 30 µL, less than the
// 50 µL to aspirate".
type CommandError struct {
	Name    string // the command's name
	Line    int    // the command's protocol line, 0 when unknown
	Command string // the command in words
	Step    string // the step of a mix, transfer, distribute or consolidate that failed
	Problem string // what is wrong, with the well and the numbers
	Err     error  // the kind of problem: one of the Err variables
}

func (e *CommandError) Error() string {
	var b strings.Builder
	b.WriteString("bench: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString(e.Command)
	if e.Step != "" {
		b.WriteString(", at " + e.Step)
	}
	b.WriteString(": " + e.Problem)
	return b.String()
}

func (e *CommandError) Unwrap() error { return e.Err }

// problem is an error before the deck knows which command it belongs to.
type problem struct {
	err  error
	msg  string
	step string
}

func (p *problem) Error() string { return p.msg }

func (p *problem) Unwrap() error { return p.err }

func fail(err error, format string, args ...any) error {
	return &problem{err: err, msg: fmt.Sprintf(format, args...)}
}

// Do carries out a command: it checks everything first and changes nothing when it refuses,
// then applies it and says what happened.
func (d *Deck) Do(cmd Command) (*Event, error) {
	ev := &Event{Name: cmd.Name, Line: cmd.Line}
	if err := d.do(ev, cmd.Name, &cmd.Args); err != nil {
		ce := &CommandError{Name: cmd.Name, Line: cmd.Line, Command: describe(cmd.Name, &cmd.Args), Problem: err.Error(), Err: err}
		if p, ok := err.(*problem); ok {
			ce.Step, ce.Err = p.step, p.err
		}
		return nil, ce
	}
	d.noteVolumes(ev)
	if d.prun != nil { // the protocol clock
		ev.Start = d.clock
		ev.Seconds += d.timeOf(ev, cmd.Name, &cmd.Args)
		d.clock += ev.Seconds
	} else {
		ev.Seconds = 0
	}
	if m := ev.Module; m != nil {
		d.timeline = append(d.timeline, ModuleEvent{At: ev.Start, Slot: m.Slot, Model: m.Model, What: describe(cmd.Name, &cmd.Args), Seconds: ev.Seconds})
	}
	return ev, nil
}

// noteVolumes fills ev.Volumes from the wells its steps touched.
func (d *Deck) noteVolumes(ev *Event) {
	for _, s := range ev.Steps {
		switch s.Action {
		case "aspirate", "dispense", "blow_out", "load_liquid":
		default:
			continue
		}
		lw, i, err := d.well(s.Well)
		if err != nil { // the trash
			continue
		}
		wells := []int{i}
		if col := lw.def.cols[lw.def.col[i]]; s.Channels > 1 && len(col) == s.Channels {
			wells = col
		}
		if ev.Volumes == nil {
			ev.Volumes = make(map[string]float64, len(wells))
		}
		for _, j := range wells {
			ev.Volumes[lw.wellName(j)] = lw.wells[j].Volume
		}
	}
}

var commands = []string{"aspirate", "blow_out", "consolidate", "dispense", "distribute", "drop_tip", "load_instrument",
	"load_labware", "load_liquid", "mix", "pick_up_tip", "return_tip", "transfer"}

func (d *Deck) do(ev *Event, name string, a *Args) error {
	switch name {
	case "load_labware":
		return d.loadLabware(a)
	case "load_instrument":
		return d.loadInstrument(a)
	case "load_liquid":
		return d.loadLiquid(ev, a)
	case "pick_up_tip":
		return d.pickUpTip(ev, a)
	case "drop_tip":
		if a.Well != "" && a.Well != trashName {
			return d.returnTip(ev, a)
		}
		return d.dropTip(ev, a)
	case "return_tip":
		return d.returnTip(ev, a)
	case "aspirate":
		return d.aspirate(ev, a)
	case "dispense":
		return d.dispense(ev, a, false)
	case "blow_out":
		return d.dispense(ev, a, true)
	case "mix", "transfer", "distribute", "consolidate":
		plan, err := d.plan(name, a)
		if err != nil {
			return err
		}
		return d.run(ev, plan)
	}
	if ok, err := d.doModule(ev, name, a); ok {
		return err
	}
	if ok, err := d.doProtocol(ev, name, a); ok {
		return err
	}
	if ok, err := d.doOT2Module(ev, name, a); ok {
		return err
	}
	known := slices.Sorted(slices.Values(slices.Concat(commands, moduleCommands, protocolCommands, ot2ModuleCommands)))
	return fail(ErrUnknownCommand, "unknown command %q (known: %s)", name, strings.Join(known, ", "))
}

// Run carries out a protocol's commands in order and stops at the first refused one or when
// ctx ends; the events are those of the commands done, so len(events) is the index of the
// command that failed.
func (d *Deck) Run(ctx context.Context, cmds []Command) ([]*Event, error) {
	evs := make([]*Event, 0, len(cmds))
	for i := range cmds {
		if err := ctx.Err(); err != nil {
			return evs, fmt.Errorf("bench: run stopped before command %d of %d: %w", i+1, len(cmds), err)
		}
		ev, err := d.Do(cmds[i])
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// volume checks a volume argument: a finite number, positive, or zero where zero means the
// command's default.
func volume(v float64, zero bool) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v == 0 && !zero {
		return fail(ErrBadArgs, "volume %v µL is not a positive number", v)
	}
	return nil
}

func (d *Deck) loadLiquid(ev *Event, a *Args) error {
	lw, i, err := d.well(a.Well)
	if err != nil {
		return err
	}
	if lw.tips != nil {
		return fail(ErrBadArgs, "%s is a tip rack", lw.describe())
	}
	// The Opentrons API loads 0 µL as well (a well declared empty); the bench alone wants liquid.
	if err := volume(a.Volume, d.lenient()); err != nil {
		return err
	}
	for s, c := range a.Concentrations {
		if s == "" || math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
			return fail(ErrBadArgs, "concentration of %q: %v mol/L is not a species and a concentration ≥ 0", s, c)
		}
	}
	w := &lw.wells[i]
	if err := d.fits(ev, lw, i, w.Volume, a.Volume); err != nil {
		return err
	}
	add := Contents{Volume: a.Volume, Species: make(map[string]float64, len(a.Concentrations))}
	for s, c := range a.Concentrations {
		add.Species[s] = c * a.Volume // mol/L × µL = µmol
	}
	addTo(w, &add)
	addTo(&d.loaded, &add)
	if d.prun != nil {
		d.prun.declared[spot{lw, i}] = true
	}
	ev.Steps = append(ev.Steps, Step{Action: "load_liquid", Well: lw.wellName(i), Volume: a.Volume})
	return nil
}

// fits checks that v µL more fit in a well holding have µL; in a protocol run, filling it over
// is a warning (the robot does it; the well overflows).
func (d *Deck) fits(ev *Event, lw *labware, i int, have, v float64) error {
	limit := lw.def.lw.Wells[lw.def.names[i]].TotalLiquidVolume
	if have+v > limit+volTol && d.lenient() && ev != nil {
		d.warnOnce(ev, "over "+lw.wellName(i), fmt.Sprintf("%s is filled to %s µL, over its capacity of %s µL", lw.wellName(i), µl(have+v), µl(limit)))
		return nil
	}
	if have+v > limit+volTol {
		return fail(ErrOverflow, "%s would hold %s µL, over its capacity of %s µL (it holds %s µL)", lw.wellName(i), µl(have+v), µl(limit), µl(have))
	}
	return nil
}

// reachLiquid is the wells a pipette reaches to aspirate or dispense: in any labware but a tip
// rack.
func (p *pipette) reachLiquid(d *Deck, ref string) (reach, error) {
	r, err := p.reach(d, ref)
	if err == nil && r.lw.tips != nil {
		err = fail(ErrBadArgs, "%s is a tip rack", r.lw.describe())
	}
	return r, err
}

// perWell is how many channels share each well the pipette reaches.
func (r *reach) perWell() float64 {
	if r.shared {
		return float64(r.n)
	}
	return 1
}

// channelsNote explains a volume several channels share: " (8 channels × 50 µL)".
func (r *reach) channelsNote(v float64) string {
	if !r.shared || r.n == 1 {
		return ""
	}
	return fmt.Sprintf(" (%d channels × %s µL)", r.n, µl(v))
}

func (d *Deck) aspirate(ev *Event, a *Args) error {
	p, err := d.pipette(a.Mount)
	if err != nil {
		return err
	}
	if p.tips[0] == nil {
		return p.noTip()
	}
	if a.Well == trashName {
		return fail(ErrBadArgs, "the fixed trash is not a source of liquid")
	}
	r, err := p.reachLiquid(d, a.Well)
	if err != nil {
		return err
	}
	if r.off > 0 {
		warn(ev, fmt.Sprintf("%d of the %d channels at %s reach no well of %s", r.off, r.n, r.lw.wellName(r.at), r.lw.describe()))
	}
	if err := volume(a.Volume, true); err != nil {
		return err
	}
	capacity := p.capacity()
	v := a.Volume
	if v == 0 {
		v = capacity - p.tips[0].c.Volume - p.tips[0].air
	}
	if err := d.inRange(ev, p, v); err != nil {
		return err
	}
	for _, t := range p.tips {
		if t.c.Volume+t.air+v > capacity+volTol {
			return fail(ErrTipFull, "the tip (%s) holds %s µL; %s µL more exceeds its capacity of %s µL", t.origin(), µl(t.c.Volume+t.air), µl(v), µl(capacity))
		}
	}
	need := v * r.perWell()
	for _, i := range r.wells[:r.n] {
		if i < 0 {
			continue
		}
		have := r.lw.wells[i].Volume
		if need <= have+volTol || d.assumeLoaded(ev, r.lw, i, need) || d.overAspirate(ev, r.lw, i, need) {
			continue
		}
		if d.lenient() {
			// The Opentrons API does not track what a well holds: the robot aspirates, and
			// the tip takes air for what the well lacks.
			d.warnOnce(ev, "short "+r.lw.wellName(i), fmt.Sprintf("%s holds %s µL, less than the %s µL aspirated%s: the tip takes air for the rest", r.lw.wellName(i), µl(have), µl(need), r.channelsNote(v)))
			continue
		}
		return fail(ErrWellShort, "%s holds %s µL, less than the %s µL to aspirate%s", r.lw.wellName(i), µl(have), µl(need), r.channelsNote(v))
	}
	var moved float64
	for k, t := range p.tips {
		if r.wells[k] < 0 {
			continue
		}
		w := &r.lw.wells[r.wells[k]]
		d.keepTip(t)
		d.keepContents(w)
		d.enter(ev, p, t, r.lw, r.wells[k], false)
		moved += move(w, &t.c, v)
		if d.prun != nil && d.prun.declared[spot{r.lw, r.wells[k]}] {
			t.known = true
		}
	}
	ev.Steps = append(ev.Steps, Step{Action: "aspirate", Mount: p.mount, Well: r.lw.wellName(r.at), Channels: r.n, Volume: moved})
	return nil
}

// inRange checks a volume against the pipette's range; in a protocol run, below the minimum
// is a warning (the robot does it, inaccurately).
func (d *Deck) inRange(ev *Event, p *pipette, v float64) error {
	if v < p.model.min-volTol && d.lenient() {
		warn(ev, fmt.Sprintf("%s µL is below the minimum volume of %s (%s µL): the volume will be inaccurate", µl(v), p.model.name, µl(p.model.min)))
		return nil
	}
	return p.inRange(v)
}

// dispense moves liquid from the tips into a well; blow-out expels all of it, into the trash
// when no well is named. Air in the tip (air_gap) goes out first.
func (d *Deck) dispense(ev *Event, a *Args, blowOut bool) error {
	p, err := d.pipette(a.Mount)
	if err != nil {
		return err
	}
	if p.tips[0] == nil {
		return p.noTip()
	}
	action := "dispense"
	if blowOut {
		action = "blow_out"
	}
	if a.Well == trashName || blowOut && a.Well == "" {
		return d.blowOutTrash(ev, p, action, a.Volume)
	}
	r, err := p.reachLiquid(d, a.Well)
	if err != nil {
		return err
	}
	if r.off > 0 {
		warn(ev, fmt.Sprintf("%d of the %d channels at %s reach no well of %s: what they hold is lost", r.off, r.n, r.lw.wellName(r.at), r.lw.describe()))
	}
	all := blowOut || a.Volume == 0
	if !blowOut {
		if err := volume(a.Volume, true); err != nil {
			return err
		}
	}
	// Below API level 2.14 the OT-2's hardware control dispenses at most what the tip holds:
	// a volume over the pipette's maximum is clamped (warned about below), not refused.
	clamped := d.lenient() && d.prun.minor < 14 && a.Volume > p.model.max
	if !all && !clamped {
		if err := d.inRange(ev, p, a.Volume); err != nil {
			return err
		}
	}
	if !all {
		for _, t := range p.tips {
			if a.Volume > t.c.Volume+t.air+volTol && d.lenient() {
				warn(ev, fmt.Sprintf("dispensing %s µL from a tip (%s) holding %s µL: it dispenses what it holds", µl(a.Volume), t.origin(), µl(t.c.Volume+t.air)))
				break
			}
			if a.Volume > t.c.Volume+t.air+volTol {
				return fail(ErrTipShort, "the tip (%s) holds %s µL, less than the %s µL to dispense", t.origin(), µl(t.c.Volume+t.air), µl(a.Volume))
			}
		}
	}
	out := func(t *tip) float64 {
		if all {
			return t.c.Volume
		}
		return min(max(a.Volume-t.air, 0), t.c.Volume)
	}
	if r.shared {
		var in float64
		for _, t := range p.tips {
			in += out(t)
		}
		if err := d.fits(ev, r.lw, r.at, r.lw.wells[r.at].Volume, in); err != nil {
			return err
		}
	} else {
		for k, t := range p.tips {
			if i := r.wells[k]; i >= 0 {
				if err := d.fits(ev, r.lw, i, r.lw.wells[i].Volume, out(t)); err != nil {
					return err
				}
			}
		}
	}
	var moved float64
	for k, t := range p.tips {
		d.keepTip(t)
		v := out(t)
		if all {
			t.air = 0
		} else {
			t.air = max(t.air-a.Volume, 0)
		}
		if r.wells[k] < 0 {
			d.keepTrash()
			move(&t.c, &d.trash, v) // between wells: lost
			continue
		}
		w := &r.lw.wells[r.wells[k]]
		d.keepContents(w)
		d.enter(ev, p, t, r.lw, r.wells[k], true)
		moved += move(&t.c, w, v)
		if t.known && v > 0 {
			d.prun.declared[spot{r.lw, r.wells[k]}] = true // declared liquid keeps the well exact
		}
	}
	ev.Steps = append(ev.Steps, Step{Action: action, Mount: p.mount, Well: r.lw.wellName(r.at), Channels: r.n, Volume: moved})
	return nil
}

// blowOutTrash expels the tips into the fixed trash: all they hold, or v µL each.
func (d *Deck) blowOutTrash(ev *Event, p *pipette, action string, v float64) error {
	d.keepTrash()
	var moved float64
	for _, t := range p.tips {
		d.keepTip(t)
		out := t.c.Volume
		if v > 0 && action == "dispense" {
			out = min(max(v-t.air, 0), t.c.Volume)
			t.air = max(t.air-v, 0)
		} else {
			t.air = 0
		}
		moved += move(&t.c, &d.trash, out)
	}
	ev.Steps = append(ev.Steps, Step{Action: action, Mount: p.mount, Well: trashName, Channels: len(p.tips), Volume: moved})
	return nil
}

// enter is a tip going into a well's liquid: it warns when the tip has touched species the
// well does not hold (and, dispensing, that it does not carry on purpose), then remembers the
// well and its species.
func (d *Deck) enter(ev *Event, p *pipette, t *tip, lw *labware, i int, dispensing bool) {
	w := &lw.wells[i]
	var foreign []string
	for s := range t.species {
		if w.Species[s] == 0 && (!dispensing || t.c.Species[s] == 0) {
			foreign = append(foreign, s)
		}
	}
	if foreign != nil {
		slices.Sort(foreign)
		parts := make([]string, len(foreign))
		for j, s := range foreign {
			parts[j] = s + " (in " + t.species[s].String() + ")"
		}
		none := "none"
		if len(foreign) > 1 {
			none = "none of them"
		}
		warn(ev, fmt.Sprintf("contamination: the %s tip from %s has touched %s and enters %s, which holds %s",
			p.mount, t.origin(), strings.Join(parts, " and "), lw.wellName(i), none))
	}
	here := spot{lw, i}
	if !slices.Contains(t.touched, here) {
		t.touched = append(t.touched, here)
	}
	for s, n := range w.Species {
		if _, ok := t.species[s]; !ok && n > 0 {
			if t.species == nil {
				t.species = make(map[string]spot)
			}
			t.species[s] = here
		}
	}
}

func warn(ev *Event, w string) {
	if !slices.Contains(ev.Warnings, w) {
		ev.Warnings = append(ev.Warnings, w)
	}
}

// move takes v µL from one liquid into another with the same part of every species; within
// volTol of all of it, it takes all, exactly. It returns the volume moved.
func move(from, to *Contents, v float64) float64 {
	if from.Volume <= 0 || v <= 0 {
		return 0
	}
	all := v >= from.Volume-volTol
	if all {
		v = from.Volume
	}
	f := v / from.Volume
	if len(from.Species) > 0 && to.Species == nil {
		to.Species = make(map[string]float64, len(from.Species))
	}
	for s, n := range from.Species {
		if all {
			to.Species[s] += n
			delete(from.Species, s)
			continue
		}
		m := n * f
		to.Species[s] += m
		from.Species[s] = n - m
	}
	to.Volume += v
	if all {
		from.Volume = 0
	} else {
		from.Volume -= v
	}
	return v
}

// addTo adds c to sum.
func addTo(sum, c *Contents) {
	sum.Volume += c.Volume
	if len(c.Species) > 0 && sum.Species == nil {
		sum.Species = make(map[string]float64, len(c.Species))
	}
	for s, n := range c.Species {
		sum.Species[s] += n
	}
}

// µl writes a volume for a person: at most 6 decimals, no exponent.
func µl(v float64) string { return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64) }

// describe says a command in words, for errors.
func describe(name string, a *Args) string {
	var b strings.Builder
	b.WriteString(name)
	switch name {
	case "load_labware":
		fmt.Fprintf(&b, " %s in slot %s", a.LoadName, a.Slot)
		if a.Label != "" {
			b.WriteString(" as " + a.Label)
		}
		return b.String()
	case "load_instrument":
		fmt.Fprintf(&b, " %s on %s", a.Instrument, a.Mount)
		return b.String()
	case "load_liquid":
		fmt.Fprintf(&b, " %s µL into %s", µl(a.Volume), a.Well)
		return b.String()
	case "pick_up_tip":
		if a.Well != "" {
			b.WriteString(" " + a.Well)
		}
	case "aspirate":
		volumeWords(&b, a)
		b.WriteString(" from " + a.Well)
	case "dispense", "blow_out":
		volumeWords(&b, a)
		if a.Well == "" {
			b.WriteString(" into " + trashName)
		} else {
			b.WriteString(" into " + a.Well)
		}
	case "mix":
		reps := a.Repetitions
		if reps == 0 {
			reps = 1
		}
		fmt.Fprintf(&b, " %d ×", reps)
		volumeWords(&b, a)
		b.WriteString(" in " + a.Well)
	case "transfer", "distribute", "consolidate":
		volumeWords(&b, a)
		b.WriteString(" from " + wellsWords(a.Source) + " to " + wellsWords(a.Dest))
		if a.NewTip != "" {
			b.WriteString(", new tip " + a.NewTip)
		}
	case "air_gap":
		volumeWords(&b, a)
	case "note":
		return name + ": " + a.Text
	case "protocol":
		return "protocol (API " + a.APILevel + ")"
	case "starting_tip":
		b.WriteString(" " + a.Well)
	default:
		if slices.Contains(moduleCommands, name) || slices.Contains(ot2ModuleCommands, name) {
			describeModule(&b, name, a)
			return b.String()
		}
	}
	if a.Mount != "" {
		b.WriteString(" (" + a.Mount + ")")
	}
	return b.String()
}

func volumeWords(b *strings.Builder, a *Args) {
	switch {
	case a.Volume != 0:
		b.WriteString(" " + µl(a.Volume) + " µL")
	case len(a.Volumes) > 3:
		fmt.Fprintf(b, " %d volumes (%s…%s µL)", len(a.Volumes), µl(slices.Min(a.Volumes)), µl(slices.Max(a.Volumes)))
	case len(a.Volumes) > 0:
		s := make([]string, len(a.Volumes))
		for i, v := range a.Volumes {
			s[i] = µl(v)
		}
		b.WriteString(" " + strings.Join(s, ", ") + " µL")
	}
}

func wellsWords(wells []string) string {
	switch len(wells) {
	case 0:
		return "no wells"
	case 1:
		return wells[0]
	}
	return fmt.Sprintf("%d wells (%s…%s)", len(wells), wells[0], wells[len(wells)-1])
}
