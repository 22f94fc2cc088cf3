package runner

import (
	"context"

	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/consolidate"
	"github.com/labmate/labmate/memory/folder"
)

// MemorySearch is a memory search, with the arguments, defaults and limits of the memory
// tools' search_memory; MemoryHit is one of its results.
type (
	MemorySearch = learn.SearchMemoryIn
	MemoryHit    = learn.Hit
)

// SearchMemory searches the runner's memory as the memory tools' search_memory does.
func (s *Runner) SearchMemory(ctx context.Context, in *MemorySearch) ([]MemoryHit, error) {
	return learn.Search(ctx, s.cfg.Memory, in, nil)
}

// ExportMemory writes the runner's memory into dir as labmate memory export does (facts/ID.md,
// skills/NAME/SKILL.md): namespace ns and its children, or all of it when ns is "".
func (s *Runner) ExportMemory(ctx context.Context, dir, ns string) error {
	var opts *folder.ExportOptions
	if ns != "" {
		opts = &folder.ExportOptions{Namespaces: []string{ns}}
	}
	_, err := folder.Export(ctx, s.cfg.Memory, dir, opts)
	return err
}

// AddFact adds f, as actor wrote it, to namespace ns through consolidation (the only way
// anything writes what it learned): an exact or near duplicate there is merged into the fact
// it repeats. It returns the stored fact's id and what happened (memory.EventAdd or
// memory.EventMerge).
func (s *Runner) AddFact(ctx context.Context, ns, actor string, f *memory.Fact) (id string, event memory.Event, err error) {
	rep, err := consolidate.Consolidate(ctx, s.cfg.Memory, &consolidate.Input{Namespace: ns, Facts: []*memory.Fact{f}, Actor: actor}, nil)
	if err != nil {
		return "", "", err
	}
	a := rep.Actions[0]
	return a.ID, a.Event, nil
}
