package eval

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// table is rows of cells, written as aligned text, Markdown or CSV.
type table struct {
	head []string
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) text(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range append([][]string{t.head}, t.rows...) {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

func (t *table) markdown(w io.Writer) error {
	line := func(cells []string) string {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		return "| " + strings.Join(esc, " | ") + " |\n"
	}
	var b strings.Builder
	b.WriteString(line(t.head))
	b.WriteString("|" + strings.Repeat("---|", len(t.head)) + "\n")
	for _, r := range t.rows {
		b.WriteString(line(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *table) csv(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(t.head)
	cw.WriteAll(t.rows)
	return cw.Error()
}

// scoreTable is a table of stats, each row after its label cells, for items of up to k
// trials. raw gives numbers as CSV wants them (fractions; every pass@k; the stability's two
// ends) instead of as people read them; passK, when set, heads the text's column of pass@k.
func scoreTable(label []string, k int, raw bool, passK string) *table {
	head := append([]string(nil), label...)
	if raw {
		head = append(head, "items", "trials", "errors", "mean_score", "pass_rate")
		for j := 1; j <= k; j++ {
			head = append(head, fmt.Sprintf("pass@%d", j))
		}
		head = append(head, "pass_min", "pass_max")
	} else {
		head = append(head, "items", "trials", "errors", "score", "pass")
		if passK != "" {
			head = append(head, passK)
		}
		head = append(head, "stability")
	}
	if raw {
		return &table{head: append(head, "tokens", "operations", "hot_fixes", "repairs", "replans")}
	}
	return &table{head: append(head, "tokens", "operations", "hot-fixes", "repairs", "re-plans")}
}

// cells are s's cells of a scoreTable (k and raw as there); passK adds the pass@k of k.
func (s *Stats) cells(k int, raw, passK bool) []string {
	c := []string{strconv.Itoa(s.Items), strconv.Itoa(s.Trials), strconv.Itoa(s.Errors)}
	if raw {
		c = append(c, num(s.Score), num(s.PassRate))
		for j := range k {
			v := ""
			if j < len(s.PassAt) {
				v = num(s.PassAt[j])
			}
			c = append(c, v)
		}
		return append(c, num(s.PassMin), num(s.PassMax), num(s.Tokens), num(s.Operations), num(s.HotFixes), num(s.Repairs), num(s.Replans))
	}
	c = append(c, fmt.Sprintf("%.1f", s.Score), pct(s.PassRate))
	if passK {
		v := "-"
		if k <= len(s.PassAt) {
			v = pct(s.PassAt[k-1])
		}
		c = append(c, v)
	}
	return append(c, pct(s.PassMin)+"–"+pct(s.PassMax), fmt.Sprintf("%.0f", s.Tokens), fmt.Sprintf("%.2f", s.Operations),
		fmt.Sprintf("%.2f", s.HotFixes), fmt.Sprintf("%.2f", s.Repairs), fmt.Sprintf("%.2f", s.Replans))
}

// moduleTable is a table of tokens per module, each row after its label cells.
func moduleTable(label []string, raw bool) *table {
	if raw {
		return &table{head: append(append([]string(nil), label...), "module", "calls", "input_tokens", "output_tokens", "share")}
	}
	return &table{head: append(append([]string(nil), label...), "module", "calls", "input", "output", "share")}
}

func (m *ModuleTokens) cells(raw bool) []string {
	if raw {
		return []string{m.Module, num(m.Calls), num(m.Input), num(m.Output), num(m.Share)}
	}
	return []string{m.Module, fmt.Sprintf("%.2f", m.Calls), fmt.Sprintf("%.0f", m.Input), fmt.Sprintf("%.0f", m.Output), pct(m.Share)}
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// scores is s's table by group and overall.
func (s *Summary) scores(raw bool) *table {
	passK := ""
	if s.K > 1 {
		passK = fmt.Sprintf("pass@%d", s.K)
	}
	t := scoreTable([]string{"group"}, s.K, raw, passK)
	for _, g := range append(slices.Clone(s.Groups), s.All) {
		t.add(append([]string{g.Group}, g.cells(s.K, raw, passK != "")...)...)
	}
	return t
}

func (s *Summary) tokens(raw bool) *table {
	t := moduleTable(nil, raw)
	for _, m := range s.Modules {
		t.add(m.cells(raw)...)
	}
	return t
}

// title is the summary's first line and its state.
func (s *Summary) title() string {
	set := ""
	if s.Set != "" {
		set = " (set " + s.Set + ")"
	}
	state := fmt.Sprintf("%d trials, up to %d per item", s.All.Trials, s.K)
	if s.Expected > 0 {
		state = fmt.Sprintf("%d of %d trials, up to %d per item", s.All.Trials, s.Expected, s.K)
	}
	t := fmt.Sprintf("%s%s: %s, mode %s; %s\n", s.Benchmark, set, s.Model, s.Mode, state)
	if s.Stopped != "" {
		t += "STOPPED SHORT: " + s.Stopped + "\n"
	}
	return t
}

// WriteText writes s as aligned tables: the scores by group and overall, then the tokens per
// module (means per trial).
func (s *Summary) WriteText(w io.Writer) error {
	if _, err := io.WriteString(w, s.title()+"\n"); err != nil {
		return err
	}
	if err := s.scores(false).text(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ntokens per module (means per trial):")
	return s.tokens(false).text(w)
}

// WriteMarkdown writes s as Markdown.
func (s *Summary) WriteMarkdown(w io.Writer) error {
	if _, err := io.WriteString(w, "# "+strings.Replace(s.title(), "\n", "\n\n", 2)); err != nil {
		return err
	}
	if err := s.scores(false).markdown(w); err != nil {
		return err
	}
	fmt.Fprint(w, "\n## Tokens per module (means per trial)\n\n")
	return s.tokens(false).markdown(w)
}

// WriteCSV writes s's scores by group and overall as CSV.
func (s *Summary) WriteCSV(w io.Writer) error { return s.scores(true).csv(w) }
