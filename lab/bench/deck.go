package bench

import (
	"embed"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The deck of an OT-2: slots 1–11 take labware, slot 12 is the fixed trash.
const (
	deckSlots = 11
	trashSlot = "12"
	// trashName is where dropped tips and blown-out liquid go, in events and messages.
	trashName = "trash"
)

//go:embed labware/*.json labware/opentrons
var builtinFiles embed.FS

// definition is a parsed labware definition with the well layout the deck addresses by.
type definition struct {
	lw    *Labware
	names []string       // wells in ordering order (by column, top to bottom)
	index map[string]int // well name → position in names
	row   []int          // each well's row within its column
	col   []int          // each well's column
	cols  [][]int        // wells by column
	rows  int            // the longest column
}

func newDefinition(lw *Labware) *definition {
	d := &definition{lw: lw, index: make(map[string]int, len(lw.Wells))}
	for c, names := range lw.Ordering {
		col := make([]int, len(names))
		for r, name := range names {
			col[r] = len(d.names)
			d.index[name] = len(d.names)
			d.names = append(d.names, name)
			d.row = append(d.row, r)
			d.col = append(d.col, c)
		}
		d.cols = append(d.cols, col)
		d.rows = max(d.rows, len(names))
	}
	return d
}

// builtin parses the embedded definitions once: labmate's own (labware/*.json) and Opentrons'
// standard definitions (labware/opentrons/LOADNAME/VERSION.json, Apache-2.0; see
// labware/opentrons/NOTICE). A load name without a version is its version 1 (or its only
// one); they are checked by the tests, so a failure is a broken build.
var builtin = sync.OnceValue(func() map[string]*definition {
	defs := make(map[string]*definition)
	for name, vs := range builtinVersions() {
		v := slices.Min(slices.Collect(maps.Keys(vs)))
		defs[name] = vs[v]
	}
	files, err := builtinFiles.ReadDir("labware")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		if f.IsDir() || path.Ext(f.Name()) != ".json" {
			continue
		}
		b, err := builtinFiles.ReadFile(path.Join("labware", f.Name()))
		if err != nil {
			panic(err)
		}
		lw, err := ParseLabware(b)
		if err != nil {
			panic(fmt.Sprintf("bench: embedded labware/%s: %v", f.Name(), err))
		}
		defs[lw.Parameters.LoadName] = newDefinition(lw)
	}
	return defs
})

// builtinVersions is Opentrons' standard definitions by load name and version.
var builtinVersions = sync.OnceValue(func() map[string]map[int]*definition {
	out := make(map[string]map[int]*definition)
	dirs, err := builtinFiles.ReadDir("labware/opentrons")
	if err != nil {
		panic(err)
	}
	for _, dir := range dirs {
		if !dir.IsDir() {
			continue
		}
		files, err := builtinFiles.ReadDir(path.Join("labware/opentrons", dir.Name()))
		if err != nil {
			panic(err)
		}
		for _, f := range files {
			v, err := strconv.Atoi(strings.TrimSuffix(f.Name(), ".json"))
			if err != nil {
				continue
			}
			b, err := builtinFiles.ReadFile(path.Join("labware/opentrons", dir.Name(), f.Name()))
			if err != nil {
				panic(err)
			}
			lw, err := ParseLabware(b)
			if err != nil {
				panic(fmt.Sprintf("bench: embedded labware/opentrons/%s/%s: %v", dir.Name(), f.Name(), err))
			}
			if out[dir.Name()] == nil {
				out[dir.Name()] = map[int]*definition{}
			}
			out[dir.Name()][v] = newDefinition(lw)
		}
	}
	return out
})

// labware is a definition loaded in a slot, with the state of its wells and, for a tip rack,
// its tips.
type labware struct {
	def   *definition
	slot  int
	name  string     // how commands and messages name it: its label, or its slot number
	wells []Contents // by position in def.names
	tips  []*tip     // tip racks: the tip in each well, nil once picked up
}

// wellName is the well's name in commands and messages: "plate/A1".
func (lw *labware) wellName(i int) string { return lw.name + "/" + lw.def.names[i] }

// describe names the labware with its load name: "plate (corning_96_wellplate_360ul_flat)".
func (lw *labware) describe() string { return lw.name + " (" + lw.def.lw.Parameters.LoadName + ")" }

// Deck is the liquid handler twin: an OT-2 deck of 11 slots with a fixed trash in slot 12,
// labware from definitions, a pipette on each mount, and the state of every well and tip. The
// liquid handler's changes go through Do (LoadLabware and LoadInstrument are shorthands for
// it); other instruments change wells through Well and Wells. A Deck is not safe for
// concurrent use; Clone it to simulate from a state.
type Deck struct {
	defs     map[string]*definition
	slots    [deckSlots]*labware
	byName   map[string]*labware // by label and by slot number
	pipettes [2]*pipette         // left, right
	trash    Contents
	tipsOut  int             // tips dropped into the trash
	loaded   Contents        // all liquid load_liquid put on the deck
	undo     []func()        // while a mix or a transfer runs: how to take back each change, in order
	equip    *equipment      // the modules' instruments; nil: the default equipment
	modules  map[int]*module // by slot
	// A protocol run's (protocol.go): its state, parameters, clock (s) and module timeline.
	prun     *protocolRun
	params   Params
	clock    float64
	timeline []ModuleEvent
}

// NewDeck returns an empty deck that knows the built-in labware definitions.
func NewDeck() *Deck {
	return &Deck{defs: maps.Clone(builtin()), byName: make(map[string]*labware)}
}

// LoadDefinition reads a labware definition file (Opentrons schema 2) and makes its load name
// available to load_labware on this deck.
func (d *Deck) LoadDefinition(file string) (*Labware, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("bench: labware definition: %w", err)
	}
	lw, err := ParseLabware(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	name := lw.Parameters.LoadName
	if _, ok := d.defs[name]; ok {
		return nil, fmt.Errorf("bench: labware definition %s: load name %q is already defined", file, name)
	}
	d.defs[name] = newDefinition(lw)
	return lw, nil
}

// LoadNames lists the labware load names the deck knows, in order.
func (d *Deck) LoadNames() []string { return slices.Sorted(maps.Keys(d.defs)) }

// LoadLabware puts the labware of a load name in a slot ("1"–"11"); label, when not empty,
// is how commands name it (otherwise its slot number does).
func (d *Deck) LoadLabware(loadName, slot, label string) error {
	_, err := d.Do(Command{Name: "load_labware", Args: Args{LoadName: loadName, Slot: slot, Label: label}})
	return err
}

func (d *Deck) loadLabware(a *Args) error {
	def, err := d.definitionFor(a)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(a.Slot)
	if err != nil || n < 1 || n > deckSlots {
		return fail(ErrSlot, "slot %q is not a deck slot: slots are 1–%d (%s is the fixed trash)", a.Slot, deckSlots, trashSlot)
	}
	if lw := d.slots[n-1]; lw != nil {
		return fail(ErrSlot, "slot %d is occupied by %s", n, lw.describe())
	}
	if a.Label != "" {
		if _, err := strconv.Atoi(a.Label); err == nil || a.Label == trashName || strings.Contains(a.Label, "/") {
			return fail(ErrBadArgs, "label %q: a label may not be a number, %q or contain \"/\"", a.Label, trashName)
		}
		if lw := d.byName[a.Label]; lw != nil {
			return fail(ErrBadArgs, "label %q is already used by slot %d", a.Label, lw.slot)
		}
	}
	lw := &labware{def: def, slot: n, name: a.Label, wells: make([]Contents, len(def.names))}
	if lw.name == "" {
		lw.name = strconv.Itoa(n)
	}
	if def.lw.Parameters.IsTiprack {
		lw.tips = make([]*tip, len(def.names))
		for i := range lw.tips {
			lw.tips[i] = &tip{rack: lw, well: i, volume: def.lw.Wells[def.names[i]].TotalLiquidVolume}
		}
	}
	d.slots[n-1] = lw
	d.byName[strconv.Itoa(n)] = lw
	if a.Label != "" {
		d.byName[a.Label] = lw
	}
	return nil
}

// definitionFor is the definition a load_labware names: an inline definition, a version of a
// standard one, or the deck's definition of the load name.
func (d *Deck) definitionFor(a *Args) (*definition, error) {
	if len(a.Definition) > 0 {
		lw, err := ParseLabware(a.Definition)
		if err != nil {
			return nil, fail(ErrBadArgs, "%v", err)
		}
		if a.LoadName != "" && a.LoadName != lw.Parameters.LoadName {
			return nil, fail(ErrBadArgs, "load name %q and a definition of %q", a.LoadName, lw.Parameters.LoadName)
		}
		a.LoadName = lw.Parameters.LoadName
		def := newDefinition(lw)
		d.defs[a.LoadName] = def
		return def, nil
	}
	if a.Version > 0 {
		if def := builtinVersions()[a.LoadName][a.Version]; def != nil {
			return def, nil
		}
		if def, ok := d.defs[a.LoadName]; ok && def.lw.Version == a.Version {
			return def, nil
		}
		if vs := builtinVersions()[a.LoadName]; vs != nil {
			return nil, fail(ErrUnknownLabware, "%s has no version %d (versions: %v)", a.LoadName, a.Version, slices.Sorted(maps.Keys(vs)))
		}
	}
	def, ok := d.defs[a.LoadName]
	if !ok {
		return nil, fail(ErrUnknownLabware, "unknown load name %q: not one of Opentrons' standard definitions nor a custom one given (the protocol's labware/ folder, --labware DIR, or load_labware_from_definition)", a.LoadName)
	}
	return def, nil
}

// labware finds loaded labware by label or slot number.
func (d *Deck) labware(name string) (*labware, error) {
	if lw := d.byName[name]; lw != nil {
		return lw, nil
	}
	var loaded []string
	for _, lw := range d.slots {
		if lw != nil {
			loaded = append(loaded, lw.name)
		}
	}
	if loaded == nil {
		return nil, fail(ErrUnknownLabware, "no labware %q on the deck (the deck is empty)", name)
	}
	return nil, fail(ErrUnknownLabware, "no labware %q on the deck (loaded: %s)", name, strings.Join(loaded, ", "))
}

// well resolves a well reference "labware/well", where labware is a label or a slot number.
func (d *Deck) well(ref string) (*labware, int, error) {
	name, well, ok := strings.Cut(ref, "/")
	if !ok {
		return nil, 0, fail(ErrUnknownWell, "well %q is not labware/well (for example plate/A1 or 1/A1)", ref)
	}
	lw, err := d.labware(name)
	if err != nil {
		return nil, 0, err
	}
	i, ok := lw.def.index[well]
	if !ok {
		names := lw.def.names
		return nil, 0, fail(ErrUnknownWell, "%s has no well %q (wells %s…%s)", lw.describe(), well, names[0], names[len(names)-1])
	}
	return lw, i, nil
}

// Labware returns the definition of the labware a label or slot number names; it is shared,
// not to be changed.
func (d *Deck) Labware(name string) (*Labware, error) {
	lw, err := d.labware(name)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return lw.def.lw, nil
}

// Well returns the contents of a well ("plate/A1") for instruments that measure or change
// them in place. The pointer stays valid for the life of the deck; what is changed through it
// is outside the deck's mass balance (Loaded).
func (d *Deck) Well(ref string) (*Contents, error) {
	lw, i, err := d.well(ref)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return &lw.wells[i], nil
}

// Wells returns a labware's definition and the contents of its wells by name, as the plate
// reader and the heater-shaker take them; the contents are the deck's own, as with Well.
func (d *Deck) Wells(name string) (*Labware, map[string]*Contents, error) {
	lw, err := d.labware(name)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	wells := make(map[string]*Contents, len(lw.wells))
	for i, name := range lw.def.names {
		wells[name] = &lw.wells[i]
	}
	return lw.def.lw, wells, nil
}
