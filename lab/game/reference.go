package game

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/labmate/labmate/lab"
)

// Reference is one curve of a reference curves file.
type Reference struct {
	Dataset, Method string
	NMA, Advantage  []float64 // by iteration-1; NaN where missing
}

// ReadReferences reads a reference curves CSV (dataset, method, iteration, …,
// mean_normalized_advantage, mean_nma).
func ReadReferences(path string) ([]*Reference, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"dataset", "method", "iteration", "mean_normalized_advantage", "mean_nma"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s:1: no column %q", path, need)
		}
	}
	var out []*Reference
	byKey := map[string]*Reference{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		key := rec[col["dataset"]] + "\x00" + rec[col["method"]]
		ref := byKey[key]
		if ref == nil {
			ref = &Reference{Dataset: rec[col["dataset"]], Method: rec[col["method"]]}
			byKey[key] = ref
			out = append(out, ref)
		}
		it, err := strconv.Atoi(rec[col["iteration"]])
		if err != nil || it < 1 {
			return nil, fmt.Errorf("%s:%d: column iteration: %q is not a positive integer", path, line, rec[col["iteration"]])
		}
		num := func(c string) (float64, error) {
			v := rec[col[c]]
			if v == "" {
				return math.NaN(), nil
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("%s:%d: column %s: %q is not a number", path, line, c, v)
			}
			return x, nil
		}
		nma, err := num("mean_nma")
		if err != nil {
			return nil, err
		}
		adv, err := num("mean_normalized_advantage")
		if err != nil {
			return nil, err
		}
		for len(ref.NMA) < it {
			ref.NMA = append(ref.NMA, math.NaN())
			ref.Advantage = append(ref.Advantage, math.NaN())
		}
		ref.NMA[it-1], ref.Advantage[it-1] = nma, adv
	}
	return out, nil
}

// MatchReferences keeps the curves of dataset want (default name); all when none match.
func MatchReferences(refs []*Reference, name, want string) []*Reference {
	if want == "" {
		want = name
	}
	var out []*Reference
	for _, r := range refs {
		if r.Dataset == want {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return refs
	}
	return out
}

// Summary is the reference curve as a row of the summary table of dataset ds, up to turn budget.
func (r *Reference) Summary(ds string, budget int) *Summary {
	s := &Summary{Planner: r.Method, Dataset: ds, NMA: map[int]lab.Summary{}, Advantage: map[int]lab.Summary{}}
	for _, t := range SummaryTurns {
		if t <= budget && t <= len(r.NMA) {
			s.NMA[t] = lab.Summary{Mean: r.NMA[t-1], N: 1}
			s.Advantage[t] = lab.Summary{Mean: r.Advantage[t-1], N: 1}
		}
	}
	return s
}
