package software

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable prints items as labmate software shows them: one row per item (SOFTWARE, VERSION,
// FOUND), grouped, the parts of a group indented under its interpreter or code.
func WriteTable(out io.Writer, items []Item) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SOFTWARE\tVERSION\tFOUND")
	group := ""
	for _, it := range items {
		if it.Group != group {
			if group != "" {
				fmt.Fprintln(w, "\t\t")
			}
			group = it.Group
		}
		name := it.Name
		if it.Name != it.Group && !isMain(it) {
			name = "  " + name
		}
		v := it.Version
		if it.Error != "" {
			v = "NOT AVAILABLE"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", name, v, found(it))
	}
	return w.Flush()
}

// isMain says whether it heads its group (the interpreter or the code itself).
func isMain(it Item) bool {
	switch it.Name {
	case "octave", "python", "pw.x", "lmp", "mpirun":
		return true
	}
	return false
}

// found is the FOUND column: the error, or the data folder, the features and the note.
func found(it Item) string {
	if it.Error != "" {
		return it.Error
	}
	var parts []string
	if d := it.Data; d != nil {
		s := fmt.Sprintf("%s: %d %s", d.Dir, d.Count, d.What)
		if len(d.Elements) > 0 {
			s += " for " + strings.Join(d.Elements, " ")
		}
		if len(d.Kinds) > 0 {
			kinds := slices.Collect(maps.Keys(d.Kinds))
			slices.SortFunc(kinds, func(a, b string) int { // most files first
				return cmp.Or(d.Kinds[b]-d.Kinds[a], strings.Compare(a, b))
			})
			var ks []string
			for _, k := range kinds[:min(8, len(kinds))] {
				ks = append(ks, fmt.Sprintf("%s %d", k, d.Kinds[k]))
			}
			s += " (" + strings.Join(ks, ", ") + ", …)"
		}
		parts = append(parts, s)
	}
	if len(it.Features) > 0 && it.Group == GroupOctave {
		parts = append(parts, strings.Join(it.Features, " "))
	} else if len(it.Features) > 0 {
		parts = append(parts, fmt.Sprintf("%d packages (%s …)", len(it.Features), strings.Join(it.Features[:min(6, len(it.Features))], " ")))
	}
	if it.Note != "" {
		parts = append(parts, it.Note)
	} else if it.Path != "" && it.Data == nil {
		parts = append(parts, it.Path)
	}
	return strings.Join(parts, "; ")
}
