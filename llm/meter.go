package llm

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
)

// ModuleUsage is what one module (Request.Module) spent.
type ModuleUsage struct {
	Module string `json:"module"`
	Calls  int    `json:"calls"`
	Usage
}

// Meter wraps a Model, counts usage per module and refuses calls once the token budget is spent.
// The budget is checked before each call; a call that starts under budget runs to completion, so
// a run can overshoot by at most one answer.
type Meter struct {
	Model
	budget int64 // 0: unlimited

	mu    sync.Mutex
	usage map[string]*ModuleUsage
	total Usage
}

// NewMeter meters m with a budget of total tokens (0 for none).
func NewMeter(m Model, budget int64) *Meter {
	return &Meter{Model: m, budget: budget, usage: map[string]*ModuleUsage{}}
}

// Stream implements Model.
func (m *Meter) Stream(ctx context.Context, req *Request) iter.Seq2[*Chunk, error] {
	return func(yield func(*Chunk, error) bool) {
		if spent := m.Total().Total(); m.budget > 0 && spent >= m.budget {
			yield(nil, fmt.Errorf("%w: %d of %d tokens spent", ErrBudget, spent, m.budget))
			return
		}
		for c, err := range m.Model.Stream(ctx, req) {
			if c != nil && c.Response != nil {
				m.add(req.Module, c.Response.Usage)
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

func (m *Meter) add(module string, u Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mu := m.usage[module]
	if mu == nil {
		mu = &ModuleUsage{Module: module}
		m.usage[module] = mu
	}
	mu.Calls++
	mu.Usage = mu.Usage.Add(u)
	m.total = m.total.Add(u)
}

// Total is everything spent so far.
func (m *Meter) Total() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}

// Remaining is the budget left, or -1 when there is no budget.
func (m *Meter) Remaining() int64 {
	if m.budget == 0 {
		return -1
	}
	return max(0, m.budget-m.Total().Total())
}

// Modules is the usage of each module, sorted by module name.
func (m *Meter) Modules() []ModuleUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ModuleUsage, 0, len(m.usage))
	for _, k := range slices.Sorted(maps.Keys(m.usage)) {
		out = append(out, *m.usage[k])
	}
	return out
}
