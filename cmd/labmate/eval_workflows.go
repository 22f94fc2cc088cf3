package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/eval/workflows"
	"github.com/labmate/labmate/examples/skills"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/shell"
)

func newEvalWorkflowsCmd() *cobra.Command {
	var (
		names            []string
		dir              string
		quick            bool
		asJSON, markdown bool
		timeout          time.Duration
		sb               sandboxFlags
	)
	cmd := &cobra.Command{
		Use:   "workflows",
		Short: "Run every skill of labmate's materials library (examples/skills) and check its result against its published reference",
		Long: `eval workflows runs the procedure of every skill in labmate's skill library — the SKILL.md
folders under examples/skills, built into labmate — in a shell kernel in the sandbox, one skill
after the other (one scientific code at a time, one core each): Quantum ESPRESSO (pw.x, ph.x,
dynmat.x, dos.x, pp.x, average.x) for Si's band gap, DOS, effective masses, Γ optical phonon and
dielectric constant and Al(111)'s work function; LAMMPS with Debian's EAM potentials for Cu's
lattice constant, cohesive energy, elastic constants, (111) surface energy, vacancy formation
energy and concentration and thermal expansion. Perception watches every run with the
software's profile and its Hot-Fix stops a run that goes wrong.

Each skill's scripts print RESULT lines; each is compared with the reference and the tolerance
the skill's metadata states (workflow-check-…: value ± tolerance | citation). The table gives
the value, the reference, the error, the tolerance, the wall time, perception's final verdict
and pass or FAIL per check; --json and --markdown (with the citations) print it as such.

--quick runs the fast subset (seconds each; under a minute of CPU in all), which also runs in
make test; the full table takes a few minutes of CPU. --skills a,b chooses skills.
Exit status: 0 every check passed, 1 a check failed, 2 could not start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON && markdown {
				return fmt.Errorf("--json and --markdown: choose one")
			}
			all, err := workflows.Load(skills.FS)
			if err != nil {
				return err
			}
			wfs, err := workflows.Select(all, nilIfEmpty(names), quick)
			if err != nil {
				return err
			}
			box, err := sb.open()
			if err != nil {
				return err
			}
			start := time.Now()
			results, err := workflows.Run(cmd.Context(), wfs, &workflows.Options{
				Start:   shell.Start,
				Kernel:  kernel.Options{Sandbox: box, Grace: 2 * time.Second},
				Dir:     dir,
				Timeout: timeout,
				Progress: func(r *workflows.Result) {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: pass %v in %.1f s\n", r.Skill, r.Pass, r.WallS)
				},
			})
			if err != nil {
				return err
			}
			wall := time.Since(start).Seconds()
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				err = json.NewEncoder(out).Encode(map[string]any{"results": results, "summary": workflows.Summarize(results, wall), "wall_s": wall})
			case markdown:
				err = workflows.WriteMarkdown(out, results, wall)
			default:
				err = workflows.WriteText(out, results, wall)
			}
			if err != nil {
				return err
			}
			if !workflows.AllPassed(results) {
				return exitError{1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&names, "skills", nil, "only these skills, e.g. cu-vacancy-formation,si-band-gap (default all)")
	f.BoolVar(&quick, "quick", false, "only the fast subset (the skills marked workflow-quick)")
	f.StringVar(&dir, "workspace", "", "keep every skill's inputs and outputs in DIR/SKILL (default: a temporary directory, removed)")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "wall-clock bound on each skill's run")
	f.BoolVar(&asJSON, "json", false, "print JSON: every check with value, reference, error, tolerance, citation and wall_s")
	f.BoolVar(&markdown, "markdown", false, "print a Markdown table with the citations")
	sb.add(cmd)
	return cmd
}
