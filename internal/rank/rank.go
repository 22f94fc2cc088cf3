// Package rank fuses ranked lists and compares embeddings: the parts of hybrid retrieval that
// memory and the documentation index share.
package rank

import (
	"cmp"
	"math"
	"slices"
)

// Scored is an id with its fused score.
type Scored struct {
	ID    string
	Score float64
}

// Fuse merges ranked lists of ids (best first) by reciprocal rank fusion: an id scores
// Σ 1/(k + rank) over the lists it appears in, rank counted from 1; k = 60 is customary. Ties keep
// the order in which ids were first seen.
func Fuse(k float64, lists ...[]string) []Scored {
	score := map[string]float64{}
	var order []string
	for _, list := range lists {
		for i, id := range list {
			if _, seen := score[id]; !seen {
				order = append(order, id)
			}
			score[id] += 1 / (k + float64(i+1))
		}
	}
	out := make([]Scored, len(order))
	for i, id := range order {
		out[i] = Scored{id, score[id]}
	}
	slices.SortStableFunc(out, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// Cosine is the cosine similarity of two vectors of the same length; 0 when either is zero.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Jaccard is the size of the intersection of two sets over that of their union; 1 when both
// are empty.
func Jaccard(x, y map[string]bool) float64 {
	if len(x) == 0 && len(y) == 0 {
		return 1
	}
	inter := 0
	for w := range x {
		if y[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(x)+len(y)-inter)
}
