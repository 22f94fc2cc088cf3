package main

import (
	"cmp"
	"fmt"
	"io"

	"github.com/labmate/labmate/lab/game"
)

// invalidTurns prints on w why the turns of planner's campaigns rs that measured nothing
// were invalid (the distinct reasons, the most frequent first, with their counts), and
// reports whether every turn was: such campaigns measured nothing, and campaign run exits 1
// saying why.
func invalidTurns(w io.Writer, planner string, rs []*game.Result) (all bool) {
	count, bad, turns := map[string]int{}, 0, 0
	for _, r := range rs {
		for _, st := range r.Steps {
			turns++
			if !st.OK {
				bad++
				count[firstLine(cmp.Or(st.Error, "no reason given"))]++
			}
		}
	}
	if bad == 0 {
		return false
	}
	fmt.Fprintf(w, "labmate campaign: %d of %d turns of the %s planner measured nothing:\n", bad, turns, planner)
	writeReasons(w, count, 10, "")
	return bad == turns
}

// allInvalid names the planners of ss none of whose turns measured anything.
func allInvalid(ss []*game.Summary) []string {
	var names []string
	for _, s := range ss {
		if s.Campaigns > 0 && s.Invalid >= 1 {
			names = append(names, s.Planner)
		}
	}
	return names
}
