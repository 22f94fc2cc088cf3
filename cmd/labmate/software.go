package main

import (
	"encoding/json"

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
			return software.WriteTable(out, items)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {\"software\": [{group, name, version, path, package, features, data, note, error}]}")
	return cmd
}
