package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/builtin"
	"github.com/labmate/labmate/memory/folder"
	"github.com/labmate/labmate/memory/skillmd"
	memtable "github.com/labmate/labmate/memory/table"
)

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
					return writeJSON(cmd.OutOrStdout(), e)
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
				changes, err := collect(s.History(ctx, p))
				if err != nil {
					return err
				}
				if f.asJSON {
					return writeJSON(cmd.OutOrStdout(), changes)
				}
				return memtable.History(cmd.OutOrStdout(), changes)
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
					return writeJSON(cmd.OutOrStdout(), res)
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
	var builtins bool
	cmd := &cobra.Command{
		Use:   "import DIR | --builtin",
		Short: "Read a folder written by export back, all or nothing (every file is checked first); --builtin: labmate's skill library",
		Long: `memory import DIR reads a folder written by memory export back, all or nothing: every file is
checked before anything is written.

memory import --builtin imports the skill library labmate ships (examples/skills: materials
workflows with their scripts' procedures, failure facts and published references, validated by
labmate eval workflows) into the read-only namespace ` + builtin.Namespace + `: new skills are
created, changed ones get a new version, and the namespace is frozen again. labmate run does
this on its first use of a memory store; the agent recalls these skills with the user's own,
and what the user's runs learn goes to the user's namespace, never into the library.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if builtins {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !builtins {
				if err := isFolder(args[0], "a folder labmate memory export wrote"); err != nil {
					return err
				}
			}
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				if builtins {
					res, err := builtin.Import(ctx, s, actorName())
					if err != nil {
						return err
					}
					if f.asJSON {
						return writeJSON(cmd.OutOrStdout(), res)
					}
					fmt.Fprintf(cmd.OutOrStdout(), "built-in skills in %s (frozen): %d created, %d updated, %d unchanged\n", builtin.Namespace, res.Created, res.Updated, res.Unchanged)
					return nil
				}
				res, err := folder.Import(ctx, s, args[0], actorName())
				if err != nil {
					return err
				}
				if f.asJSON {
					return writeJSON(cmd.OutOrStdout(), res)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "imported %d facts and %d skills from %s\n", res.Facts, res.Skills, args[0])
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&builtins, "builtin", false, "import labmate's built-in skill library into the frozen namespace "+builtin.Namespace)
	return cmd
}

func newMemorySyncCmd(f *memoryFlags) *cobra.Command {
	var ns string
	cmd := &cobra.Command{
		Use:   "sync DIR",
		Short: "Store every hand-written DIR/NAME/SKILL.md in the skills namespace (new, new version, or unchanged)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := isFolder(args[0], "a folder of NAME/SKILL.md folders"); err != nil {
				return err
			}
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				res, err := skillmd.Sync(ctx, s, args[0], ns, actorName())
				if err != nil {
					return err
				}
				if f.asJSON {
					return writeJSON(cmd.OutOrStdout(), map[string]any{"created": res.Created, "updated": res.Updated, "unchanged": res.Unchanged, "skills": res.Skills})
				}
				if err := memtable.Skills(cmd.OutOrStdout(), res.Skills); err != nil {
					return err
				}
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
		Short: "Make a namespace (and its children) read-only, e.g. memory written by a stronger model; unfreeze undoes it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.with(cmd, func(ctx context.Context, s memory.Store) error {
				if err := namespaceExists(ctx, s, args[0]); err != nil {
					return err
				}
				if err := s.Freeze(ctx, &memory.FreezeParams{Namespace: args[0], Frozen: !unfreeze, Actor: actorName()}); err != nil {
					return err
				}
				if f.asJSON {
					return writeJSON(cmd.OutOrStdout(), map[string]any{"namespace": args[0], "frozen": !unfreeze})
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
	cmd.Flags().MarkDeprecated("unfreeze", "write labmate memory unfreeze NAMESPACE instead")
	return cmd
}

// newMemoryUnfreezeCmd is freeze's inverse: the namespace becomes writable again.
func newMemoryUnfreezeCmd(f *memoryFlags) *cobra.Command {
	cmd := newMemoryFreezeCmd(f)
	cmd.Use, cmd.Short = "unfreeze NAMESPACE", "Make a frozen namespace (and its children) writable again"
	cmd.Flags().Set("unfreeze", "true")
	return cmd
}

// namespaceExists refuses a namespace that holds no entry, has no child namespace and was
// never frozen (a typo, say), naming those that exist.
func namespaceExists(ctx context.Context, s memory.Admin, ns string) error {
	nss, err := s.Namespaces(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, n := range nss {
		if n.Name == ns || strings.HasPrefix(n.Name, ns+"/") {
			return nil
		}
		names = append(names, n.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("no namespace %q: the memory holds no namespace yet (one exists once an entry is added to it)", ns)
	}
	return fmt.Errorf("no namespace %q (the namespaces: %s)", ns, strings.Join(names, ", "))
}

// isFolder refuses a path that is not a folder, saying what it is and what was expected.
func isFolder(path, want string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the folder %s does not exist (give %s)", path, want)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is a file, not a folder (give %s)", path, want)
	}
	return nil
}
