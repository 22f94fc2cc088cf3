package bayes

import (
	"math/rand/v2"
	"strconv"
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

// The related tasks are bounded (each holds a prediction per point of the space): of 100, the
// maxRelatedTasks with the most measurements are modeled.
func TestRelatedTasksAreBounded(t *testing.T) {
	s := &opt.Space{Names: []string{"a", "b"}, Levels: [][]string{make([]string, 6), make([]string, 5)}}
	r := rand.New(rand.NewPCG(5, 6))
	var prior []opt.Observation
	for task := range 100 {
		n := 4 + task%3 // tasks 2, 5, 8, …: 6 measurements; the rest 4 or 5
		for _, i := range r.Perm(30)[:n] {
			prior = append(prior, opt.Observation{Task: strconv.Itoa(task), X: []int{i / 5, i % 5}, Y: r.Float64() * 100})
		}
	}
	b, err := New(s, &Options{Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.sources) > maxRelatedTasks {
		t.Fatalf("%d related tasks' models, want at most %d", len(b.sources), maxRelatedTasks)
	}
	six := 0
	for _, src := range b.sources {
		if task, _ := strconv.Atoi(src.task); task%3 == 2 {
			six++
		}
	}
	if six != 33 { // all 33 tasks with 6 measurements are kept
		t.Errorf("%d of the 33 tasks with the most measurements kept", six)
	}
}
