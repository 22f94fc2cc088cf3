package random_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/labmate/labmate/optimize"
	"github.com/labmate/labmate/optimize/optimizetest"
	"github.com/labmate/labmate/optimize/random"
)

func TestRandomCoversTheSpaceOnce(t *testing.T) {
	s := &optimize.Space{Names: []string{"a", "b"}, Levels: [][]string{{"1", "2", "3"}, {"x", "y"}}}
	s.Points = s.All()[1:] // one missing well
	r, err := random.New(s, 4)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var order [][]int
	for {
		x, err := r.Ask(context.Background())
		if errors.Is(err, optimize.ErrExhausted) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if seen[optimize.Key(x)] || s.Check(x) != nil {
			t.Fatalf("repeat or outside: %v", x)
		}
		seen[optimize.Key(x)] = true
		order = append(order, x)
		if err := r.Tell(x, 1); err != nil {
			t.Fatal(err)
		}
	}
	if len(order) != 5 {
		t.Fatalf("%d points, want 5", len(order))
	}
	again, err := random.New(s, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range order {
		y, _ := again.Ask(context.Background())
		if !slices.Equal(x, y) {
			t.Fatal("same seed, different order")
		}
		again.Tell(y, 0)
	}
}

func TestSpaceAll(t *testing.T) {
	s := &optimize.Space{Names: []string{"a", "b"}, Levels: [][]string{{"1", "2"}, {"x", "y", "z"}}}
	want := [][]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}
	if got := s.All(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("All = %v", got)
	}
	if err := s.Check([]int{1, 3}); !errors.Is(err, optimize.ErrOutside) {
		t.Errorf("Check: %v", err)
	}
}

func TestSuite(t *testing.T) {
	optimizetest.Run(t, func(s *optimize.Space, seed uint64) (optimize.Optimizer, error) { return random.New(s, seed) })
}
