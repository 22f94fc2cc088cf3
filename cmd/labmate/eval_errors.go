package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/internal/textcut"
)

// trialErrors prints, on w, the distinct reasons the eval's trials in out (of its model and
// mode) failed with, the most frequent first, with their counts, and reports whether every
// trial of the summary errored: such an eval measured nothing, and exits 1 saying why.
func trialErrors(w io.Writer, out string, sum *eval.Summary) (allErrored bool) {
	if sum.All.Errors == 0 {
		return false
	}
	trials, _, err := eval.ReadTrials(out)
	if err != nil {
		fmt.Fprintf(w, "labmate eval: %d trials errored (their reasons could not be read: %v)\n", sum.All.Errors, err)
		return sum.All.Errors == sum.All.Trials
	}
	count := map[string]int{}
	for _, t := range trials {
		if t.Error != "" && t.Model == sum.Model && t.Mode == sum.Mode {
			count[firstLine(t.Error)]++
		}
	}
	fmt.Fprintf(w, "labmate eval: %d of %d trials errored:\n", sum.All.Errors, sum.All.Trials)
	writeReasons(w, count, 10, fmt.Sprintf(" (see %s/%s)", out, eval.TrialsFile))
	return sum.All.Trials > 0 && sum.All.Errors == sum.All.Trials
}

// writeReasons prints on w the distinct reasons of count, the most frequent first, each with
// its count ("  3× REASON"); past max of them (0: no bound), a line says how many others
// there are, followed by more.
func writeReasons(w io.Writer, count map[string]int, max int, more string) {
	reasons := slices.SortedFunc(maps.Keys(count), func(a, b string) int {
		return cmp.Or(count[b]-count[a], strings.Compare(a, b))
	})
	for i, r := range reasons {
		if i == max && max > 0 {
			fmt.Fprintf(w, "  … and %d other reasons%s\n", len(reasons)-i, more)
			return
		}
		fmt.Fprintf(w, "  %d× %s\n", count[r], r)
	}
}

// firstLine is s up to its first newline, at most 300 bytes (cut on a character's boundary).
func firstLine(s string) string {
	return textcut.Head(textcut.FirstLine(strings.TrimSpace(s)), 300)
}
