package main

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/llm/providers"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/consolidate"
	memtable "github.com/labmate/labmate/memory/table"
)

func newMemoryAddCmd(f *memoryFlags) *cobra.Command {
	var (
		ns, kind, source    string
		tags, evidence, ops []string
		confidence          float64
		trace, modelSpec    string
	)
	cmd := &cobra.Command{
		Use:   "add TEXT | --trace FILE",
		Short: "Add a fact as written, or the facts a model extracts from a trace (--trace)",
		Long: `Add a fact as written: an exact or near duplicate in the namespace is merged into the
existing fact instead.

With --trace FILE (- for stdin), a model (--model, else LABMATE_MODEL, else the config file)
extracts atomic facts from the trace, is shown the nearest existing facts under small integer
ids, and decides ADD, UPDATE, DELETE (invalidate, keeping the fact) or NOOP for each; every id
it returns is checked, a DELETE of a fact the trace still supports is refused, and an answer
that cannot be read writes nothing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (trace != "") {
				return fmt.Errorf("give either TEXT or --trace FILE")
			}
			in := &consolidate.Input{Namespace: ns, Actor: actorName()}
			opts := &consolidate.Options{}
			if trace != "" {
				b, err := readInput(cmd.InOrStdin(), trace)
				if err != nil {
					return fmt.Errorf("--trace: %w", err)
				}
				m, err := providers.NewModel(cmd.Context(), modelSpec)
				if err != nil {
					return err
				}
				in.Infer, in.Trace, in.Actor, opts.Model = true, string(b), "", m
				in.Provenance = memory.Provenance{Source: source, Operations: ops}
				if trace != "-" {
					in.Provenance.Source = cmp.Or(source, trace)
				}
			} else {
				in.Facts = []*memory.Fact{{Text: args[0], Kind: memory.Kind(kind), Tags: tags, Evidence: evidence, Confidence: confidence,
					Provenance: memory.Provenance{Source: source, Operations: ops}}}
			}
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				rep, err := consolidate.Consolidate(ctx, s, in, opts)
				if err != nil {
					return err
				}
				if in.Infer {
					if f.asJSON {
						return writeJSON(cmd.OutOrStdout(), rep)
					}
					return memtable.Actions(cmd.OutOrStdout(), rep.Actions)
				}
				a := rep.Actions[0]
				if f.asJSON {
					e, err := s.Get(ctx, &memory.GetParams{ID: a.ID})
					if err != nil {
						return err
					}
					return writeJSON(cmd.OutOrStdout(), map[string]any{"action": a.Event, "fact": e.Fact})
				}
				if a.Event == memory.EventMerge {
					old := textcut.FirstLine(a.Old)
					if old != a.Old {
						old += " …"
					}
					fmt.Fprintf(cmd.OutOrStdout(), "merged into %s: %s\n", a.ID, old)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "added %s\n", a.ID)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&ns, "namespace", "n", "user", "namespace")
	cmd.Flags().StringVar(&kind, "kind", "observation", "observation, warning, boundary, parameter or reference")
	cmd.Flags().StringSliceVar(&tags, "tag", nil, "tags (applicability: material, software, method…); repeatable")
	cmd.Flags().StringSliceVar(&evidence, "evidence", nil, "supporting evidence; repeatable")
	cmd.Flags().StringSliceVar(&ops, "operation", nil, "operation ids of the trace it came from; repeatable")
	cmd.Flags().StringVar(&source, "source", "", "where it came from (URL, file)")
	cmd.Flags().Float64Var(&confidence, "confidence", 0, "confidence in [0, 1]")
	cmd.Flags().StringVar(&trace, "trace", "", "extract facts from this trace file (- for stdin) with a model")
	cmd.Flags().StringVarP(&modelSpec, "model", "m", "", "model PROVIDER:MODEL for --trace (default LABMATE_MODEL, then the config file)")
	return cmd
}

// collect gathers the values of seq up to its first error; none is an empty slice (JSON []).
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func newMemorySearchCmd(f *memoryFlags) *cobra.Command {
	var q filterFlags
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search facts and skills (BM25 full text), best first, with scores",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query, err := q.query(strings.Join(args, " "))
			if err != nil {
				return err
			}
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				res, err := collect(s.Search(ctx, query))
				if err != nil {
					return err
				}
				if f.asJSON {
					return writeJSON(cmd.OutOrStdout(), res)
				}
				if len(res) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "no matches")
					return exitError{1}
				}
				return memtable.Results(cmd.OutOrStdout(), res, true)
			})
		},
	}
	q.add(cmd)
	cmd.Flags().IntVar(&q.limit, "limit", 10, "at most this many results")
	return cmd
}

func newMemoryListCmd(f *memoryFlags) *cobra.Command {
	var q filterFlags
	var namespaces bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List entries, newest first (or, with --namespaces, the namespaces)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			query, err := q.query("")
			if err != nil {
				return err
			}
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				if namespaces {
					nss, err := s.Namespaces(ctx)
					if err != nil {
						return err
					}
					if nss == nil {
						nss = []memory.Namespace{}
					}
					if f.asJSON {
						return writeJSON(cmd.OutOrStdout(), nss)
					}
					return memtable.Namespaces(cmd.OutOrStdout(), nss)
				}
				res, err := collect(s.Search(ctx, query))
				if err != nil {
					return err
				}
				if f.asJSON {
					return writeJSON(cmd.OutOrStdout(), res)
				}
				return memtable.Results(cmd.OutOrStdout(), res, false)
			})
		},
	}
	q.add(cmd)
	cmd.Flags().IntVar(&q.limit, "limit", 0, "at most this many entries (0: all)")
	cmd.Flags().BoolVar(&namespaces, "namespaces", false, "list the namespaces with their counts and whether they are frozen")
	return cmd
}
