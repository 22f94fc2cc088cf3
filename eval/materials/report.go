package materials

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Summary counts the verdicts of one method and its mean absolute error.
type Summary struct {
	Method                     string  `json:"method"`
	Correct, Incorrect, Failed int     `json:"-"`
	MAEPct                     float64 `json:"mae_pct"` // mean |error| of a0 over the fitted elements
	WallS                      float64 `json:"wall_s"`  // the scans' wall times added up
}

// Summarize returns one Summary per method present in results, QE first.
func Summarize(results []*Result) []Summary {
	var out []Summary
	for _, m := range []string{QE, LAMMPS} {
		s := Summary{Method: m}
		n := 0
		for _, r := range results {
			if r == nil || r.Method != m {
				continue
			}
			n++
			s.WallS += r.WallS
			switch r.Verdict {
			case Correct:
				s.Correct++
			case Incorrect:
				s.Incorrect++
			default:
				s.Failed++
			}
			if r.Fit != nil {
				s.MAEPct += math.Abs(r.ErrorPct)
			}
		}
		if n == 0 {
			continue
		}
		if fitted := s.Correct + s.Incorrect; fitted > 0 {
			s.MAEPct /= float64(fitted)
		}
		out = append(out, s)
	}
	return out
}

func methodName(m string) string {
	if m == QE {
		return "QE"
	}
	return "LAMMPS"
}

// with is the setup's column: the pseudopotential and functional, or the potential.
func (r *Result) with() string {
	if r.Method == QE {
		extra := ""
		if r.Spin {
			extra = ", spin"
		}
		if r.SpinOrbit {
			extra = ", SOC"
		}
		return fmt.Sprintf("%s (%s, %g Ry, %d³ k%s)", r.Pseudo, r.Functional, r.Ecutwfc, r.K, extra)
	}
	return r.Potential + " (" + r.PairStyle + ")"
}

func (r *Result) cells() []string {
	c := []string{r.Element, r.Structure, methodName(r.Method), r.with()}
	if r.Fit == nil {
		return append(c, "—", fmt.Sprintf("%.3f", r.Exp.A0), "—", "—", fmt.Sprintf("%.0f", r.Exp.B0), Failed+": "+r.Error, fmt.Sprintf("%.1f", r.WallS))
	}
	return append(c,
		fmt.Sprintf("%.3f", r.Fit.A0), fmt.Sprintf("%.3f", r.Exp.A0), fmt.Sprintf("%+.2f", r.ErrorPct),
		fmt.Sprintf("%.0f", r.Fit.B0), fmt.Sprintf("%.0f", r.Exp.B0), r.Verdict, fmt.Sprintf("%.1f", r.WallS))
}

var header = []string{"ELEMENT", "STRUCTURE", "METHOD", "WITH", "A0 Å", "EXP Å", "ERR %", "B0 GPa", "EXP GPa", "VERDICT", "WALL s"}

// WriteText writes the results as an aligned table and a summary per method.
func WriteText(w io.Writer, results []*Result, wall float64) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range results {
		if r != nil {
			fmt.Fprintln(tw, strings.Join(r.cells(), "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, s := range Summarize(results) {
		fmt.Fprintf(w, "%s: %d correct, %d incorrect, %d failed (Sol27LC: |error| < 5%%); mean |error| %.2f%%; scans %.1f s\n",
			methodName(s.Method), s.Correct, s.Incorrect, s.Failed, s.MAEPct, s.WallS)
	}
	_, err := fmt.Fprintf(w, "wall time %.1f s\n", wall)
	return err
}

// WriteMarkdown writes the results as a Markdown table and a summary per method.
func WriteMarkdown(w io.Writer, results []*Result, wall float64) error {
	h := []string{"element", "structure", "method", "with", "a₀ (Å)", "exp. (Å)", "error (%)", "B₀ (GPa)", "exp. (GPa)", "verdict", "wall (s)"}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(h)))
	for _, r := range results {
		if r != nil {
			c := r.cells()
			c[3] = "`" + strings.ReplaceAll(c[3], "|", "\\|") + "`"
			fmt.Fprintf(w, "| %s |\n", strings.Join(c, " | "))
		}
	}
	fmt.Fprintln(w)
	for _, s := range Summarize(results) {
		fmt.Fprintf(w, "- %s: %d correct, %d incorrect, %d failed; mean |error| %.2f%%; scans %.1f s\n",
			methodName(s.Method), s.Correct, s.Incorrect, s.Failed, s.MAEPct, s.WallS)
	}
	_, err := fmt.Fprintf(w, "- wall time %.1f s\n", wall)
	return err
}
