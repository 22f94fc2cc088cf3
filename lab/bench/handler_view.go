package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Snapshot is the whole state of a deck, for JSON.
type Snapshot struct {
	Labware     []LabwareState `json:"labware"`
	Pipettes    []PipetteState `json:"pipettes"`
	Trash       Contents       `json:"trash"`        // liquid dropped or blown out into the trash
	TrashedTips int            `json:"trashed_tips"` // tips dropped into the trash
	Loaded      Contents       `json:"loaded"`       // all liquid load_liquid put on the deck
	Modules     []ModuleState  `json:"modules,omitempty"`
}

// LabwareState is a slot's labware and the state of its wells.
type LabwareState struct {
	Slot        int                 `json:"slot"`
	Name        string              `json:"name"` // its label, or its slot number
	LoadName    string              `json:"load_name"`
	DisplayName string              `json:"display_name"`
	Wells       map[string]Contents `json:"wells,omitempty"`    // the wells holding liquid
	Fresh       []string            `json:"fresh,omitempty"`    // tip racks: wells with an unused tip
	Returned    map[string]TipState `json:"returned,omitempty"` // tip racks: used tips put back
}

// TipState is a tip: where it came from, whether it was used, what it holds and what it
// touched.
type TipState struct {
	Origin   string   `json:"origin"` // its place in its rack, "tips/A1"
	Used     bool     `json:"used"`   // picked up before
	Contents Contents `json:"contents"`
	Touched  []string `json:"touched,omitempty"` // the wells it entered, in order
	Species  []string `json:"species,omitempty"` // the species it touched
}

// PipetteState is a mounted pipette and its tips.
type PipetteState struct {
	Mount     string     `json:"mount"`
	Name      string     `json:"name"`
	Channels  int        `json:"channels"`
	MinVolume float64    `json:"min_volume_ul"`
	MaxVolume float64    `json:"max_volume_ul"`
	TipRacks  []string   `json:"tip_racks,omitempty"`
	Tips      []TipState `json:"tips,omitempty"` // by channel, none without tips
}

func (t *tip) state() TipState {
	s := TipState{Origin: t.origin(), Used: t.used, Contents: t.c.Clone(), Species: slices.Sorted(maps.Keys(t.species))}
	for _, w := range t.touched {
		s.Touched = append(s.Touched, w.String())
	}
	return s
}

// Snapshot returns a copy of the deck's state.
func (d *Deck) Snapshot() *Snapshot {
	s := &Snapshot{Trash: d.trash.Clone(), TrashedTips: d.tipsOut, Loaded: d.loaded.Clone(), Labware: []LabwareState{}, Pipettes: []PipetteState{}}
	for _, lw := range d.slots {
		if lw == nil {
			continue
		}
		ls := LabwareState{Slot: lw.slot, Name: lw.name, LoadName: lw.def.lw.Parameters.LoadName, DisplayName: lw.def.lw.Metadata.DisplayName}
		for i, c := range lw.wells {
			if c.Volume > 0 {
				if ls.Wells == nil {
					ls.Wells = make(map[string]Contents)
				}
				ls.Wells[lw.def.names[i]] = c.Clone()
			}
		}
		for i, t := range lw.tips {
			switch {
			case t == nil:
			case !t.used:
				ls.Fresh = append(ls.Fresh, lw.def.names[i])
			default:
				if ls.Returned == nil {
					ls.Returned = make(map[string]TipState)
				}
				ls.Returned[lw.def.names[i]] = t.state()
			}
		}
		s.Labware = append(s.Labware, ls)
	}
	for _, p := range d.pipettes {
		if p == nil {
			continue
		}
		ps := PipetteState{Mount: p.mount, Name: p.model.name, Channels: p.model.channels, MinVolume: p.model.min, MaxVolume: p.model.max}
		for _, lw := range p.racks {
			ps.TipRacks = append(ps.TipRacks, lw.name)
		}
		for _, t := range p.tips {
			if t != nil {
				ps.Tips = append(ps.Tips, t.state())
			}
		}
		s.Pipettes = append(s.Pipettes, ps)
	}
	for _, n := range d.moduleSlots() {
		s.Modules = append(s.Modules, d.modules[n].state())
	}
	return s
}

// Totals is all the liquid on the deck: in the wells, in the tips (on the pipettes and put
// back in their racks) and in the trash. Commands conserve it: it equals Loaded.
func (d *Deck) Totals() Contents {
	var sum Contents
	for _, lw := range d.slots {
		if lw == nil {
			continue
		}
		for i := range lw.wells {
			addTo(&sum, &lw.wells[i])
		}
		for _, t := range lw.tips {
			if t != nil {
				addTo(&sum, &t.c)
			}
		}
	}
	for _, p := range d.pipettes {
		if p == nil {
			continue
		}
		for _, t := range p.tips {
			if t != nil {
				addTo(&sum, &t.c)
			}
		}
	}
	addTo(&sum, &d.trash)
	return sum
}

// Loaded is all the liquid load_liquid put on the deck, with what reactions on heater-shakers
// consumed and formed (a reaction changes species, not volumes).
func (d *Deck) Loaded() Contents { return d.loaded.Clone() }

// Show is what a plate map shows in each well.
type Show int

const (
	ShowVolume  Show = iota // the volume in µL
	ShowSpecies             // the species with the most µmol ("-" for a solvent alone)
)

// PlateMap draws a labware's wells as rows × columns: volumes or dominant species, "." for
// an empty well; for a tip rack "o" for an unused tip, "u" for a used one put back and "."
// for none.
func (d *Deck) PlateMap(name string, show Show) (string, error) {
	lw, err := d.labware(name)
	if err != nil {
		return "", fmt.Errorf("bench: plate map: %w", err)
	}
	def := lw.def
	what := "volume, µL"
	switch {
	case lw.tips != nil:
		what = "tips: o unused, u used, . none"
	case show == ShowSpecies:
		what = "dominant species"
	}
	cells := make([][]string, def.rows)
	width := 1
	for r := range cells {
		cells[r] = make([]string, len(def.cols))
		for c, col := range def.cols {
			cell := ""
			if r < len(col) {
				cell = lw.cell(col[r], show)
			}
			cells[r][c] = cell
			width = max(width, len(cell))
		}
	}
	for c := range def.cols {
		width = max(width, len(fmt.Sprint(c+1)))
	}
	var rows []string // row names, from a longest column
	for _, col := range def.cols {
		if len(col) == def.rows {
			for _, i := range col {
				rows = append(rows, strings.TrimRight(def.names[i], "0123456789"))
			}
			break
		}
	}
	label := 0
	for _, r := range rows {
		label = max(label, len(r))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s in slot %d (%s)\n", lw.name, def.lw.Metadata.DisplayName, lw.slot, what)
	fmt.Fprintf(&b, "%*s", label, "")
	for c := range def.cols {
		fmt.Fprintf(&b, " %*d", width, c+1)
	}
	b.WriteString("\n")
	for r, row := range cells {
		fmt.Fprintf(&b, "%-*s", label, rows[r])
		for _, cell := range row {
			fmt.Fprintf(&b, " %*s", width, cell)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func (lw *labware) cell(i int, show Show) string {
	if lw.tips != nil {
		switch t := lw.tips[i]; {
		case t == nil:
			return "."
		case t.used:
			return "u"
		}
		return "o"
	}
	c := &lw.wells[i]
	switch {
	case c.Volume <= 0:
		return "."
	case show == ShowVolume:
		return fmt.Sprintf("%.1f", c.Volume)
	}
	top, most := "-", 0.0
	for _, s := range c.Names() {
		if n := c.Species[s]; n > most {
			top, most = s, n
		}
	}
	return top
}

// Clone returns an independent copy of the deck: a simulation can run a protocol on it and
// leave the deck as it was.
func (d *Deck) Clone() *Deck {
	c := &Deck{defs: maps.Clone(d.defs), byName: make(map[string]*labware, len(d.byName)),
		trash: d.trash.Clone(), tipsOut: d.tipsOut, loaded: d.loaded.Clone()}
	m := make(map[*labware]*labware)
	for i, lw := range d.slots {
		if lw == nil {
			continue
		}
		n := *lw
		n.wells = make([]Contents, len(lw.wells))
		for j := range lw.wells {
			n.wells[j] = lw.wells[j].Clone()
		}
		c.slots[i], m[lw] = &n, &n
	}
	for name, lw := range d.byName {
		c.byName[name] = m[lw]
	}
	for old, n := range m {
		if old.tips == nil {
			continue
		}
		n.tips = make([]*tip, len(old.tips))
		for j, t := range old.tips {
			if t != nil {
				n.tips[j] = t.copyTo(m)
			}
		}
	}
	for i, p := range d.pipettes {
		if p == nil {
			continue
		}
		n := &pipette{model: p.model, mount: p.mount, tips: make([]*tip, len(p.tips)), lenient: p.lenient, reuse: p.reuse, nozzles: p.nozzles, back: p.back}
		for _, lw := range p.racks {
			n.racks = append(n.racks, m[lw])
		}
		for k, t := range p.tips {
			if t != nil {
				n.tips[k] = t.copyTo(m)
			}
		}
		c.pipettes[i] = n
	}
	d.cloneModules(c)
	pm := make(map[*pipette]*pipette)
	for i, p := range d.pipettes {
		if p != nil {
			pm[p] = c.pipettes[i]
		}
	}
	c.prun = d.prun.clone(m, pm)
	c.params, c.clock, c.timeline = maps.Clone(d.params), d.clock, slices.Clone(d.timeline)
	return c
}
