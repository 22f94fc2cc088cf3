package optimize_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/labmate/labmate/optimize"
)

// Key tells apart points whose levels differ by 256 (it once kept one byte per level).
func TestKeyIsDistinct(t *testing.T) {
	seen := map[string][]int{}
	for a := range 600 {
		for b := range 3 {
			x := []int{a, b}
			k := optimize.Key(x)
			if y, dup := seen[k]; dup {
				t.Fatalf("Key(%v) == Key(%v)", x, y)
			}
			seen[k] = x
		}
	}
}

func TestSizeAndBounded(t *testing.T) {
	big := make([]string, 1<<16)
	for _, c := range []struct {
		levels []int
		size   int
		want   string // in Bounded's error; "" for none
	}{
		{[]int{12, 8, 4}, 384, ""},
		{[]int{1000, 100}, optimize.MaxPoints, ""},
		{[]int{1000, 101}, 101000, "101000 points; at most 100000"},
		{[]int{1 << 16, 1 << 16, 1 << 16, 1 << 16}, math.MaxInt, "more than 2⁶³ points"}, // 2⁶⁴ overflows int
	} {
		s := &optimize.Space{}
		for _, n := range c.levels {
			s.Names = append(s.Names, "v")
			s.Levels = append(s.Levels, big[:n])
		}
		if got := s.Size(); got != c.size {
			t.Errorf("%v: Size %d, want %d", c.levels, got, c.size)
		}
		err := s.Bounded()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.levels, err)
		case c.want != "" && (!errors.Is(err, optimize.ErrTooLarge) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want ErrTooLarge saying %q", c.levels, err, c.want)
		}
	}
}
