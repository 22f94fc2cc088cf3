package job

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kind is the scheduler a job id names: the part before its first "-" ("local", "slurm").
func Kind(id ID) string {
	k, _, _ := strings.Cut(string(id), "-")
	return k
}

// Schedulers are the schedulers a caller reaches, by kind ("local", "slurm"): a job's id
// says which one holds it.
type Schedulers map[string]Scheduler

// For returns the scheduler that holds id. An id of no kind held here is an error wrapping
// ErrUnknownJob that names the kinds there are.
func (m Schedulers) For(id ID) (Scheduler, error) {
	if s, ok := m[Kind(id)]; ok && s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("%w: %q: job ids start with %s", ErrUnknownJob, id, strings.Join(m.Kinds(), "- or ")+"-")
}

// Kinds lists the kinds of the schedulers, sorted.
func (m Schedulers) Kinds() []string {
	return slices.Sorted(maps.Keys(m))
}

// List returns the jobs of every scheduler, oldest first.
func (m Schedulers) List(ctx context.Context) ([]*Status, error) {
	var all []*Status
	for _, k := range m.Kinds() {
		sts, err := m[k].List(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s jobs: %w", k, err)
		}
		all = append(all, sts...)
	}
	slices.SortStableFunc(all, func(a, b *Status) int { return a.Submitted.Compare(b.Submitted) })
	return all, nil
}
