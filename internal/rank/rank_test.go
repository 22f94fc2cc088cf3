package rank

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFuse(t *testing.T) {
	got := Fuse(60, []string{"a", "b", "c"}, []string{"c", "a"})
	ids := make([]string, len(got))
	for i, s := range got {
		ids[i] = s.ID
	}
	// a: 1/61+1/62, c: 1/63+1/61, b: 1/62.
	if diff := cmp.Diff([]string{"a", "c", "b"}, ids); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if want := 1.0/61 + 1.0/62; math.Abs(got[0].Score-want) > 1e-12 {
		t.Errorf("score of a = %v; want %v", got[0].Score, want)
	}
	if len(Fuse(60)) != 0 {
		t.Error("fusing nothing gave results")
	}
}

func TestCosine(t *testing.T) {
	for _, tt := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 2}, 0},
		{[]float32{1, 1}, []float32{-1, -1}, -1},
		{[]float32{0, 0}, []float32{1, 1}, 0},
	} {
		if got := Cosine(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Cosine(%v, %v) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestJaccard(t *testing.T) {
	set := func(ws ...string) map[string]bool {
		m := map[string]bool{}
		for _, w := range ws {
			m[w] = true
		}
		return m
	}
	for _, tt := range []struct {
		x, y map[string]bool
		want float64
	}{
		{set(), set(), 1},
		{set("a"), set(), 0},
		{set("a", "b"), set("b", "c"), 1.0 / 3},
		{set("a", "b"), set("b", "a"), 1},
	} {
		if got := Jaccard(tt.x, tt.y); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}
