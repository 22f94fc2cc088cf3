package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/labmate/labmate/lab/bench"
)

// printBench prints what a protocol did (or, without entries, the bench): the numbered
// commands with their lines, steps and warnings, the plate maps and the failure.
func printBench(w io.Writer, rep *benchReport, asJSON bool) error {
	snap := rep.deck.Snapshot()
	maps := make(map[string]string)
	var order []string
	for _, lw := range snap.Labware {
		m, err := rep.deck.PlateMap(lw.Name, bench.ShowVolume)
		if err != nil {
			return err
		}
		if hasSpecies(lw) {
			s, err := rep.deck.PlateMap(lw.Name, bench.ShowSpecies)
			if err != nil {
				return err
			}
			m += s
		}
		maps[lw.Name] = m
		order = append(order, lw.Name)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			OK        bool              `json:"ok"`
			Commands  []benchEntry      `json:"commands"`
			Failure   string            `json:"failure,omitempty"`
			Verdicts  []string          `json:"verdicts,omitempty"`
			PlateMaps map[string]string `json:"plate_maps"`
			Bench     *bench.Snapshot   `json:"bench"`
		}{rep.failure == "", rep.entries, rep.failure, rep.verdicts, maps, snap})
	}
	var b strings.Builder
	if len(rep.entries) > 0 {
		b.WriteString("commands:\n")
	}
	for i, e := range rep.entries {
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
	for _, name := range order {
		b.WriteString("\n" + maps[name])
	}
	for _, v := range rep.verdicts {
		b.WriteString("\nperception: " + v + "\n")
	}
	if rep.failure != "" {
		b.WriteString("\nerror: " + rep.failure + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func hasSpecies(lw bench.LabwareState) bool {
	for _, c := range lw.Wells {
		if len(c.Species) > 0 {
			return true
		}
	}
	return false
}
