// Package optimize chooses experiments over a categorical space: an Optimizer is asked for the
// next point and told what it measured. Implementations: random (uniform picks without repeats)
// and bayes (a Gaussian process with an acquisition function).
//
// A point is one level index per variable, in Space order. A measurement of NaN means the point
// was run but measured nothing (a failed run, a missing well): it is never proposed again.
//
// Optimizers enumerate the space's points, so a space may hold at most MaxPoints of them; New
// of each implementation refuses a larger one (see Space.Bounded).
package optimize

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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

// MaxPoints bounds the points of a space an optimizer accepts: each holds every point (and
// bayes a prediction per point) in memory.
const MaxPoints = 100_000

// ErrTooLarge: the space has more than MaxPoints points.
var ErrTooLarge = errors.New("optimize: space too large")

// Size is the number of feasible points; math.MaxInt when the product of the levels overflows.
func (s *Space) Size() int {
	if s.Points != nil {
		return len(s.Points)
	}
	n := 1
	for _, l := range s.Levels {
		if len(l) != 0 && n > math.MaxInt/len(l) {
			return math.MaxInt
		}
		n *= len(l)
	}
	return n
}

// Bounded returns ErrTooLarge, saying how large, when the space has more than MaxPoints points.
func (s *Space) Bounded() error {
	if n := s.Size(); n > MaxPoints {
		size := fmt.Sprint(n)
		if n == math.MaxInt {
			size = "more than 2⁶³"
		}
		return fmt.Errorf("%w: %s points; at most %d are allowed", ErrTooLarge, size, MaxPoints)
	}
	return nil
}

// All returns the feasible points in a fixed order. It enumerates the product of the levels
// when Points is nil: call Bounded first.
func (s *Space) All() [][]int {
	if s.Points != nil {
		return s.Points
	}
	n := s.Size()
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

// Key is a compact map key for a point, distinct for distinct points of the same length.
func Key(x []int) string {
	b := make([]byte, 0, len(x)+len(x)/2)
	for _, v := range x {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return string(b)
}
