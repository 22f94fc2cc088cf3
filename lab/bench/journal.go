package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Noted returns b with note called after each command, with what came of it (an event or an
// error), before the caller sees it: how a simulation lists a protocol's commands and a
// persisted bench journals the ones done.
// The commands of concurrent callers are carried out and noted one at a time, so the notes are
// in the order the commands ran.
func Noted(b Backend, note func(Command, *Event, error)) Backend {
	return &noted{Backend: b, note: note}
}

type noted struct {
	Backend
	mu   sync.Mutex
	note func(Command, *Event, error)
}

func (n *noted) Do(ctx context.Context, cmd Command) (*Event, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ev, err := n.Backend.Do(ctx, cmd)
	n.note(cmd, ev, err)
	return ev, err
}

// EquipmentRecord is an Equipment as a journal keeps it: where its reactions' datasets are
// and the modules' options, so that a replay equips its deck alike.
type EquipmentRecord struct {
	Reactions    []ReactionRecord     `json:"reactions,omitempty"`
	Reader       *ReaderOptions       `json:"reader,omitempty"`
	HeaterShaker *HeaterShakerOptions `json:"heater_shaker,omitempty"`
	Calibration  map[string]float64   `json:"calibration,omitempty"`
	Analyzer     *AnalyzerOptions     `json:"analyzer,omitempty"`
}

// ReactionRecord is a reaction map: its dataset file and spec.
type ReactionRecord struct {
	Path string       `json:"path"`
	Spec ReactionSpec `json:"spec"`
}

// Record says how to equip a deck again as e does. Spectra other than the default ones
// are not recorded: that is an error.
func (e *Equipment) Record() (*EquipmentRecord, error) {
	if e.Spectra != nil {
		return nil, fmt.Errorf("bench: equipment with its own spectra cannot be journaled")
	}
	r := &EquipmentRecord{Reader: e.Reader, HeaterShaker: e.HeaterShaker, Calibration: e.Calibration, Analyzer: e.Analyzer}
	for _, rx := range e.Reactions {
		if rx.Path == "" {
			return nil, fmt.Errorf("bench: reaction %s was not loaded from a file and cannot be journaled", rx.Name)
		}
		r.Reactions = append(r.Reactions, ReactionRecord{Path: rx.Path, Spec: rx.Spec})
	}
	return r, nil
}

// Load loads the reactions' datasets again: the Equipment the record was made from.
func (r *EquipmentRecord) Load() (*Equipment, error) {
	e := &Equipment{Reader: r.Reader, HeaterShaker: r.HeaterShaker, Calibration: r.Calibration, Analyzer: r.Analyzer}
	for _, rr := range r.Reactions {
		rx, err := LoadReaction(rr.Path, &rr.Spec)
		if err != nil {
			return nil, err
		}
		e.Reactions = append(e.Reactions, rx)
	}
	return e, nil
}

// journalLine is a line of a journal: a Command, or (the first line only) the equipment.
type journalLine struct {
	Equipment *EquipmentRecord `json:"equipment,omitempty"`
	Command
}

// WriteEquipment writes the journal line that equips a replay's deck as e: a journal's
// first line, before any command.
func WriteEquipment(w io.Writer, e *Equipment) error {
	rec, err := e.Record()
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(journalLine{Equipment: rec})
}

// Replay carries out on d the commands of a journal, one Command in JSON a line, as a
// persisted bench keeps them (the twin is deterministic, so replaying gives back the state,
// tips' history included). A first line that is equipment (WriteEquipment) equips d first,
// its reactions' datasets loaded again. It returns how many commands it replayed; an error
// names the journal line.
func Replay(ctx context.Context, d *Deck, r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	n, line := 0, 0
	for sc.Scan() {
		line++
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("bench: journal: replay stopped at line %d: %w", line, err)
		}
		var jl journalLine
		if err := json.Unmarshal(sc.Bytes(), &jl); err != nil {
			return n, fmt.Errorf("bench: journal line %d: %w", line, err)
		}
		if jl.Equipment != nil {
			if line != 1 {
				return n, fmt.Errorf("bench: journal line %d: equipment after the first line", line)
			}
			e, err := jl.Equipment.Load()
			if err == nil {
				err = d.Equip(e)
			}
			if err != nil {
				return n, fmt.Errorf("bench: journal line %d: equipment: %w", line, err)
			}
			continue
		}
		if _, err := d.Do(jl.Command); err != nil {
			return n, fmt.Errorf("bench: journal line %d: %w", line, err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("bench: journal line %d: %w", line+1, err)
	}
	return n, nil
}

// String says the command in words, as errors do: "aspirate 50 µL from res/A1 (left)".
func (c Command) String() string { return describe(c.Name, &c.Args) }
