package eval

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Report puts result folders side by side: one row per folder, benchmark, set, model and mode
// that their trials hold (models × modes), each summarised as Run summarises an eval.
type Report struct {
	Rows []*Row `json:"rows"`
}

// Row is one folder's trials of one benchmark, set, model and mode.
type Row struct {
	Folder string `json:"folder"`
	*Summary
}

// NewReport reads the trials of each folder. A torn last line is left out and noted on log
// (when set).
func NewReport(dirs []string, log io.Writer) (*Report, error) {
	r := &Report{}
	for _, dir := range dirs {
		trials, torn, err := ReadTrials(dir)
		if err != nil {
			return nil, err
		}
		if torn > 0 && log != nil {
			fmt.Fprintf(log, "eval: %s: left out a torn last line of %d bytes\n", filepath.Join(dir, TrialsFile), torn)
		}
		if len(trials) == 0 {
			return nil, fmt.Errorf("eval: %s holds no trials", filepath.Join(dir, TrialsFile))
		}
		type variant struct{ benchmark, set, model, mode string }
		by := map[variant][]*Trial{}
		var order []variant
		for _, t := range trials {
			v := variant{t.Benchmark, t.Set, t.Model, t.Mode}
			if by[v] == nil {
				order = append(order, v)
			}
			by[v] = append(by[v], t)
		}
		slices.SortFunc(order, func(a, b variant) int {
			return cmp.Or(strings.Compare(a.benchmark, b.benchmark), strings.Compare(a.set, b.set), strings.Compare(a.model, b.model), strings.Compare(a.mode, b.mode))
		})
		for _, v := range order {
			r.Rows = append(r.Rows, &Row{Folder: dir, Summary: Summarize(by[v])})
		}
	}
	return r, nil
}

// label are a row's label cells.
func (w *Row) label() []string {
	b := w.Benchmark
	if w.Set != "" {
		b += "/" + w.Set
	}
	return []string{w.Folder, b, w.Model, w.Mode, strconv.Itoa(w.K)}
}

var reportLabel = []string{"folder", "benchmark", "model", "mode", "k"}

func (r *Report) scores(raw bool) *table {
	k := 0
	for _, w := range r.Rows {
		k = max(k, w.K)
	}
	passK := ""
	if k > 1 {
		passK = "pass@k"
	}
	t := scoreTable(reportLabel, k, raw, passK)
	for _, w := range r.Rows {
		kk := w.K
		if raw {
			kk = k
		}
		t.add(append(w.label(), w.All.cells(kk, raw, passK != "")...)...)
	}
	return t
}

func (r *Report) tokens(raw bool) *table {
	t := moduleTable(reportLabel, raw)
	for _, w := range r.Rows {
		for _, m := range w.Modules {
			t.add(append(w.label(), m.cells(raw)...)...)
		}
	}
	return t
}

// WriteText writes the report as aligned tables: the scores, then the tokens per module.
func (r *Report) WriteText(w io.Writer) error {
	if err := r.scores(false).text(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ntokens per module (means per trial):")
	return r.tokens(false).text(w)
}

// WriteMarkdown writes the report as Markdown.
func (r *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprint(w, "# Results side by side\n\n")
	if err := r.scores(false).markdown(w); err != nil {
		return err
	}
	fmt.Fprint(w, "\n## Tokens per module (means per trial)\n\n")
	return r.tokens(false).markdown(w)
}

// WriteFiles writes the report into dir: report.md, report.csv (the scores), report-tokens.csv,
// report-score.png (mean score by group, a bar per row) and report-tokens.png (tokens per trial
// by module, a bar per row).
func (r *Report) WriteFiles(dir string) error {
	var groups, mods []string
	for _, w := range r.Rows {
		for _, g := range w.Groups {
			if !slices.Contains(groups, g.Group) {
				groups = append(groups, g.Group)
			}
		}
		for _, m := range w.Modules {
			if !slices.Contains(mods, m.Module) {
				mods = append(mods, m.Module)
			}
		}
	}
	slices.Sort(groups)
	groups = append(groups, "all")
	slices.SortFunc(mods, byModule)
	var score, tokens []series
	for _, w := range r.Rows {
		name := w.Model + " " + w.Mode
		if len(r.Rows) > 1 && slices.ContainsFunc(r.Rows, func(o *Row) bool { return o != w && o.Model == w.Model && o.Mode == w.Mode }) {
			name += " (" + w.Folder + ")"
		}
		s := series{name: name, values: make([]float64, len(groups))}
		for i, g := range groups {
			for _, st := range append(slices.Clone(w.Groups), w.All) {
				if st.Group == g {
					s.values[i] = st.Score
				}
			}
		}
		t := series{name: name, values: make([]float64, len(mods))}
		for _, m := range w.Modules {
			t.values[slices.Index(mods, m.Module)] = m.Input + m.Output
		}
		score, tokens = append(score, s), append(tokens, t)
	}
	return writeAll(dir, map[string]func(io.Writer) error{
		"report.md":         r.WriteMarkdown,
		"report.csv":        r.scores(true).csv,
		"report-tokens.csv": r.tokens(true).csv,
	}, func() error {
		return bars(filepath.Join(dir, "report-score.png"), "mean score by group", "mean score", groups, score)
	}, func() error {
		return bars(filepath.Join(dir, "report-tokens.png"), "tokens per trial by module", "tokens per trial", mods, tokens)
	})
}
