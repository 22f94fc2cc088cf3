package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrModule is wrapped by the errors of the module commands: no such module, or the module
// refused.
var ErrModule = errors.New("bench: module")

// The modules load_module loads, by their Opentrons model names.
const (
	HeaterShakerModule = "heaterShakerModuleV1"
	AbsorbanceReader   = "absorbanceReaderV1"
)

// Equipment is what a deck's modules are made of: the plate reader's spectra, the reactions
// the heater-shakers run and the analysis method. A deck that was not equipped has the
// default spectra, no reactions and no analysis method.
type Equipment struct {
	Spectra      *Library // nil: DefaultSpectra
	Reader       *ReaderOptions
	Reactions    []*Reaction
	HeaterShaker *HeaterShakerOptions
	// Calibration is the analysis method's response factors (peak area per mM, by species);
	// empty: analyze is refused.
	Calibration map[string]float64
	Analyzer    *AnalyzerOptions
}

// equipment is the instruments made from an Equipment.
type equipment struct {
	e        Equipment
	reader   *Reader
	analyzer *Analyzer // nil: no analysis method
}

func newEquipment(e *Equipment) (*equipment, error) {
	q := &equipment{e: *e}
	lib := e.Spectra
	if lib == nil {
		var err error
		if lib, err = NewLibrary(DefaultSpectra()...); err != nil {
			return nil, err
		}
	}
	var err error
	if q.reader, err = NewReader(lib, e.Reader); err != nil {
		return nil, err
	}
	if len(e.Calibration) > 0 {
		if q.analyzer, err = NewAnalyzer(e.Calibration, e.Analyzer); err != nil {
			return nil, err
		}
	}
	// Make sure the heater-shaker options are valid now rather than at the first load_module.
	if _, err := NewHeaterShaker(e.Reactions, e.HeaterShaker); err != nil {
		return nil, err
	}
	return q, nil
}

// Equip gives the deck its modules' instruments; call it before any command (a journal
// replays the same only on a deck equipped alike).
func (d *Deck) Equip(e *Equipment) error {
	q, err := newEquipment(e)
	if err != nil {
		return err
	}
	d.equip = q
	return nil
}

// Equipment returns what Equip gave the deck, nil for a deck that was not equipped.
func (d *Deck) Equipment() *Equipment {
	if d.equip == nil {
		return nil
	}
	e := d.equip.e
	return &e
}

func (d *Deck) equipment() *equipment {
	if d.equip == nil {
		q, err := newEquipment(&Equipment{})
		if err != nil {
			panic(err) // the default spectra are checked by the tests
		}
		d.equip = q
	}
	return d.equip
}

// module is a module loaded in a slot; the labware in that slot sits on it.
type module struct {
	model string
	slot  int
	hs    *HeaterShaker // heater-shakers
	held  time.Duration // heater-shakers: the time held at the current temperature
	waves []float64     // plate readers: the wavelengths initialize set
	ot2   *ot2State     // temperature, magnetic and thermocycler modules
}

// ModuleState is a loaded module, in events and snapshots.
type ModuleState struct {
	Model string `json:"model"`
	Slot  int    `json:"slot"`
	// Heater-shakers: the plate's temperature (°C), the shake speed (0: still), whether the
	// labware latch is closed, and how long the plate has been held at its temperature.
	Temperature float64 `json:"temperature_c,omitempty"`
	Shake       int     `json:"shake_rpm,omitempty"`
	Latched     bool    `json:"latched,omitempty"`
	HeldMinutes float64 `json:"held_min,omitempty"`
	// Plate readers: the wavelengths they read (nm), once initialized.
	Wavelengths []float64 `json:"wavelengths_nm,omitempty"`
	// Temperature modules and thermocyclers: the target reached (nil: off); thermocyclers:
	// the lid's temperature and position; magnetic modules: the magnet's height when engaged.
	Target    *float64 `json:"target_c,omitempty"`
	LidTarget *float64 `json:"lid_target_c,omitempty"`
	LidOpen   bool     `json:"lid_open,omitempty"`
	MagnetMM  *float64 `json:"magnet_mm,omitempty"`
}

func (m *module) state() ModuleState {
	s := ModuleState{Model: m.model, Slot: m.slot, Wavelengths: slices.Clone(m.waves)}
	if m.hs != nil {
		m.hs.mu.Lock()
		s.Temperature, s.Shake, s.Latched = m.hs.temperature(), m.hs.rpm, m.hs.latchOK
		m.hs.mu.Unlock()
		s.HeldMinutes = m.held.Minutes()
	}
	if o := m.ot2; o != nil {
		s.Target, s.LidTarget, s.LidOpen, s.MagnetMM = o.Temp, o.LidTemp, o.LidOpen, o.Magnet
	}
	return s
}

var moduleCommands = []string{"analyze", "delay", "deck", "hs_close_latch", "hs_deactivate_heater", "hs_deactivate_shaker",
	"hs_open_latch", "hs_set_shake_speed", "hs_set_temperature", "load_module", "read_plate", "reader_initialize"}

// doModule carries out a module command; ok is false for a name that is none.
func (d *Deck) doModule(ev *Event, name string, a *Args) (ok bool, err error) {
	switch name {
	case "load_module":
		return true, d.loadModule(ev, a)
	case "delay":
		return true, d.delay(ev, a)
	case "deck":
		d.describeDeck(ev)
		return true, nil
	case "analyze":
		return true, d.analyze(ev, a)
	case "reader_initialize", "read_plate":
		m, err := d.module(a.Slot, AbsorbanceReader)
		if err != nil {
			return true, err
		}
		if name == "reader_initialize" {
			return true, d.readerInitialize(ev, m, a)
		}
		return true, d.readPlate(ev, m, a)
	case "hs_set_temperature", "hs_deactivate_heater", "hs_set_shake_speed", "hs_deactivate_shaker", "hs_open_latch", "hs_close_latch":
		m, err := d.module(a.Slot, HeaterShakerModule)
		if err != nil {
			return true, err
		}
		return true, d.heaterShaker(ev, m, name, a)
	}
	return false, nil
}

func (d *Deck) loadModule(ev *Event, a *Args) error {
	n, err := strconv.Atoi(a.Slot)
	if err != nil || n < 1 || n > deckSlots {
		return fail(ErrSlot, "slot %q is not a deck slot: slots are 1–%d", a.Slot, deckSlots)
	}
	if lw := d.slots[n-1]; lw != nil {
		return fail(ErrSlot, "slot %d is occupied by %s", n, lw.describe())
	}
	if m := d.modules[n]; m != nil && m.model == a.Module && d.lenient() {
		s := m.state() // loaded again: the same module, as the Opentrons API gives it
		ev.Module = &s
		return nil
	}
	if m := d.modules[n]; m != nil {
		return fail(ErrSlot, "slot %d holds a %s already", n, m.model)
	}
	m := &module{model: a.Module, slot: n}
	switch a.Module {
	case HeaterShakerModule:
		q := d.equipment()
		if m.hs, err = NewHeaterShaker(q.e.Reactions, q.e.HeaterShaker); err != nil {
			return fail(ErrModule, "%v", err)
		}
	case AbsorbanceReader:
	default:
		if !isOT2Module(a.Module) {
			return fail(ErrModule, "unknown module %q (known: %s, %s, %s, %s, %s, %s, %s, %s)", a.Module, HeaterShakerModule, AbsorbanceReader,
				TemperatureModuleV1, TemperatureModuleV2, MagneticModuleV1, MagneticModuleV2, ThermocyclerModuleV1, ThermocyclerModuleV2)
		}
		m.ot2 = &ot2State{LidOpen: true}
	}
	if d.modules == nil {
		d.modules = map[int]*module{}
	}
	d.modules[n] = m
	s := m.state()
	ev.Module = &s
	return nil
}

// describeDeck says in ev what is loaded, for a client that did not load it: the labware and
// the modules.
func (d *Deck) describeDeck(ev *Event) {
	for _, lw := range d.slots {
		if lw != nil {
			p := &lw.def.lw.Parameters
			ev.Labware = append(ev.Labware, LabwareReply{Name: lw.name, Slot: lw.slot, LoadName: p.LoadName,
				DisplayName: lw.def.lw.Metadata.DisplayName, Ordering: lw.def.lw.Ordering, IsTiprack: p.IsTiprack})
		}
	}
	for _, n := range d.moduleSlots() {
		ev.Modules = append(ev.Modules, d.modules[n].state())
	}
}

// module finds the module of a model in a slot.
func (d *Deck) module(slot, model string) (*module, error) {
	n, _ := strconv.Atoi(slot)
	m := d.modules[n]
	if m == nil || m.model != model {
		return nil, fail(ErrModule, "no %s in slot %q", model, slot)
	}
	return m, nil
}

func (d *Deck) heaterShaker(ev *Event, m *module, name string, a *Args) error {
	h := m.hs
	var err error
	switch name {
	case "hs_set_temperature":
		before := h.Temperature()
		if err = h.SetTemperature(a.Celsius); err == nil && before != a.Celsius {
			m.held = 0
		}
	case "hs_deactivate_heater":
		if h.Temperature() != h.o.Ambient {
			m.held = 0
		}
		h.DeactivateHeater()
	case "hs_set_shake_speed":
		err = h.SetShakeSpeed(a.RPM)
	case "hs_deactivate_shaker":
		h.DeactivateShaker()
	case "hs_open_latch":
		err = h.OpenLatch()
	case "hs_close_latch":
		h.CloseLatch()
	}
	if err != nil {
		return fail(ErrModule, "%v", err)
	}
	s := m.state()
	ev.Module = &s
	return nil
}

// delay is time passing: every heater-shaker holding labware holds it for the delay, its
// reactions running (a reaction needs its time at its temperature in all, over one delay or
// several, from when the temperature was set).
func (d *Deck) delay(ev *Event, a *Args) error {
	if math.IsNaN(a.Minutes) || math.IsInf(a.Minutes, 0) || a.Minutes <= 0 {
		return fail(ErrBadArgs, "delay of %v min: the minutes must be positive", a.Minutes)
	}
	dur := time.Duration(a.Minutes * float64(time.Minute))
	for _, n := range d.moduleSlots() {
		m := d.modules[n]
		lw := d.slots[n-1]
		if m.hs == nil || lw == nil {
			continue
		}
		def, wells, err := d.Wells(lw.name)
		if err != nil {
			return err
		}
		before := make(map[string]float64)
		for _, c := range wells {
			for s, v := range c.Species {
				before[s] += v
			}
		}
		hold, err := m.hs.Hold(context.Background(), def, wells, m.held+dur)
		if err != nil {
			return fail(ErrModule, "%v", err)
		}
		m.held += dur
		// The reactions turned reactants into product: the deck's mass balance follows.
		after := make(map[string]float64)
		for _, c := range wells {
			for s, v := range c.Species {
				after[s] += v
			}
		}
		if d.loaded.Species == nil {
			d.loaded.Species = map[string]float64{}
		}
		for s, v := range after {
			d.loaded.Species[s] += v - before[s]
		}
		hold.Labware = lw.name
		ev.Holds = append(ev.Holds, hold)
	}
	return nil
}

func (d *Deck) moduleSlots() []int {
	var out []int
	for n := range d.modules {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (d *Deck) readerInitialize(ev *Event, m *module, a *Args) error {
	switch a.Mode {
	case "single", "multi":
	default:
		return fail(ErrModule, "reader mode %q (single or multi)", a.Mode)
	}
	if len(a.Wavelengths) == 0 || a.Mode == "single" && len(a.Wavelengths) != 1 {
		return fail(ErrModule, "mode %s with %d wavelengths (single: one; multi: one or more)", a.Mode, len(a.Wavelengths))
	}
	for _, nm := range a.Wavelengths {
		if !(nm >= MinWavelength && nm <= MaxWavelength) {
			return fail(ErrModule, "wavelength %g nm is outside %g–%g nm", nm, MinWavelength, MaxWavelength)
		}
	}
	m.waves = slices.Clone(a.Wavelengths)
	s := m.state()
	ev.Module = &s
	return nil
}

// readPlate reads the labware a.Well names (a label or a slot) where it sits.
func (d *Deck) readPlate(ev *Event, m *module, a *Args) error {
	if m.waves == nil {
		return fail(ErrModule, "the plate reader in slot %d is not initialized (initialize(mode, wavelengths) first)", m.slot)
	}
	lw, err := d.labware(a.Well)
	if err != nil {
		return err
	}
	if lw.tips != nil {
		return fail(ErrBadArgs, "%s is a tip rack", lw.describe())
	}
	def, wells, err := d.Wells(lw.name)
	if err != nil {
		return err
	}
	r, err := d.equipment().reader.Read(context.Background(), def, wells, m.waves)
	if err != nil {
		return fail(ErrModule, "%v", err)
	}
	r.Labware = lw.name
	ev.Reading = r
	return nil
}

func (d *Deck) analyze(ev *Event, a *Args) error {
	an := d.equipment().analyzer
	if an == nil {
		return fail(ErrModule, "the bench has no analysis method (no species calibrated)")
	}
	lw, i, err := d.well(a.Well)
	if err != nil {
		return err
	}
	ch, err := an.Analyze(context.Background(), lw.wellName(i), &lw.wells[i])
	if err != nil {
		return fail(ErrModule, "%v", err)
	}
	ev.Chromatogram = ch
	return nil
}

// cloneModules copies the modules, their instruments' noise sources included, for Clone.
func (d *Deck) cloneModules(c *Deck) {
	if d.equip != nil {
		q := *d.equip
		q.reader = q.reader.clone()
		if q.analyzer != nil {
			q.analyzer = q.analyzer.clone()
		}
		c.equip = &q
	}
	for n, m := range d.modules {
		if c.modules == nil {
			c.modules = map[int]*module{}
		}
		k := *m
		k.waves = slices.Clone(m.waves)
		if m.ot2 != nil {
			o := *m.ot2
			k.ot2 = &o
		}
		if m.hs != nil {
			k.hs = m.hs.clone()
		}
		c.modules[n] = &k
	}
}

func (r *Reader) clone() *Reader {
	r.mu.Lock()
	defer r.mu.Unlock()
	src := *r.src
	return &Reader{lib: r.lib, o: r.o, src: &src, rng: rand.New(&src)}
}

func (a *Analyzer) clone() *Analyzer {
	a.mu.Lock()
	defer a.mu.Unlock()
	src := *a.src
	return &Analyzer{rf: a.rf, analytes: a.analytes, o: a.o, src: &src, rng: rand.New(&src)}
}

func (h *HeaterShaker) clone() *HeaterShaker {
	h.mu.Lock()
	defer h.mu.Unlock()
	src := *h.src
	return &HeaterShaker{reactions: h.reactions, o: h.o, src: &src, rng: rand.New(&src), target: h.target, rpm: h.rpm, latchOK: h.latchOK}
}

// describeModule says a module command in words, for errors.
func describeModule(b *strings.Builder, name string, a *Args) {
	switch name {
	case "load_module":
		fmt.Fprintf(b, " %s in slot %s", a.Module, a.Slot)
	case "hs_set_temperature", "temp_set", "tc_set_lid":
		fmt.Fprintf(b, " %g °C (slot %s)", a.Celsius, a.Slot)
	case "tc_set_block":
		fmt.Fprintf(b, " %g °C, hold %g s (slot %s)", a.Celsius, a.Seconds, a.Slot)
	case "tc_profile":
		fmt.Fprintf(b, " %d steps × %d (slot %s)", len(a.Profile), max(a.Repetitions, 1), a.Slot)
	case "tc_lid", "tc_deactivate":
		fmt.Fprintf(b, " %s (slot %s)", a.Mode, a.Slot)
	case "mag_engage":
		if a.Height != nil {
			fmt.Fprintf(b, " %g mm", *a.Height)
		}
		fmt.Fprintf(b, " (slot %s)", a.Slot)
	case "hs_set_shake_speed":
		fmt.Fprintf(b, " %d rpm (slot %s)", a.RPM, a.Slot)
	case "reader_initialize":
		fmt.Fprintf(b, " %s %v nm (slot %s)", a.Mode, a.Wavelengths, a.Slot)
	case "read_plate":
		fmt.Fprintf(b, " %s (reader in slot %s)", a.Well, a.Slot)
	case "delay":
		fmt.Fprintf(b, " %g min", a.Minutes)
	case "analyze":
		b.WriteString(" " + a.Well)
	default:
		b.WriteString(" (slot " + a.Slot + ")")
	}
}
