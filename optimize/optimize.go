// Package optimize chooses experiments over a categorical space: an Optimizer is asked for the
// next point and told what it measured. Implementations: random (uniform picks without repeats)
// and bayes (a Gaussian process with an acquisition function).
//
// A point is one level index per variable, in Space order. A measurement of NaN means the point
// was run but measured nothing (a failed run, a missing well): it is never proposed again.
package optimize

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrExhausted: every point of the space has been told.
var ErrExhausted = errors.New("optimize: every point of the space has been tried")

// ErrOutside: a point is not in the space.
var ErrOutside = errors.New("optimize: point outside the space")

// Space is a categorical space. Points, when set, lists the feasible points; nil means the full
// product of the levels.
type Space struct {
	Names  []string
	Levels [][]string
	Points [][]int
}

// All returns the feasible points in a fixed order.
func (s *Space) All() [][]int {
	if s.Points != nil {
		return s.Points
	}
	n := 1
	for _, l := range s.Levels {
		n *= len(l)
	}
	out := make([][]int, 0, n)
	cur := make([]int, len(s.Levels))
	for range n {
		out = append(out, slices.Clone(cur))
		for v := len(cur) - 1; v >= 0; v-- {
			cur[v]++
			if cur[v] < len(s.Levels[v]) {
				break
			}
			cur[v] = 0
		}
	}
	return out
}

// Check returns ErrOutside unless x is a feasible point.
func (s *Space) Check(x []int) error {
	if len(x) != len(s.Levels) {
		return fmt.Errorf("%w: %d coordinates for %d variables", ErrOutside, len(x), len(s.Levels))
	}
	for v, i := range x {
		if i < 0 || i >= len(s.Levels[v]) {
			return fmt.Errorf("%w: %s level %d of %d", ErrOutside, s.Names[v], i, len(s.Levels[v]))
		}
	}
	if s.Points != nil && !slices.ContainsFunc(s.Points, func(p []int) bool { return slices.Equal(p, x) }) {
		return fmt.Errorf("%w: %v is not feasible", ErrOutside, x)
	}
	return nil
}

// Optimizer proposes points and learns from their measurements (higher is better).
type Optimizer interface {
	// Ask returns the next point to try; it never returns a point already told, and returns
	// ErrExhausted when none is left.
	Ask(ctx context.Context) ([]int, error)
	// Tell reports y measured at x (NaN: nothing measured).
	Tell(x []int, y float64) error
}

// Observation is a measurement from a related task (another substrate), usable as a prior.
type Observation struct {
	Task string
	X    []int
	Y    float64
}

// Key is a compact map key for a point.
func Key(x []int) string {
	b := make([]byte, len(x))
	for i, v := range x {
		b[i] = byte(v)
	}
	return string(b)
}
