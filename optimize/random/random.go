// Package random is the baseline optimizer: uniform picks without repeats.
package random

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/labmate/labmate/optimize"
)

// Random picks the points of a space in a seeded random order, skipping those already told.
type Random struct {
	space *optimize.Space
	order [][]int
	next  int
	told  map[string]bool
}

// New returns a Random over s, reproducible with seed. A space of more than
// optimize.MaxPoints points is refused.
func New(s *optimize.Space, seed uint64) (*Random, error) {
	if err := s.Bounded(); err != nil {
		return nil, fmt.Errorf("random: %w", err)
	}
	all := s.All()
	order := make([][]int, len(all))
	copy(order, all)
	r := rand.New(rand.NewPCG(seed, 0x6c61626d617465))
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return &Random{space: s, order: order, told: map[string]bool{}}, nil
}

// Ask returns the next untried point of the random order.
func (r *Random) Ask(ctx context.Context) ([]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for r.next < len(r.order) && r.told[optimize.Key(r.order[r.next])] {
		r.next++
	}
	if r.next == len(r.order) {
		return nil, optimize.ErrExhausted
	}
	return r.order[r.next], nil
}

// Tell marks x as tried.
func (r *Random) Tell(x []int, y float64) error {
	if err := r.space.Check(x); err != nil {
		return fmt.Errorf("random: tell: %w", err)
	}
	r.told[optimize.Key(x)] = true
	return nil
}
