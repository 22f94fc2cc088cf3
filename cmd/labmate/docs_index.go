package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/internal/progress"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/extract"
	"github.com/labmate/labmate/knowledge/harvest"
	"github.com/labmate/labmate/knowledge/sqlite"
)

func newDocsIndexCmd(open func(context.Context) (*sqlite.Index, error)) *cobra.Command {
	var (
		withOctave bool
		pyModules  []string
		asJSON     bool
		sf         sandboxFlags
	)
	cmd := &cobra.Command{
		Use:   "index [--octave] [--python MODULE…] [PATH…]",
		Short: "Add files, folders, the installed Octave's help or Python modules' docstrings to the index",
		Long: `Add documents to the index. --octave and --python harvest the help of the installed
software by running Octave or Python in the sandbox, in an empty directory of their own:
nothing in the current directory or a workspace is on their path.`,
		Example: `  labmate docs index --octave
  labmate docs index --python numpy,scipy
  labmate docs index ~/manuals ./README.md`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !withOctave && len(pyModules) == 0 && len(args) == 0 {
				return errors.New("docs index: name PATH…, --octave or --python MODULE,…")
			}
			if err := checkDocsSources(pyModules, args); err != nil {
				return err
			}
			var sb harvest.Sandbox
			if withOctave || len(pyModules) > 0 {
				var err error
				if sb, err = sf.open(); err != nil {
					return err
				}
			}
			ix, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer ix.Close()
			ctx := cmd.Context()
			type report struct {
				Source  string  `json:"source"`
				Docs    int     `json:"documents"`
				Seconds float64 `json:"seconds"`
				Skipped int     `json:"skipped,omitempty"`
			}
			var reports []report
			errw := cmd.ErrOrStderr()
			// add stores docs, replacing everything under prefix when it is not empty.
			add := func(source, prefix string, start time.Time, docs []*knowledge.Doc, skipped int) error {
				var err error
				if prefix != "" {
					err = ix.Replace(ctx, prefix, docs...)
				} else {
					err = ix.Add(ctx, docs...)
				}
				if err != nil {
					return err
				}
				r := report{source, len(docs), time.Since(start).Seconds(), skipped}
				reports = append(reports, r)
				fmt.Fprintf(errw, "indexed %s: %d documents in %.2fs", source, r.Docs, r.Seconds)
				if skipped > 0 {
					fmt.Fprintf(errw, ", %d files skipped", skipped)
				}
				fmt.Fprintln(errw)
				return nil
			}
			if withOctave {
				start := time.Now()
				done := progress.Working(errw, "harvesting the help of the installed Octave (10–20 s)", 0)
				docs, err := harvest.Octave(ctx, &harvest.OctaveOptions{Sandbox: sb, Binary: octave.Binary})
				done()
				if err != nil {
					return err
				}
				if err := add("octave", "octave:", start, docs, 0); err != nil {
					return err
				}
			}
			if len(pyModules) > 0 {
				start := time.Now()
				done := progress.Working(errw, "harvesting the docstrings of "+strings.Join(pyModules, ", "), 0)
				docs, err := harvest.Python(ctx, pyModules, &harvest.PythonOptions{Sandbox: sb, Binary: python.Binary})
				done()
				if err != nil {
					return err
				}
				// Each module's entries are replaced (a function removed upstream disappears).
				byModule := map[string][]*knowledge.Doc{}
				for _, d := range docs {
					for _, m := range pyModules {
						if d.Title == m || strings.HasPrefix(d.Title, m+".") {
							byModule[m] = append(byModule[m], d)
							break
						}
					}
				}
				for _, m := range pyModules {
					// "python:numpy." and the module's own "python:numpy" (replaced as a source).
					if err := add("python "+m, "python:"+m+".", start, byModule[m], 0); err != nil {
						return err
					}
				}
			}
			for _, path := range args {
				start := time.Now()
				fi, err := os.Stat(path)
				if err != nil {
					return fmt.Errorf("docs index: %w", err) // it vanished since checkDocsSources
				}
				var docs []*knowledge.Doc
				skipped := 0
				if fi.IsDir() {
					docs, err = extract.Dir(ctx, path, func(p string, err error) {
						skipped++
						fmt.Fprintf(errw, "skipped %v\n", err)
					})
				} else {
					var d *knowledge.Doc
					d, err = extract.File(ctx, path)
					docs = []*knowledge.Doc{d}
				}
				if err != nil {
					return fmt.Errorf("docs index: %w", err)
				}
				if err := add(path, "", start, docs, skipped); err != nil {
					return err
				}
			}
			if asJSON {
				chunks, sources, err := ix.Stats(ctx)
				if err != nil {
					return err
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"indexed": reports, "chunks": chunks, "sources": sources})
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&withOctave, "octave", false, "index the help of every function of the installed Octave and its packages")
	cmd.Flags().StringSliceVar(&pyModules, "python", nil, "index the docstrings of these installed Python modules and their public submodules (comma-separated, or the flag repeated)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was indexed as JSON")
	sf.add(cmd)
	return cmd
}

// pyModule is a dotted Python module name.
var pyModule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// checkDocsSources refuses, before anything is indexed, a --python value that is not a module
// name (such as a flag that followed --python) and a PATH that does not exist, saying how to
// name a module when the PATH looks like one.
func checkDocsSources(modules, paths []string) error {
	for _, m := range modules {
		if !pyModule.MatchString(m) {
			return fmt.Errorf("docs index: --python %q is not a Python module name (give modules as --python numpy,scipy)", m)
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, os.ErrNotExist) && pyModule.MatchString(p) {
				return fmt.Errorf("docs index: %s is not a file or folder; to index the Python module, name it with --python: --python %s", p, strings.Join(append(slices.Clone(modules), p), ","))
			}
			return fmt.Errorf("docs index: %w", err)
		}
	}
	return nil
}
