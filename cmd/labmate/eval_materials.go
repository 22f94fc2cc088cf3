package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/eval/materials"
	"github.com/labmate/labmate/examples/skills"
	"github.com/labmate/labmate/internal/progress"
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
A line on stderr says at once how many scans will run, then one as each ends; on a
terminal, a status line below them ticks the scans done and the time.
Exit status: 0 done; 1 failed, or every scan failed (their reasons are printed with their
counts); 2 could not start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if asJSON && markdown {
				return fmt.Errorf("--json and --markdown: choose one")
			}
			setups, err := materials.Select(nilIfEmpty(elements), nilIfEmpty(methods))
			if err != nil {
				return err
			}
			box, err := sb.open()
			if err != nil {
				return err
			}
			start := time.Now()
			stderr := cmd.ErrOrStderr()
			// The first scan ends after seconds to minutes: say at once what is coming.
			scans := fmt.Sprintf("%d scans", len(setups))
			if len(setups) == 1 {
				scans = "1 scan"
			}
			fmt.Fprintf(stderr, "labmate eval materials: %s (%s), %s at a time; a line as each ends\n", scans, scanNames(setups), atATime(jobs))
			var mu sync.Mutex
			ended := 0
			// On a terminal, between the scans' lines, a status line ticks.
			doneOf := func(n int) string { return fmt.Sprintf("%d of %d done", n, len(setups)) }
			status := progress.NewStatus(stderr, doneOf(0), 0)
			defer status.Done()
			results, err := materials.Run(cmd.Context(), &materials.Options{
				Skills:   skills.FS,
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
					mu.Lock()
					defer mu.Unlock()
					ended++
					status.Println(fmt.Sprintf("[%d/%d] %s %s: %s in %.1f s", ended, len(setups), r.Method, r.Element, a, r.WallS), doneOf(ended))
				},
			})
			status.Done()
			if err != nil {
				return err
			}
			defer func() {
				if err == nil {
					err = allScansFailed(stderr, results)
				}
			}()
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

// scanNames lists the scans of setups by method: "qe Al Cu, lammps Al".
func scanNames(setups []materials.Setup) string {
	var order []string
	by := map[string][]string{}
	for _, s := range setups {
		if by[s.Method] == nil {
			order = append(order, s.Method)
		}
		by[s.Method] = append(by[s.Method], s.Element)
	}
	var parts []string
	for _, m := range order {
		parts = append(parts, m+" "+strings.Join(by[m], " "))
	}
	return strings.Join(parts, ", ")
}

func atATime(jobs int) string {
	if jobs <= 0 {
		return fmt.Sprint(runtime.NumCPU())
	}
	return fmt.Sprint(jobs)
}

// allScansFailed is exit status 1, with the distinct reasons and their counts, when every
// scan failed: the table measured nothing.
func allScansFailed(w io.Writer, results []*materials.Result) error {
	count := map[string]int{}
	for _, r := range results {
		if r.Fit != nil {
			return nil
		}
		count[firstLine(cmp.Or(r.Error, "no fit"))]++
	}
	if len(results) == 0 {
		return nil
	}
	fmt.Fprintf(w, "labmate eval materials: every one of the %d scans failed, so it measured nothing:\n", len(results))
	writeReasons(w, count, 0, "")
	return exitError{1}
}
