// Package optimizetest is the suite every optimize.Optimizer passes: it never proposes a point
// twice or outside the space's feasible points (failed runs included), it covers the whole
// space and then says ErrExhausted, it refuses to be told a point outside the space, it is
// reproducible with a seed, and it refuses a space of more than optimize.MaxPoints points
// without enumerating it.
package optimizetest

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/labmate/labmate/optimize"
)

// New builds the optimizer under test over s with a seed.
type New func(s *optimize.Space, seed uint64) (optimize.Optimizer, error)

// Run runs the suite.
func Run(t *testing.T, newOpt New) {
	t.Run("CoversTheSpaceOnce", func(t *testing.T) {
		s := space()
		s.Points = slices.DeleteFunc(s.All(), func(p []int) bool { return (p[0]+2*p[1]+p[2])%3 == 0 }) // missing wells
		o, err := newOpt(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i := 0; ; i++ {
			x, err := o.Ask(context.Background())
			if errors.Is(err, optimize.ErrExhausted) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Check(x); err != nil {
				t.Fatalf("ask %d: %v", i+1, err)
			}
			if seen[optimize.Key(x)] {
				t.Fatalf("ask %d: %v again", i+1, x)
			}
			seen[optimize.Key(x)] = true
			y := yield(x)
			if i%5 == 4 {
				y = math.NaN() // a failed run
			}
			if err := o.Tell(x, y); err != nil {
				t.Fatal(err)
			}
		}
		if len(seen) != len(s.Points) {
			t.Errorf("exhausted after %d of %d points", len(seen), len(s.Points))
		}
	})
	t.Run("RefusesOutside", func(t *testing.T) {
		o, err := newOpt(space(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Tell([]int{0, 9, 0}, 1); !errors.Is(err, optimize.ErrOutside) {
			t.Errorf("Tell outside: %v, want ErrOutside", err)
		}
	})
	t.Run("RefusesAHugeSpace", func(t *testing.T) {
		levels := make([]string, 1<<16)
		for _, vars := range []int{3, 4} { // 2⁴⁸ points; 2⁶⁴, which overflows int
			s := &optimize.Space{}
			for v := range vars {
				s.Names = append(s.Names, string(rune('a'+v)))
				s.Levels = append(s.Levels, levels)
			}
			if _, err := newOpt(s, 1); !errors.Is(err, optimize.ErrTooLarge) {
				t.Errorf("%d variables of 2¹⁶ levels: %v, want ErrTooLarge", vars, err)
			}
		}
	})
	t.Run("ReproducibleWithASeed", func(t *testing.T) {
		play := func(seed uint64) [][]int {
			o, err := newOpt(space(), seed)
			if err != nil {
				t.Fatal(err)
			}
			var xs [][]int
			for range 10 {
				x, err := o.Ask(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				xs = append(xs, slices.Clone(x))
				if err := o.Tell(x, yield(x)); err != nil {
					t.Fatal(err)
				}
			}
			return xs
		}
		if a, b := play(3), play(3); !slices.EqualFunc(a, b, slices.Equal) {
			t.Errorf("seed 3 twice:\n%v\n%v", a, b)
		}
	})
}

func space() *optimize.Space {
	return &optimize.Space{Names: []string{"a", "b", "c"}, Levels: [][]string{{"1", "2", "3", "4"}, {"x", "y", "z"}, {"p", "q"}}}
}

func yield(x []int) float64 { return float64(10*x[0]+3*x[1]) + 5*float64(x[0]*x[2]) }
