package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/consolidate"
	"github.com/labmate/labmate/memory/folder"
	"github.com/labmate/labmate/memory/postgres"
	"github.com/labmate/labmate/memory/skillmd"
	"github.com/labmate/labmate/memory/sqlite"
)

// memoryFlags are the flags every memory command shares.
type memoryFlags struct {
	store    string
	asJSON   bool
	embedder string
}

func defaultMemoryStore() string {
	if v := os.Getenv("LABMATE_MEMORY"); v != "" {
		return v
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "labmate", "memory.db")
	}
	return "memory.db"
}

// open opens the store named by --store: a postgres:// URL or a SQLite file path. With an
// embedder configured (--embedder, LABMATE_EMBEDDER or "embedder:" in the config file),
// entries are embedded and search is hybrid.
func (f *memoryFlags) open(ctx context.Context) (memory.Store, error) {
	var emb memory.Embedder
	e, err := optionalEmbedder(ctx, f.embedder)
	if err != nil {
		return nil, err
	}
	if e != nil {
		emb = e
	}
	if strings.HasPrefix(f.store, "postgres://") || strings.HasPrefix(f.store, "postgresql://") {
		return postgres.Open(ctx, f.store, &postgres.Options{Embedder: emb})
	}
	if err := os.MkdirAll(filepath.Dir(f.store), 0o700); err != nil {
		return nil, fmt.Errorf("memory store %s: %w", f.store, err)
	}
	return sqlite.Open(ctx, f.store, &sqlite.Options{Embedder: emb})
}

func (f *memoryFlags) json(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func actorName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "user:" + u.Username
	}
	return "user"
}

func newMemoryCmd() *cobra.Command {
	f := &memoryFlags{}
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Facts and skills that outlive the model: add, search, show, history, list, export, import, sync, freeze",
		Long: `labmate memory keeps facts (observations, warnings, failure boundaries, parameter choices,
reference values) and skills (procedures, as Agent Skills SKILL.md files), namespaced,
provenance-linked and never silently lost: a fact that stops being true is invalidated and
kept, and every change is in the history.

The store is a SQLite file (default ~/.local/share/labmate/memory.db) or a PostgreSQL
database shared by a team (--store postgres://…); $LABMATE_MEMORY sets the default.
Every command prints a readable table, or JSON with --json.`,
	}
	cmd.PersistentFlags().StringVar(&f.store, "store", defaultMemoryStore(), "memory store: a SQLite file path or a postgres:// URL (env LABMATE_MEMORY)")
	cmd.PersistentFlags().BoolVar(&f.asJSON, "json", false, "print JSON")
	cmd.PersistentFlags().StringVar(&f.embedder, "embedder", "", "embedding model PROVIDER:MODEL for hybrid search (default LABMATE_EMBEDDER, then the config file; none: BM25 only)")
	cmd.AddCommand(newMemoryAddCmd(f), newMemorySearchCmd(f), newMemoryShowCmd(f), newMemoryHistoryCmd(f),
		newMemoryListCmd(f), newMemoryExportCmd(f), newMemoryImportCmd(f), newMemorySyncCmd(f), newMemoryFreezeCmd(f))
	return cmd
}

// withStore opens the store, runs fn and closes it.
func (f *memoryFlags) with(cmd *cobra.Command, fn func(ctx context.Context, s memory.Store) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	err = fn(ctx, s)
	return errors.Join(err, s.Close())
}

// filterFlags are the Query filters of search and list.
type filterFlags struct {
	namespaces, kinds, tags, status []string
	since, until                    string
	limit                           int
}

func (q *filterFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringSliceVarP(&q.namespaces, "namespace", "n", nil, "only these namespaces (and their children); repeatable")
	cmd.Flags().StringSliceVar(&q.kinds, "kind", nil, "only these kinds: observation, warning, boundary, parameter, reference, skill")
	cmd.Flags().StringSliceVar(&q.tags, "tag", nil, "only entries with every one of these tags")
	cmd.Flags().StringSliceVar(&q.status, "status", nil, "only these statuses: active (default), invalidated, superseded, or all")
	cmd.Flags().StringVar(&q.since, "since", "", "only entries updated at or after this time (RFC 3339 or YYYY-MM-DD)")
	cmd.Flags().StringVar(&q.until, "until", "", "only entries updated before this time (RFC 3339 or YYYY-MM-DD)")
}

func parseWhen(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time or YYYY-MM-DD", flag, v)
}

func (q *filterFlags) query(text string) (*memory.Query, error) {
	out := &memory.Query{Text: text, Namespaces: q.namespaces, Tags: q.tags, Limit: q.limit}
	for _, k := range q.kinds {
		kind := memory.Kind(k)
		if kind != memory.KindSkill && !containsKind(memory.FactKinds, kind) {
			return nil, fmt.Errorf("--kind %q: want observation, warning, boundary, parameter, reference or skill", k)
		}
		out.Kinds = append(out.Kinds, kind)
	}
	for _, st := range q.status {
		switch memory.Status(st) {
		case memory.StatusActive, memory.StatusInvalidated, memory.StatusSuperseded:
			out.Status = append(out.Status, memory.Status(st))
		case "all":
			out.Status = []memory.Status{memory.StatusActive, memory.StatusInvalidated, memory.StatusSuperseded}
		default:
			return nil, fmt.Errorf("--status %q: want active, invalidated, superseded or all", st)
		}
	}
	var err error
	if out.Since, err = parseWhen("since", q.since); err != nil {
		return nil, err
	}
	if out.Until, err = parseWhen("until", q.until); err != nil {
		return nil, err
	}
	return out, nil
}

func containsKind(ks []memory.Kind, k memory.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

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
				var b []byte
				var err error
				if trace == "-" {
					b, err = io.ReadAll(cmd.InOrStdin())
				} else {
					b, err = os.ReadFile(trace)
				}
				if err != nil {
					return fmt.Errorf("--trace: %w", err)
				}
				m, err := newModel(cmd.Context(), modelSpec)
				if err != nil {
					return err
				}
				in.Infer, in.Trace, in.Actor, opts.Model = true, string(b), "", m
				in.Provenance = memory.Provenance{Source: source, Operations: ops}
				if trace != "-" {
					in.Provenance.Source = orStr(source, trace)
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
						return f.json(cmd.OutOrStdout(), rep)
					}
					tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "EVENT\tID\tTEXT\tREASON")
					for _, a := range rep.Actions {
						text := a.Text
						if text == "" {
							text = a.Old
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Event, a.ID, truncate(text, 60), truncate(a.Reason, 50))
					}
					return tw.Flush()
				}
				a := rep.Actions[0]
				if f.asJSON {
					e, err := s.Get(ctx, &memory.GetParams{ID: a.ID})
					if err != nil {
						return err
					}
					return f.json(cmd.OutOrStdout(), map[string]any{"action": a.Event, "fact": e.Fact})
				}
				if a.Event == memory.EventMerge {
					fmt.Fprintf(cmd.OutOrStdout(), "merged into %s: %s\n", a.ID, firstLineOf(a.Old))
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
	cmd.Flags().StringVar(&modelSpec, "model", "", "model PROVIDER:MODEL for --trace (default LABMATE_MODEL, then the config file)")
	return cmd
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func printResults(w io.Writer, res []*memory.Result, scored bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if scored {
		fmt.Fprintln(tw, "RANK\tSCORE\tKIND\tNAMESPACE\tID\tTEXT")
	} else {
		fmt.Fprintln(tw, "KIND\tSTATUS\tNAMESPACE\tID\tUPDATED\tTEXT")
	}
	for _, r := range res {
		kind, status, ns, text, updated := "", memory.Status(""), "", "", time.Time{}
		if sk := r.Skill; sk != nil {
			kind, status, ns, text, updated = "skill", sk.Status, sk.Namespace, sk.Name+": "+sk.Description, sk.UpdatedAt
		} else {
			fa := r.Fact
			kind, status, ns, text, updated = string(fa.Kind), fa.Status, fa.Namespace, fa.Text, fa.UpdatedAt
		}
		if scored {
			fmt.Fprintf(tw, "%d\t%.3g\t%s\t%s\t%s\t%s\n", r.Rank, r.Score, kind, ns, r.ID(), truncate(text, 80))
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", kind, status, ns, r.ID(), updated.Local().Format("2006-01-02 15:04"), truncate(text, 70))
		}
	}
	tw.Flush()
}

func collectResults(ctx context.Context, s memory.Store, q *memory.Query) ([]*memory.Result, error) {
	res := []*memory.Result{}
	for r, err := range s.Search(ctx, q) {
		if err != nil {
			return nil, err
		}
		res = append(res, r)
	}
	return res, nil
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
				res, err := collectResults(ctx, s, query)
				if err != nil {
					return err
				}
				if f.asJSON {
					return f.json(cmd.OutOrStdout(), res)
				}
				if len(res) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "nothing found")
					return nil
				}
				printResults(cmd.OutOrStdout(), res, true)
				return nil
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
						return f.json(cmd.OutOrStdout(), nss)
					}
					tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "NAMESPACE\tFACTS\tSKILLS\tENTRIES\tFROZEN")
					for _, n := range nss {
						frozen := ""
						if n.Frozen {
							frozen = "frozen"
						}
						fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", n.Name, n.Facts, n.Skills, n.Entries, frozen)
					}
					return tw.Flush()
				}
				res, err := collectResults(ctx, s, query)
				if err != nil {
					return err
				}
				if f.asJSON {
					return f.json(cmd.OutOrStdout(), res)
				}
				printResults(cmd.OutOrStdout(), res, false)
				return nil
			})
		},
	}
	q.add(cmd)
	cmd.Flags().IntVar(&q.limit, "limit", 0, "at most this many entries (0: all)")
	cmd.Flags().BoolVar(&namespaces, "namespaces", false, "list the namespaces with their counts and whether they are frozen")
	return cmd
}

func newMemoryShowCmd(f *memoryFlags) *cobra.Command {
	var ns string
	cmd := &cobra.Command{
		Use:   "show ID | SKILL-NAME",
		Short: "Show one fact or skill in full (a skill by id, or by name with --namespace)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				e, err := s.Get(ctx, &memory.GetParams{ID: args[0]})
				if errors.Is(err, memory.ErrNotFound) && ns != "" {
					e, err = s.Get(ctx, &memory.GetParams{Namespace: ns, Name: args[0]})
				}
				if err != nil {
					return err
				}
				if f.asJSON {
					return f.json(cmd.OutOrStdout(), e)
				}
				var b []byte
				if e.Skill != nil {
					b, err = skillmd.Encode(e.Skill)
				} else {
					b, err = folder.EncodeFact(e.Fact)
				}
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(b)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&ns, "namespace", "n", "", "look a skill up by name in this namespace")
	return cmd
}

func newMemoryHistoryCmd(f *memoryFlags) *cobra.Command {
	var ns string
	var limit int
	cmd := &cobra.Command{
		Use:   "history [ID]",
		Short: "Show the history of an entry, a namespace, or everything: old and new text, event, actor, time",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := &memory.HistoryParams{Namespace: ns, Limit: limit}
			if len(args) == 1 {
				p.EntryID = args[0]
			}
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				if p.EntryID != "" {
					if _, err := s.Get(ctx, &memory.GetParams{ID: p.EntryID}); err != nil {
						return err
					}
				}
				changes := []*memory.Change{}
				for c, err := range s.History(ctx, p) {
					if err != nil {
						return err
					}
					changes = append(changes, c)
				}
				if f.asJSON {
					return f.json(cmd.OutOrStdout(), changes)
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SEQ\tTIME\tEVENT\tACTOR\tNAMESPACE\tENTRY\tCHANGE")
				for _, c := range changes {
					change := truncate(c.New, 50)
					switch {
					case c.Old != "" && c.New != "":
						change = truncate(c.Old, 30) + " → " + truncate(c.New, 30)
					case c.Old != "":
						change = truncate(c.Old, 50)
					}
					if c.Reason != "" {
						change += " (" + truncate(c.Reason, 40) + ")"
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Seq, c.Time.Local().Format("2006-01-02 15:04:05"), c.Event, c.Actor, c.Namespace, c.EntryID, change)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVarP(&ns, "namespace", "n", "", "only this namespace (and its children)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many changes (0: all)")
	return cmd
}

func newMemoryExportCmd(f *memoryFlags) *cobra.Command {
	var nss []string
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write every entry to DIR/facts/ID.md and DIR/skills/NAME/SKILL.md (replacing those folders)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				res, err := folder.Export(ctx, s, args[0], &folder.ExportOptions{Namespaces: nss})
				if err != nil {
					return err
				}
				if f.asJSON {
					return f.json(cmd.OutOrStdout(), res)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "exported %d facts and %d skills to %s\n", res.Facts, res.Skills, args[0])
				return nil
			})
		},
	}
	cmd.Flags().StringSliceVarP(&nss, "namespace", "n", nil, "only these namespaces (and their children)")
	return cmd
}

func newMemoryImportCmd(f *memoryFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "import DIR",
		Short: "Read a folder written by export back, all or nothing (every file is checked first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				res, err := folder.Import(ctx, s, args[0], actorName())
				if err != nil {
					return err
				}
				if f.asJSON {
					return f.json(cmd.OutOrStdout(), res)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "imported %d facts and %d skills from %s\n", res.Facts, res.Skills, args[0])
				return nil
			})
		},
	}
}

func newMemorySyncCmd(f *memoryFlags) *cobra.Command {
	var ns string
	cmd := &cobra.Command{
		Use:   "sync DIR",
		Short: "Store every hand-written DIR/NAME/SKILL.md in the skills namespace (new, new version, or unchanged)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				res, err := skillmd.Sync(ctx, s, args[0], ns, actorName())
				if err != nil {
					return err
				}
				if f.asJSON {
					return f.json(cmd.OutOrStdout(), map[string]any{"created": res.Created, "updated": res.Updated, "unchanged": res.Unchanged, "skills": res.Skills})
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SKILL\tVERSION\tUSES\tSUCCESSES\tID")
				for _, sk := range res.Skills {
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", sk.Name, sk.Version, sk.Uses, sk.Successes, sk.ID)
				}
				tw.Flush()
				fmt.Fprintf(cmd.ErrOrStderr(), "%d new, %d updated, %d unchanged in %s\n", res.Created, res.Updated, res.Unchanged, ns)
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&ns, "namespace", "n", "user/skills", "the skills namespace")
	return cmd
}

func newMemoryFreezeCmd(f *memoryFlags) *cobra.Command {
	var unfreeze bool
	cmd := &cobra.Command{
		Use:   "freeze NAMESPACE",
		Short: "Make a namespace (and its children) read-only, e.g. memory written by a stronger model; --unfreeze undoes it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				if err := s.Freeze(ctx, &memory.FreezeParams{Namespace: args[0], Frozen: !unfreeze, Actor: actorName()}); err != nil {
					return err
				}
				if f.asJSON {
					return f.json(cmd.OutOrStdout(), map[string]any{"namespace": args[0], "frozen": !unfreeze})
				}
				state := "frozen (read-only)"
				if unfreeze {
					state = "writable"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s is %s\n", args[0], state)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&unfreeze, "unfreeze", false, "make the namespace writable again")
	return cmd
}
