package benchrun

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/labmate/labmate/lab/bench"
)

// PlateMap is one labware's text map: volumes, then the dominant species when a well holds
// any.
type PlateMap struct {
	Labware string `json:"labware"`
	Map     string `json:"map"`
}

// PlateMaps draws every labware on d.
func PlateMaps(d *bench.Deck) ([]PlateMap, error) {
	var maps []PlateMap
	for _, lw := range d.Snapshot().Labware {
		m, err := d.PlateMap(lw.Name, bench.ShowVolume)
		if err != nil {
			return nil, err
		}
		if hasSpecies(lw) {
			s, err := d.PlateMap(lw.Name, bench.ShowSpecies)
			if err != nil {
				return nil, err
			}
			m += s
		}
		maps = append(maps, PlateMap{Labware: lw.Name, Map: m})
	}
	return maps, nil
}

func hasSpecies(lw bench.LabwareState) bool {
	for _, c := range lw.Wells {
		if len(c.Species) > 0 {
			return true
		}
	}
	return false
}

// Summary is a Report in JSON.
type Summary struct {
	OK        bool              `json:"ok"`
	Commands  []Entry           `json:"commands"`
	Failure   string            `json:"failure,omitempty"`
	Verdicts  []string          `json:"verdicts,omitempty"`
	PlateMaps map[string]string `json:"plate_maps"`
	Bench     *bench.Snapshot   `json:"bench"`
	Protocol  *ProtocolSummary  `json:"protocol,omitempty"`
}

// ProtocolSummary is what an Opentrons protocol's run left, in numbers: the protocol time,
// the volume of every well holding liquid ("labware/well" → µL), the tips used per rack, the
// liquid assumed loaded by hand (user-loaded unknowns, µL per well) and the modules' timeline.
type ProtocolSummary struct {
	Seconds    float64             `json:"seconds"`
	Wells      map[string]float64  `json:"wells_ul"`
	TipsUsed   map[string]int      `json:"tips_used"`
	UserLoaded map[string]float64  `json:"user_loaded_ul,omitempty"`
	Modules    []bench.ModuleEvent `json:"modules,omitempty"`
}

// Protocol summarises a protocol run on d; nil when no protocol ran there.
func Protocol(d *bench.Deck) *ProtocolSummary {
	if !d.RanProtocol() {
		return nil
	}
	p := &ProtocolSummary{Seconds: d.Clock(), Wells: map[string]float64{}, TipsUsed: d.TipsUsed(), UserLoaded: d.UserLoaded(), Modules: d.Timeline()}
	for _, lw := range d.Snapshot().Labware {
		for w, c := range lw.Wells {
			p.Wells[lw.Name+"/"+w] = c.Volume
		}
	}
	return p
}

// Duration writes seconds as "1 h 2 min 3.4 s".
func Duration(s float64) string {
	h := int(s / 3600)
	m := int((s - float64(h)*3600) / 60)
	sec := s - float64(h)*3600 - float64(m)*60
	switch {
	case h > 0:
		return fmt.Sprintf("%d h %d min %.0f s", h, m, sec)
	case m > 0:
		return fmt.Sprintf("%d min %.1f s", m, sec)
	}
	return fmt.Sprintf("%.1f s", sec)
}

func (p *ProtocolSummary) text(b *strings.Builder) {
	fmt.Fprintf(b, "\nprotocol time: %s\n", Duration(p.Seconds))
	racks := slices.Sorted(maps.Keys(p.TipsUsed))
	if len(racks) > 0 {
		b.WriteString("tips used:")
		for _, r := range racks {
			fmt.Fprintf(b, " %s %d", r, p.TipsUsed[r])
		}
		b.WriteString("\n")
	}
	if len(p.UserLoaded) > 0 {
		wells := slices.Sorted(maps.Keys(p.UserLoaded))
		var total float64
		for _, w := range wells {
			total += p.UserLoaded[w]
		}
		fmt.Fprintf(b, "user-loaded (liquid the protocol never declared, assumed put there by hand): %d wells, %.6g µL:", len(wells), total)
		for i, w := range wells {
			if i == 24 {
				fmt.Fprintf(b, " …")
				break
			}
			fmt.Fprintf(b, " %s %.6g", w, p.UserLoaded[w])
		}
		b.WriteString("\n")
	}
	if len(p.Modules) > 0 {
		b.WriteString("modules:\n")
		for _, m := range p.Modules {
			fmt.Fprintf(b, "  %10s  slot %d %s: %s", Duration(m.At), m.Slot, m.Model, m.What)
			if m.Seconds > 0 {
				fmt.Fprintf(b, " (%s)", Duration(m.Seconds))
			}
			b.WriteString("\n")
		}
	}
}

// Summary returns the report for JSON.
func (r *Report) Summary() (*Summary, error) {
	maps, err := PlateMaps(r.Deck)
	if err != nil {
		return nil, err
	}
	s := &Summary{OK: r.Failure == "", Commands: r.Entries, Failure: r.Failure, Verdicts: r.Verdicts,
		PlateMaps: make(map[string]string, len(maps)), Bench: r.Deck.Snapshot(), Protocol: Protocol(r.Deck)}
	if s.Commands == nil {
		s.Commands = []Entry{}
	}
	for _, m := range maps {
		s.PlateMaps[m.Labware] = m.Map
	}
	return s, nil
}

// Text says what a protocol did (or, without entries, the bench): the numbered commands with
// their lines, steps and warnings, the plate maps, perception's verdicts and the failure.
func (r *Report) Text() (string, error) {
	maps, err := PlateMaps(r.Deck)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if len(r.Entries) > 0 {
		b.WriteString("commands:\n")
	}
	for i, e := range r.Entries {
		fmt.Fprintf(&b, "%4d  line %d: %s\n", i+1, e.Command.Line, e.Command)
		if e.Event != nil {
			for _, s := range e.Event.Steps {
				b.WriteString("        " + s.String() + "\n")
			}
			for _, warn := range e.Event.Warnings {
				fmt.Fprintf(&b, "        warning (line %d): %s\n", e.Command.Line, warn)
			}
		}
	}
	for _, m := range maps {
		b.WriteString("\n" + m.Map)
	}
	if p := Protocol(r.Deck); p != nil {
		p.text(&b)
	}
	for _, v := range r.Verdicts {
		b.WriteString("\nperception: " + v + "\n")
	}
	if r.Failure != "" {
		b.WriteString("\nerror: " + r.Failure + "\n")
	}
	return b.String(), nil
}
