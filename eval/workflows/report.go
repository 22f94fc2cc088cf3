package workflows

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Summary counts the checks and skills that passed.
type Summary struct {
	Skills       int     `json:"skills"`
	SkillsPassed int     `json:"skills_passed"`
	Checks       int     `json:"checks"`
	ChecksPassed int     `json:"checks_passed"`
	WallS        float64 `json:"wall_s"`
}

// Summarize counts results; wall is the whole run's wall time in seconds.
func Summarize(results []*Result, wall float64) Summary {
	s := Summary{Skills: len(results), WallS: wall}
	for _, r := range results {
		if r.Pass {
			s.SkillsPassed++
		}
		for _, row := range r.Rows {
			s.Checks++
			if row.Pass {
				s.ChecksPassed++
			}
		}
	}
	return s
}

// AllPassed reports whether every check of every result passed.
func AllPassed(results []*Result) bool {
	for _, r := range results {
		if !r.Pass {
			return false
		}
	}
	return len(results) > 0
}

func num(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.5g", *v)
}

func signed(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%+.3g", *v)
}

func verdict(row Row) string {
	if row.Pass {
		return "pass"
	}
	return "FAIL"
}

// WriteText prints the table: one line per check, then the failures and the summary.
func WriteText(w io.Writer, results []*Result, wall float64) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "skill\tcode\tquantity\tvalue\treference\terror\ttolerance\tunit\twall (s)\tperception\tpass")
	for _, r := range results {
		for _, row := range r.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4g\t%s\t±%.3g\t%s\t%.1f\t%s\t%s\n", r.Skill, r.Code, row.Quantity, num(row.Value),
				row.Reference, signed(row.Error), row.Tolerance, row.Unit, row.WallS, firstWord(r.Perception), verdict(row))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Skill, r.Error)
		}
	}
	s := Summarize(results, wall)
	_, err := fmt.Fprintf(w, "%d/%d skills and %d/%d checks within tolerance in %.1f s\n", s.SkillsPassed, s.Skills, s.ChecksPassed, s.Checks, wall)
	return err
}

// WriteMarkdown prints the table as Markdown, with the references' citations.
func WriteMarkdown(w io.Writer, results []*Result, wall float64) error {
	var b strings.Builder
	b.WriteString("| skill | code | quantity | value | reference | error | tolerance | wall (s) | perception | pass |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		for _, row := range r.Rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.4g %s | %s | ±%.3g | %.1f | %s | %s |\n", r.Skill, r.Code, row.Quantity, num(row.Value),
				row.Reference, row.Unit, signed(row.Error), row.Tolerance, row.WallS, firstWord(r.Perception), verdict(row))
		}
	}
	s := Summarize(results, wall)
	fmt.Fprintf(&b, "\n%d/%d skills and %d/%d checks within tolerance in %.1f s.\n\nReferences:\n\n", s.SkillsPassed, s.Skills, s.ChecksPassed, s.Checks, wall)
	for _, r := range results {
		for _, row := range r.Rows {
			fmt.Fprintf(&b, "- %s %s: %s\n", r.Skill, row.Quantity, row.Citation)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func firstWord(s string) string {
	if s == "" {
		return "—"
	}
	f, _, _ := strings.Cut(s, " ")
	return f
}
