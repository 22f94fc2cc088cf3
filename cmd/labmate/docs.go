package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/knowledge"
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
(--store, default ~/.local/share/labmate/docs.db or $LABMATE_DOCS_DB).

  labmate docs index PATH…            Markdown, HTML, PDF (needs pdftotext) and text files, folders walked
  labmate docs index --octave         the help of every function of the installed Octave and its packages
  labmate docs index --python numpy,scipy   the docstrings (what pydoc shows) of installed Python modules
  labmate docs search "QUERY" [--json] [--limit N]
  labmate docs web "QUERY" | papers "QUERY" | fetch URL   what the agent's web tools return

Files are cut along their headings; every hit cites its source, heading and line range. Ranking
is BM25 over SQLite FTS5 with the name, then the words it is written from ("fileread": file
read) and the first sentence, then heading and body, weighted in that order; with an embedder
(--embedder, LABMATE_EMBEDDER or "embedder:" in the config file) chunks are embedded too and
search fuses both rankings. Indexing a source again replaces what was indexed from it. An
index built by an earlier labmate whose schema changed is refused: delete it and index again.

Exit status: 0 done; 1 docs search found no match; 2 when it could not be done: a bad flag
or value, an empty index, a provider not configured, a page refused or unreachable.`,
	}
	cmd.PersistentFlags().StringVar(&db, "store", "", "the index file (default $LABMATE_DOCS_DB or ~/.local/share/labmate/docs.db)")
	alias(cmd.PersistentFlags(), "db", "", "store")
	cmd.PersistentFlags().StringVar(&embedder, "embedder", "", "embedding model PROVIDER:MODEL for hybrid search (default LABMATE_EMBEDDER, then the config file; none: BM25 only)")
	open := func(ctx context.Context) (*sqlite.Index, error) {
		path, err := docsPath(db)
		if err != nil {
			return nil, err
		}
		emb, err := providers.OptionalEmbedder(ctx, embedder, os.Stderr)
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
		cmd.Flags().IntVar(&n, "limit", 0, "how many results (default 5)")
		alias(cmd.Flags(), "n", "n", "limit")
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tool's result as JSON (content, untrusted, sources, data)")
	return cmd
}

// docsPath is the documentation index file: flag, else $LABMATE_DOCS_DB, else the default.
func docsPath(flag string) (string, error) {
	if p := cmp.Or(flag, os.Getenv("LABMATE_DOCS_DB")); p != "" {
		return p, nil
	}
	return sqlite.DefaultPath()
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
		Example: `  labmate docs search "integrate a stiff ODE" --limit 3`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return fmt.Errorf("docs search: --limit %d: ask for at least one hit", n)
			}
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
	cmd.Flags().IntVar(&n, "limit", 10, "how many hits")
	alias(cmd.Flags(), "n", "n", "limit")
	cmd.Flags().StringVar(&source, "source", "", "only sources starting with this (octave:, python:numpy, a folder)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the hits as JSON (source, heading, lines, text, score)")
	return cmd
}
