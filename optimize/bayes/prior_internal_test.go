package bayes

import (
	"math/rand/v2"
	"testing"

	opt "github.com/labmate/labmate/optimize"
)

// A related task's model reproduces what the task measured: at those points its prediction is
// the measurement (in the model's units), however the GP, whose hyperparameters all the related
// tasks share, would smooth it.
func TestRelatedTasksKeepTheirMeasurements(t *testing.T) {
	s := &opt.Space{Names: []string{"ligand", "base", "solvent"}}
	for _, n := range []int{12, 8, 4} {
		s.Levels = append(s.Levels, make([]string, n))
	}
	r := rand.New(rand.NewPCG(3, 4))
	var prior []opt.Observation
	measured := map[string]map[string]float64{}
	for _, task := range []string{"a", "b", "c"} {
		measured[task] = map[string]float64{}
		for range 30 {
			x := []int{r.IntN(12), r.IntN(8), r.IntN(4)}
			y := 10*float64(x[0]%3) + 5*float64(x[1]%2) + 20*r.Float64() // rough: no smooth model fits it
			if _, ok := measured[task][opt.Key(x)]; ok {
				continue
			}
			measured[task][opt.Key(x)] = y
			prior = append(prior, opt.Observation{Task: task, X: x, Y: y})
		}
	}
	b, err := New(s, &Options{Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.sources) != 3 {
		t.Fatalf("%d related tasks' models, want 3", len(b.sources))
	}
	for _, src := range b.sources {
		// f = (y − m)/s at every measured point, for one m and one s > 0.
		var ys, fs []float64
		for k, y := range measured[src.task] {
			ys, fs = append(ys, y), append(fs, src.f[b.pos[k]])
		}
		slope := (fs[1] - fs[0]) / (ys[1] - ys[0])
		if slope <= 0 {
			t.Fatalf("task %s: prediction falls as the measurement rises (%g)", src.task, slope)
		}
		for i := range ys {
			if d := fs[i] - fs[0] - slope*(ys[i]-ys[0]); d > 1e-9 || d < -1e-9 {
				t.Errorf("task %s: measured %.2f, predicted %.4f: off the measurement by %.2g", src.task, ys[i], fs[i], d)
			}
		}
	}
}
