package eval

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WriteFiles writes s into dir: summary.md, summary.csv (the scores), tokens.csv (the tokens per
// module), score.png (mean score and pass rate by group) and tokens.png (tokens by module).
func (s *Summary) WriteFiles(dir string) error {
	var cats []string
	var score, pass []float64
	for _, g := range append(slices.Clone(s.Groups), s.All) {
		cats = append(cats, g.Group)
		score, pass = append(score, g.Score), append(pass, 100*g.PassRate)
	}
	var mods []string
	var in, out []float64
	for _, m := range s.Modules {
		mods, in, out = append(mods, m.Module), append(in, m.Input), append(out, m.Output)
	}
	name := s.Benchmark + ", " + s.Model + ", " + s.Mode
	return writeAll(dir, map[string]func(io.Writer) error{
		"summary.md":  s.WriteMarkdown,
		"summary.csv": s.WriteCSV,
		"tokens.csv":  s.tokens(true).csv,
	}, func() error {
		return bars(filepath.Join(dir, "score.png"), name+": score by group", "mean score, pass rate (%)", cats,
			[]series{{"mean score", score}, {"pass rate %", pass}})
	}, func() error {
		return bars(filepath.Join(dir, "tokens.png"), name+": tokens per trial by module", "tokens per trial", mods,
			[]series{{"input", in}, {"output", out}})
	})
}

// writeAll writes each file of dir by its writer, through a temporary file renamed into place,
// then draws the plots.
func writeAll(dir string, files map[string]func(io.Writer) error, plots ...func() error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	for name, write := range files {
		var b strings.Builder
		if err := write(&b); err != nil {
			return fmt.Errorf("eval: writing %s: %w", name, err)
		}
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	for _, plot := range plots {
		if err := plot(); err != nil {
			return err
		}
	}
	return nil
}
