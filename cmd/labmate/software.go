package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/software"
)

func newSoftwareCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "software",
		Short: "List the scientific software the kernels can use: Octave packages, Python modules, pw.x, lmp, mpirun",
		Long: `List the scientific software the kernels can use, with versions and what each found:

  octave             the interpreter; its packages (control, signal, optim, statistics, symbolic
                     and any other: pkg load NAME); gnuplot and ghostscript, which write plots
                     headless (print -dpng FILE, saveas); labmate's toolbox: stepinfo,
                     allmargin and iirnotch with MATLAB's semantics, used where no package
                     defines them
  python             /usr/bin/python3 and numpy, scipy, matplotlib (Agg), sympy, pandas, ase
  quantum-espresso   pw.x, and the pseudopotentials folder with the count of UPF files and
                     their elements (pseudo_dir = '/usr/share/espresso/pseudo')
  lammps             lmp with its built-in packages, and the potentials folder with the count
                     of files by kind (eam, eam.alloy, tersoff, …)
  mpi                mpirun (Open MPI): mpirun -np N works in the shell kernel as it is, as
                     root and not, with more ranks than cores too

What is missing says which Debian package provides it (scripts/deps installs them all). The
probes run in parallel with a timeout; programs are taken from /usr/local/bin, /usr/bin and
/bin only, never from PATH or the current directory, and run in an empty temporary directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			items := software.Probe(cmd.Context(), &software.Options{Toolbox: octave.Toolbox})
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]any{"software": items})
			}
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
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {\"software\": [{group, name, version, path, package, features, data, note, error}]}")
	return cmd
}

// isMain says whether it heads its group (the interpreter or the code itself).
func isMain(it software.Item) bool {
	switch it.Name {
	case "octave", "python", "pw.x", "lmp", "mpirun":
		return true
	}
	return false
}

// found is the FOUND column: the error, or the data folder, the features and the note.
func found(it software.Item) string {
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
	if len(it.Features) > 0 && it.Group == software.GroupOctave {
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
