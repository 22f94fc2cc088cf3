package benchrun

import (
	"fmt"
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
}

// Summary returns the report for JSON.
func (r *Report) Summary() (*Summary, error) {
	maps, err := PlateMaps(r.Deck)
	if err != nil {
		return nil, err
	}
	s := &Summary{OK: r.Failure == "", Commands: r.Entries, Failure: r.Failure, Verdicts: r.Verdicts,
		PlateMaps: make(map[string]string, len(maps)), Bench: r.Deck.Snapshot()}
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
	for _, v := range r.Verdicts {
		b.WriteString("\nperception: " + v + "\n")
	}
	if r.Failure != "" {
		b.WriteString("\nerror: " + r.Failure + "\n")
	}
	return b.String(), nil
}
