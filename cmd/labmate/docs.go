package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/extract"
	"github.com/labmate/labmate/knowledge/harvest"
	"github.com/labmate/labmate/knowledge/sqlite"
	"github.com/labmate/labmate/knowledge/tools"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/providers"
	"github.com/labmate/labmate/tool"
)

func newDocsCmd() *cobra.Command {
	var db, embedder string
	cmd := &cobra.Command{
		Use:   "docs",
		Short: "Index and search documentation: local files and the help of the installed Octave and Python",
		Long: `The documentation index the agent searches (its search_docs tool), in one SQLite file
(--db, default ~/.local/share/labmate/docs.db or $LABMATE_DOCS_DB).

  labmate docs index PATH…            Markdown, HTML, PDF (needs pdftotext) and text files, folders walked
  labmate docs index --octave         the help of every function of the installed Octave and its packages
  labmate docs index --python numpy scipy   the docstrings (what pydoc shows) of installed Python modules
  labmate docs search "QUERY" [--json] [-n N]
  labmate docs web "QUERY" | papers "QUERY" | fetch URL   what the agent's web tools return

Files are cut along their headings; every hit cites its source, heading and line range. Ranking
is BM25 over SQLite FTS5 with the name, first sentence, heading and body weighted in that
order; with an embedder (--embedder, LABMATE_EMBEDDER or "embedder:" in the config file) chunks
are embedded too and search fuses both rankings. Indexing a source again replaces what was
indexed from it.`,
	}
	cmd.PersistentFlags().StringVar(&db, "db", "", "the index file (default $LABMATE_DOCS_DB or ~/.local/share/labmate/docs.db)")
	cmd.PersistentFlags().StringVar(&embedder, "embedder", "", "embedding model PROVIDER:MODEL for hybrid search (default LABMATE_EMBEDDER, then the config file; none: BM25 only)")
	open := func(ctx context.Context) (*sqlite.Index, error) {
		path, err := docsPath(db)
		if err != nil {
			return nil, err
		}
		emb, err := providers.OptionalEmbedder(ctx, embedder)
		if err != nil {
			return nil, err
		}
		return sqlite.Open(path, &sqlite.Options{Embedder: emb})
	}
	cmd.AddCommand(newDocsIndexCmd(open), newDocsSearchCmd(open),
		newDocsToolCmd("web", tools.SearchWeb, "Search the web with the configured provider"),
		newDocsToolCmd("papers", tools.SearchPapers, "Search papers on arXiv and Crossref (a DOI looks one up)"),
		newDocsToolCmd("fetch", tools.FetchURL, "Read a web page or PDF as cleaned, bounded text"))
	return cmd
}

// newDocsToolCmd runs one of the agent's knowledge tools from the command line, so what the
// agent would read can be seen: the same providers, limits and output.
func newDocsToolCmd(use, toolName, short string) *cobra.Command {
	var (
		n      int
		asJSON bool
	)
	arg := "QUERY"
	if toolName == tools.FetchURL {
		arg = "URL"
	}
	cmd := &cobra.Command{
		Use:   use + " " + arg,
		Short: short,
		Long:  short + " — what the agent's " + toolName + " tool returns.\n\n" + knowledgeEnv,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := knowledgeFromEnv(nil)
			if err != nil {
				return err
			}
			set, err := tool.NewSet(tools.New(cfg)...)
			if err != nil {
				return err
			}
			in := map[string]any{"query": strings.Join(args, " ")}
			if toolName == tools.FetchURL {
				in = map[string]any{"url": args[0]}
			} else if n > 0 {
				in["n"] = n
			}
			raw, _ := json.Marshal(in)
			res, err := set.Call(cmd.Context(), llm.ToolCall{ID: "cli", Name: toolName, Arguments: raw})
			if err != nil {
				return err
			}
			if res.IsError {
				return errors.New(res.Content)
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
			}
			fmt.Fprintln(cmd.OutOrStdout(), res.Content)
			return nil
		},
	}
	if toolName != tools.FetchURL {
		cmd.Flags().IntVarP(&n, "n", "n", 0, "how many results (default 5)")
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tool's result as JSON (content, untrusted, sources, data)")
	return cmd
}

// docsPath is the documentation index file: flag, else $LABMATE_DOCS_DB, else the default.
func docsPath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if p := os.Getenv("LABMATE_DOCS_DB"); p != "" {
		return p, nil
	}
	return sqlite.DefaultPath()
}

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
  labmate docs index --python numpy scipy
  labmate docs index ~/manuals ./README.md`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !withOctave && len(pyModules) == 0 && len(args) == 0 {
				return errors.New("docs index: name PATH…, --octave or --python MODULE…")
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
				docs, err := harvest.Octave(ctx, &harvest.OctaveOptions{Sandbox: sb, Binary: octave.Binary})
				if err != nil {
					return err
				}
				if err := add("octave", "octave:", start, docs, 0); err != nil {
					return err
				}
			}
			if len(pyModules) > 0 {
				start := time.Now()
				docs, err := harvest.Python(ctx, pyModules, &harvest.PythonOptions{Sandbox: sb, Binary: python.Binary})
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
					return fmt.Errorf("docs index: %w", err)
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
	cmd.Flags().StringSliceVar(&pyModules, "python", nil, "index the docstrings of these installed Python modules and their public submodules")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was indexed as JSON")
	sf.add(cmd)
	return cmd
}

func newDocsSearchCmd(open func(context.Context) (*sqlite.Index, error)) *cobra.Command {
	var (
		n      int
		source string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "search QUERY",
		Short:   "Search the documentation index; every hit cites file, heading and lines",
		Example: `  labmate docs search "integrate a stiff ODE" -n 3`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ix, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer ix.Close()
			if chunks, _, err := ix.Stats(cmd.Context()); err != nil {
				return err
			} else if chunks == 0 {
				return errors.New("docs search: the index is empty: run labmate docs index --octave, or labmate docs index PATH")
			}
			hits, err := ix.Search(cmd.Context(), &knowledge.Query{Text: strings.Join(args, " "), Limit: n, Source: source})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if hits == nil {
					hits = []knowledge.Hit{}
				}
				return json.NewEncoder(out).Encode(hits)
			}
			if len(hits) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no matches")
				return exitError{1}
			}
			for i, h := range hits {
				fmt.Fprintf(out, "%d. %s\n", i+1, h.Cite())
				if h.Summary != "" {
					fmt.Fprintf(out, "   %s\n", h.Summary)
				}
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&n, "n", "n", 10, "how many hits")
	cmd.Flags().StringVar(&source, "source", "", "only sources starting with this (octave:, python:numpy, a folder)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the hits as JSON (source, heading, lines, text, score)")
	return cmd
}
