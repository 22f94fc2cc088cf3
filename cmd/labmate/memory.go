package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/llm/providers"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/postgres"
	"github.com/labmate/labmate/memory/sqlite"
)

// memoryFlags are the flags every memory command shares.
type memoryFlags struct {
	store    string
	asJSON   bool
	embedder string
}

// defaultMemoryStore is the memory labmate memory and labmate run use unless told: the one
// labmate serve and labmate mcp use in the default data directory (memoryPath), memory.db
// here when there is no home directory.
func defaultMemoryStore() string {
	dir, _ := defaultDataDir()
	return memoryPath(dir)
}

// open opens the store named by --store: a postgres:// URL or a SQLite file path. With an
// embedder configured (--embedder, LABMATE_EMBEDDER or "embedder:" in the config file),
// entries are embedded and search is hybrid.
func (f *memoryFlags) open(ctx context.Context) (memory.Store, error) {
	emb, err := providers.OptionalEmbedder(ctx, f.embedder, os.Stderr)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(f.store, "postgres://") || strings.HasPrefix(f.store, "postgresql://") {
		return postgres.Open(ctx, f.store, &postgres.Options{Embedder: emb})
	}
	if err := os.MkdirAll(filepath.Dir(f.store), 0o700); err != nil {
		return nil, fmt.Errorf("memory store %s: %w", f.store, err)
	}
	return sqlite.Open(ctx, f.store, &sqlite.Options{Embedder: emb})
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
		Short: "Facts and skills that outlive the model: add, search, show, history, list, export, import, sync, freeze, unfreeze",
		Long: `labmate memory keeps facts (observations, warnings, failure boundaries, parameter choices,
reference values) and skills (procedures, as Agent Skills SKILL.md files), namespaced,
provenance-linked and never silently lost: a fact that stops being true is invalidated and
kept, and every change is in the history.

The store is a SQLite file (default ~/.local/share/labmate/memory.db) or a PostgreSQL
database shared by a team (--store postgres://…); $LABMATE_MEMORY sets the default.
Every command prints a readable table, or JSON with --json.

Exit status: 0 done; 1 memory search found no match (as docs search); 2 when it could
not be done: a bad flag or value, an unknown id, a frozen namespace, a store it cannot open.`,
	}
	cmd.PersistentFlags().StringVar(&f.store, "store", defaultMemoryStore(), "memory store: a SQLite file path or a postgres:// URL (env LABMATE_MEMORY)")
	cmd.PersistentFlags().BoolVar(&f.asJSON, "json", false, "print JSON")
	cmd.PersistentFlags().StringVar(&f.embedder, "embedder", "", "embedding model PROVIDER:MODEL for hybrid search (default LABMATE_EMBEDDER, then the config file; none: BM25 only)")
	cmd.AddCommand(newMemoryAddCmd(f), newMemorySearchCmd(f), newMemoryShowCmd(f), newMemoryHistoryCmd(f),
		newMemoryListCmd(f), newMemoryExportCmd(f), newMemoryImportCmd(f), newMemorySyncCmd(f), newMemoryFreezeCmd(f), newMemoryUnfreezeCmd(f))
	return cmd
}

// with opens the store, runs fn and closes it.
func (f *memoryFlags) with(cmd *cobra.Command, fn func(ctx context.Context, s memory.Store) error) error {
	ctx := cmd.Context()
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
		if kind != memory.KindSkill && !slices.Contains(memory.FactKinds, kind) {
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
