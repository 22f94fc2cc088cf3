package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/eval/materials"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/shell"
)

func newEvalMaterialsCmd() *cobra.Command {
	var (
		elements, methods []string
		dir               string
		jobs              int
		asJSON, markdown  bool
		sb                sandboxFlags
	)
	cmd := &cobra.Command{
		Use:   "materials",
		Short: "Lattice constants of cubic elements from equation-of-state scans with Quantum ESPRESSO and LAMMPS vs experiment",
		Long: `eval materials runs the eos-lattice-constant skill (examples/skills/eos-lattice-constant)
for every cubic element Debian ships the data for: Quantum ESPRESSO (pw.x) with the packaged
pseudopotentials for fcc Al Cu Ni Rh Au Pt Pb, bcc Fe Li and diamond Si C Ge (Fe and Ni spin-
polarized, Pt with spin-orbit), and LAMMPS (lmp) with the packaged EAM potentials for fcc Al
Cu Ni Pd Ag Pt Au and bcc Fe W. Each scan runs pw.x or lmp at seven lattice parameters within
±3% of a guess, in a shell kernel in the sandbox (one rank, one thread), and fits the third-order
Birch–Murnaghan equation of state by least squares; a minimum outside the window is rescanned
once around it. Scans run --jobs at a time.

It prints a0, B0, their experimental values (Sol27LC, zero-point corrected), the error and the
Sol27LC verdict (Correct when |error| < 5%) and the wall time per element and method, and a
summary per method. Ag has no Debian pseudopotential, Li and Pb no EAM potential.

The full table takes about two minutes on two cores; --elements Si,Al,Cu takes seconds.
Exit status: 0 done, 1 failed, 2 could not start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON && markdown {
				return fmt.Errorf("--json and --markdown: choose one")
			}
			if _, err := materials.Select(nilIfEmpty(elements), nilIfEmpty(methods)); err != nil {
				return err
			}
			box, err := sb.open()
			if err != nil {
				return err
			}
			start := time.Now()
			results, err := materials.Run(cmd.Context(), &materials.Options{
				Start:    shell.Start,
				Kernel:   kernel.Options{Sandbox: box, Grace: 2 * time.Second},
				Dir:      dir,
				Elements: nilIfEmpty(elements),
				Methods:  nilIfEmpty(methods),
				Jobs:     jobs,
				Progress: func(r *materials.Result) {
					a := "failed: " + r.Error
					if r.Fit != nil {
						a = fmt.Sprintf("a0 %.3f Å (%+.2f%%)", r.Fit.A0, r.ErrorPct)
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "%s %s: %s in %.1f s\n", r.Method, r.Element, a, r.WallS)
				},
			})
			if err != nil {
				return err
			}
			wall := time.Since(start).Seconds()
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				return json.NewEncoder(out).Encode(map[string]any{"results": results, "summary": materials.Summarize(results), "wall_s": wall})
			case markdown:
				return materials.WriteMarkdown(out, results, wall)
			}
			return materials.WriteText(out, results, wall)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&elements, "elements", nil, "only these elements, e.g. Si,Al,Cu (default all)")
	f.StringSliceVar(&methods, "methods", nil, "only these methods: qe, lammps (default both)")
	f.StringVar(&dir, "workspace", "", "keep every scan's inputs and outputs in DIR/METHOD-ELEMENT (default: a temporary directory, removed)")
	f.IntVar(&jobs, "jobs", 0, "scans at once (default the number of CPUs)")
	f.BoolVar(&asJSON, "json", false, "print JSON: results with every scan point and fit, summary per method")
	f.BoolVar(&markdown, "markdown", false, "print a Markdown table")
	sb.add(cmd)
	return cmd
}

func nilIfEmpty(s []string) []string {
	var out []string
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
