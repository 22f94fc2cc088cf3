package bayes

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	opt "github.com/labmate/labmate/optimize"
)

// wideSpace is a space of 1000 × 100 levels (optimize.MaxPoints points), every level described
// by a 50-vector.
func wideSpace() (*opt.Space, [][][]float64) {
	s := &opt.Space{Names: []string{"a", "b"}, Levels: [][]string{make([]string, 1000), make([]string, 100)}}
	r := rand.New(rand.NewPCG(1, 2))
	desc := make([][][]float64, 2)
	for v, l := range s.Levels {
		desc[v] = make([][]float64, len(l))
		for i := range desc[v] {
			desc[v][i] = make([]float64, 50)
			for k := range desc[v][i] {
				desc[v][i][k] = r.NormFloat64()
			}
		}
	}
	return s, desc
}

// The level tables hold a row per measured level, not L × L: after a few turns in a space with
// 1000 levels of one variable, only the measured levels' rows exist, and the model's memory is
// a few times that of the space's points.
func TestLevelTablesGrowWithTheMeasuredLevels(t *testing.T) {
	s, desc := wideSpace()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := New(s, &Options{Seed: 1, Descriptors: desc})
	if err != nil {
		t.Fatal(err)
	}
	measured := map[int]bool{}
	for range 8 {
		x, err := b.Ask(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		measured[x[0]] = true
		if err := b.Tell(x, float64(x[0]%7+x[1]%5)); err != nil {
			t.Fatal(err)
		}
	}
	rows := 0
	for _, r := range b.lv.dist[0] {
		if r != nil {
			rows++
		}
	}
	if rows > len(measured) {
		t.Errorf("%d distance rows for the %d measured levels of a 1000-level variable", rows, len(measured))
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// The points (opt.MaxPoints of them, with their keys) take about 15 MB; a 1000 × 1000
	// table of distances and one of products would add 16 MB, the similarity table of each fit
	// evaluation another 8.
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d distance rows; the model holds %.1f MB", rows, float64(grew)/(1<<20))
	if grew > 40<<20 {
		t.Errorf("the model holds %d MB", grew>>20)
	}
	runtime.KeepAlive(b)
}

// BenchmarkAskWide is one proposal in the widest space with 20 measurements; B/op is what it
// allocates.
func BenchmarkAskWide(bm *testing.B) {
	s, desc := wideSpace()
	b, err := New(s, &Options{Seed: 1, Descriptors: desc})
	if err != nil {
		bm.Fatal(err)
	}
	for range 20 {
		x, _ := b.Ask(context.Background())
		b.Tell(x, float64(x[0]%7+x[1]%5))
	}
	bm.ReportAllocs()
	for bm.Loop() {
		if _, err := b.Ask(context.Background()); err != nil {
			bm.Fatal(err)
		}
	}
}
