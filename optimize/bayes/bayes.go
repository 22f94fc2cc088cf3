// Package bayes is Bayesian optimization over a categorical space: a Gaussian process on the
// measurements so far, with hyperparameters fitted by (penalized) marginal likelihood, and
// expected improvement to choose the next untried point.
//
// # Model
//
// Each variable v compares two levels through a similarity S_v(l, l') = exp(−D_v(l, l')/ℓ_v),
// where D_v is 0 for equal levels and otherwise 1 (one-hot) or, when Options.Descriptors
// describe the levels, the mean squared difference of their descriptor vectors. The kernel adds
// a main-effect part and an interaction part,
//
//	k(x, x') = Σ_v a_v S_v(x_v, x'_v) + b · Π_v S_v(x_v, x'_v)
//
// — an additive model of level effects (a good ligand, a good base: what a chemist looks for
// first) plus an ARD product kernel for their interactions. With descriptors, and no prior
// (below), a linear kernel on them is added, λ Σ_v ⟨d_v(x_v), d_v(x'_v)⟩ / K: when the
// descriptors say how each level behaved on K other substrates, this is a Bayesian regression
// of this task's level effects on theirs — which substrates does this one behave like.
// Outputs are standardized; a_v, b, λ, ℓ_v and the noise are fitted by maximizing the marginal
// likelihood under weak log-normal priors (twenty points do not pin nine parameters down), with
// gonum/optimize's Nelder–Mead, warm-started from the last fit. The first point is space-filling random (Options.Init).
//
// # Prior from related tasks
//
// Options.Prior holds measurements of related tasks (other substrates: earlier campaigns read
// from memory), never of this one. One GP is fitted per related task, all with the same
// hyperparameters (fitted on all of them together), and each reproduces its task's own
// measurements where it has them. The prior mean of this task is their weighted mean
// prediction, each task weighted by how well it ranks this task's own measurements so far
// (exp(−misordered pairs / T), in the spirit of ranking-weighted ensembles), and scaled by a
// fitted coefficient c (held near 1 by a tight prior). Where the related tasks disagree, the
// prior is uncertain: the kernel gains their weighted covariance, e Σ_h w_h δ_h(x) δ_h(x'), δ_h
// being task h's deviation from the prior mean — the target is modeled as the consensus plus
// some mix of the ways the related tasks depart from it, and each measurement also tells which
// mix. The first proposal is then the related tasks' consensus; as measurements come in, the
// tasks that predict them survive, and the GP corrects what none of them predicts.
//
// A transferred mean also steers the model away from levels that are poor on the related tasks,
// and so past a sharp optimum that only this task has (a solvent that fails everywhere except
// with one catalyst system). With a prior, therefore, from the screenStart-th measurement on
// every screenEvery-th proposal is a one-factor screen around the best point so far: the untried
// points that differ from it in one variable only — the variable with the fewest levels whose
// alternatives are not all tried yet (solvents before bases before ligands) — of which expected
// improvement picks one.
//
// Linear algebra is gonum's (mat.Cholesky, triangular solves). Nothing is proposed twice or
// outside the space's feasible points, and proposals are deterministic for a seed.
//
// # Memory and time
//
// The kernel compares a measured point with another point, never two unmeasured ones (the
// prior variance of a point needs only its levels' self-similarity), so the level tables hold
// one row of L entries per variable for each level measured so far, not L × L. The Gram
// matrix is n × n in the n measurements, which MaxMeasurements bounds; a proposal predicts the
// space's points (at most optimize.MaxPoints) in blocks of predictBlock, so it holds n ×
// predictBlock cross-covariances at a time. A proposal costs O(n³) per hyperparameter
// evaluation (a few hundred of them) and O(n² m) for the m untried points: at 200 measurements
// in a 40,000-point space, about a second on one core.
package bayes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	opt "github.com/labmate/labmate/optimize"
)

// Options tune the optimizer; the zero value is the default.
type Options struct {
	// Seed makes the random initial design and tie-breaking reproducible.
	Seed uint64
	// Init is the number of space-filling random points before the model is used when there is
	// no prior (default 1).
	Init int
	// Prior holds measurements from related tasks (never from this one).
	Prior []opt.Observation
	// Descriptors, when set, describe each level of each variable by a vector
	// (Descriptors[v][level]); levels with similar descriptors are modeled as similar. nil (for
	// a variable or a level): levels are only equal or different (one-hot).
	Descriptors [][][]float64
	// Explore is the expected-improvement margin ξ in standardized units: by default 0 (plain
	// expected improvement) without a prior, 0.1 with one. Leave-one-group-out on Suzuki over
	// seeds 1–30 (before the linear descriptor kernel), plain EI in the campaigns without a
	// prior raised their NMA@10 from 0.760 to 0.765 and, through what they leave in memory,
	// the memory prior's NMA@20 from 0.942 to 0.951: exploiting campaigns record their
	// substrates' optima more densely.
	Explore float64
}

// Bayes is a GP-based optimizer. It is not safe for concurrent use.
type Bayes struct {
	space   *opt.Space
	o       Options
	rng     *rand.Rand
	cands   [][]int
	told    map[string]bool
	x       [][]int
	xi      []int // candidate index of each x
	y       []float64
	theta   []float64      // log a_v…, log b, log ℓ_v…, log noise, log λ, c, log e
	pmean   []float64      // prior mean per candidate (standardized units); nil without a prior
	pos     map[string]int // candidate index by opt.Key
	keys    []string       // opt.Key of each candidate
	nv      int
	lv      *levels // the level tables, shared with the related tasks' models
	lin     bool    // descriptors are set and this model may have the linear kernel (see linVar)
	sources []source
	spread  [][]float64 // per candidate, √w_h δ_h of each related task (see priorMean); nil without a prior
}

// New returns a Bayes optimizer over s.
func New(s *opt.Space, o *Options) (*Bayes, error) {
	if o == nil {
		o = &Options{}
	}
	b := &Bayes{space: s, o: *o, told: map[string]bool{}, nv: len(s.Levels)}
	if b.o.Init <= 0 {
		b.o.Init = 1
	}
	if b.o.Explore == 0 && len(o.Prior) > 0 {
		b.o.Explore = 0.1
	}
	b.rng = rand.New(rand.NewPCG(b.o.Seed, 0x6261796573))
	if err := s.Bounded(); err != nil {
		return nil, fmt.Errorf("bayes: %w", err)
	}
	b.cands = s.All()
	if len(b.cands) == 0 {
		return nil, fmt.Errorf("bayes: the space is empty")
	}
	b.keys = make([]string, len(b.cands))
	b.pos = make(map[string]int, len(b.cands))
	for i, c := range b.cands {
		b.keys[i] = opt.Key(c)
		b.pos[b.keys[i]] = i
	}
	var err error
	if b.lv, err = newLevels(s, o.Descriptors); err != nil {
		return nil, err
	}
	b.lin = o.Descriptors != nil
	b.theta = b.defaultTheta()
	if len(o.Prior) > 0 {
		if err := b.fitPrior(o.Prior); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// variances are the prior centers of the total main-effect variance Σ a_v and of the
// interaction variance b (standardized units). Without a prior mean, main effects dominate:
// twenty points say more about level effects than about interactions. With a prior mean
// (which carries the related tasks' level effects) the two are balanced.
func (b *Bayes) variances() (float64, float64) {
	if len(b.o.Prior) > 0 {
		return 0.5, 0.5
	}
	return 0.8, 0.2
}

func (b *Bayes) defaultTheta() []float64 {
	v := b.nv
	a, bb := b.variances()
	th := make([]float64, 2*v+5)
	for i := range v {
		th[i] = math.Log(a / float64(v)) // a_v
	}
	th[v] = math.Log(bb) // b
	for i := range v {
		th[v+1+i] = math.Log(1.0) // ℓ_v
	}
	th[2*v+1] = math.Log(0.05)   // noise
	th[2*v+2] = math.Log(linVar) // variance of the linear descriptor kernel
	th[2*v+3] = 1                // c: weight of the prior mean
	th[2*v+4] = math.Log(ensVar) // e: variance of the related tasks' spread
	return th
}

// penalty is the negative log of the weak priors on the hyperparameters.
func (b *Bayes) penalty(th []float64) float64 {
	v := b.nv
	a, bb := b.variances()
	p := 0.0
	sq := func(x, mu, s float64) float64 { d := (x - mu) / s; return 0.5 * d * d }
	for i := range v {
		p += sq(th[i], math.Log(a/float64(v)), 1.5)
		p += sq(th[v+1+i], math.Log(1.0), 1.0)
	}
	p += sq(th[v], math.Log(bb), 1.5)
	p += sq(th[2*v+1], math.Log(0.05), 1.5)
	p += sq(th[2*v+2], math.Log(linVar), 1.5)
	if b.pmean != nil {
		p += sq(th[2*v+3], 1, priorWeightSD)
		p += sq(th[2*v+4], math.Log(ensVar), 1.5)
	}
	return p
}

// priorWeightSD is the spread of the prior on the prior mean's weight c (centered on 1). A
// tight prior keeps the transferred mean in force while the target's few measurements would
// otherwise fit it away: leave-one-group-out on Suzuki, 0.2 instead of 0.5 raised NMA@20 of the
// memory prior from 0.921 to 0.929 on seeds 1–10 and from 0.926 to 0.934 on held-out seeds
// 11–20 (Buchwald–Hartwig unchanged within noise: 0.994/0.985 → 0.991/0.990).
const priorWeightSD = 0.2

// ensVar is the prior center of the variance e of the related tasks' spread. Leave-one-group-out,
// memory prior NMA@5 / NMA@20 on Suzuki seeds 1–60 and Buchwald–Hartwig seeds 1–30: without the
// spread 0.791 / 0.944 and 0.904 / 0.986; with e = 0.5, 0.803 / 0.948 and 0.891 / 0.991; with
// e = 2, 0.799 / 0.950 and 0.868 / 0.990 (Suzuki seeds 1–30 with e = 8: 0.802 / 0.945, against
// 0.812 / 0.946 with 2). The larger e, the more the first turns explore where the related tasks
// disagree. Measured again with the related tasks' models as they are now (see fitPrior): e = 2
// gave Suzuki seeds 1–180 0.836 / 0.954 against 0.829 / 0.952, and Buchwald–Hartwig seeds 1–60
// 0.890 / 0.992 against 0.896 / 0.993 — no clear gain.
const ensVar = 0.5

// linVar is the prior center of the linear descriptor kernel's variance λ. Suzuki, seeds 1–30,
// descriptors from the other groups: NMA@10 / NMA@20 0.765 / 0.898 without the linear kernel,
// 0.774 / 0.898 with λ = 0.3, 0.790 / 0.900 with 1, 0.809 / 0.911 with 10, 0.798 / 0.900 with
// 30 (Buchwald–Hartwig seeds 1–20: 0.909 / 0.980 → 0.961 / 0.989). It is left out of models
// with a prior mean, whose variance it would swamp (memory prior NMA@5 0.79 → 0.72), and of the
// related tasks' models (memory prior NMA@20 0.944 → 0.936 with it).
const linVar = 10.0

// linear reports whether the kernel has the linear descriptor part (see linVar).
func (b *Bayes) linear() bool { return b.lin && b.pmean == nil }

// hyper are the kernel's hyperparameters in natural units, with each variable's level
// similarities S_v[l][l'] = exp(−D_v[l][l'] / ℓ_v) for the levels l of the measured points.
type hyper struct {
	a     []float64     // main-effect variances
	b     float64       // interaction variance
	sim   [][][]float64 // per variable and measured level, a row over all levels; nil for other levels
	noise float64
	lin   float64
	dot   [][][]float64 // per variable and measured level, the descriptor products (levels.dot); nil without the linear kernel
	diag  [][]float64   // per variable and level, a level's product with itself (levels.diag)
	ens   float64       // variance of the related tasks' spread
}

func (b *Bayes) hyper(th []float64) hyper {
	v := b.nv
	h := hyper{a: make([]float64, v), sim: make([][][]float64, v), b: math.Exp(th[v]), noise: math.Exp(th[2*v+1]),
		lin: math.Exp(th[2*v+2]), ens: math.Exp(th[2*v+4])}
	lin := b.linear()
	if lin {
		h.dot, h.diag = b.lv.dot, b.lv.diag
	}
	// The measured levels' rows, in one allocation: this runs at every fit evaluation.
	size := 0
	for i := range v {
		h.sim[i] = make([][]float64, len(b.space.Levels[i]))
		for _, x := range b.x {
			if l := x[i]; h.sim[i][l] == nil {
				h.sim[i][l] = needed
				size += len(b.space.Levels[i])
			}
		}
	}
	buf := make([]float64, size)
	for i := range v {
		h.a[i] = math.Exp(th[i])
		inv := math.Exp(-th[v+1+i])
		for l, r := range h.sim[i] {
			if r == nil {
				continue
			}
			d := b.lv.distRow(i, l)
			row := buf[:len(d):len(d)]
			buf = buf[len(d):]
			for j, x := range d {
				row[j] = math.Exp(-x * inv)
			}
			h.sim[i][l] = row
			if lin {
				b.lv.dotRow(i, l)
			}
		}
	}
	return h
}

// needed marks, in hyper, a level whose row is to be computed.
var needed = []float64{}

// k is the covariance of the measured point x and the point z, whose related tasks' spreads
// (Bayes.spread) are sx and sz (nil without a prior). Only x's levels have rows in h.
func (h *hyper) k(x, z []int, sx, sz []float64) float64 {
	add, prod := 0.0, 1.0
	for i := range x {
		s := h.sim[i][x[i]][z[i]]
		add += h.a[i] * s
		prod *= s
	}
	if h.dot != nil {
		for i := range x {
			add += h.lin * h.dot[i][x[i]][z[i]]
		}
	}
	e := 0.0
	for i := range sx {
		e += sx[i] * sz[i]
	}
	return add + h.ens*e + h.b*prod
}

// kDiag is k(x, x) for any point x: a level's similarity with itself is exp(−0/ℓ) = 1.
func (h *hyper) kDiag(x []int, sx []float64) float64 {
	add, prod := 0.0, 1.0
	for i := range x {
		s := 1.0
		add += h.a[i] * s
		prod *= s
	}
	if h.dot != nil {
		for i := range x {
			add += h.lin * h.diag[i][x[i]]
		}
	}
	e := 0.0
	for i := range sx {
		e += sx[i] * sx[i]
	}
	return add + h.ens*e + h.b*prod
}

// measuredSpread is the related tasks' spread at the i-th measurement; nil without a prior.
func (b *Bayes) measuredSpread(i int) []float64 {
	if b.spread == nil {
		return nil
	}
	return b.spread[b.xi[i]]
}

// levels are the level tables of a space, a row at a time: per variable v and level l, the
// distances D_v(l, ·) to every level (0/1 without descriptors, else the mean squared difference
// of the descriptors) and the mean products of the descriptors. A row is computed the first
// time a measured point has that level, and kept.
type levels struct {
	desc [][][]float64 // Options.Descriptors; nil without
	dist [][][]float64 // [v][l]: a row, nil until needed
	dot  [][][]float64 // [v][l]: a row, nil until needed; nil without descriptors
	diag [][]float64   // [v][l]: the mean product of l's descriptors with themselves; nil without descriptors
}

func newLevels(s *opt.Space, desc [][][]float64) (*levels, error) {
	lv := &levels{desc: desc, dist: make([][][]float64, len(s.Levels))}
	if desc != nil {
		if len(desc) != len(s.Levels) {
			return nil, fmt.Errorf("bayes: descriptors for %d variables; the space has %d", len(desc), len(s.Levels))
		}
		lv.dot = make([][][]float64, len(s.Levels))
		lv.diag = make([][]float64, len(s.Levels))
	}
	for v, l := range s.Levels {
		n := len(l)
		lv.dist[v] = make([][]float64, n)
		if desc == nil {
			continue
		}
		d := desc[v]
		if d != nil && len(d) != n {
			return nil, fmt.Errorf("bayes: %d descriptors for the %d levels of %s", len(d), n, s.Names[v])
		}
		lv.dot[v] = make([][]float64, n)
		lv.diag[v] = make([]float64, n)
		if d == nil {
			continue
		}
		for i := range n {
			p := 0.0
			for k := range d[i] {
				p += d[i][k] * d[i][k]
			}
			if len(d[i]) > 0 {
				lv.diag[v][i] = p / float64(len(d[i]))
			}
		}
	}
	return lv, nil
}

// distRow returns the distances from level i of variable v to every level of v.
func (lv *levels) distRow(v, i int) []float64 {
	if r := lv.dist[v][i]; r != nil {
		return r
	}
	n := len(lv.dist[v])
	row := make([]float64, n)
	var d [][]float64
	if lv.desc != nil {
		d = lv.desc[v]
	}
	for j := range n {
		if i == j {
			continue
		}
		if d == nil || len(d[i]) == 0 || len(d[i]) != len(d[j]) {
			row[j] = 1
			continue
		}
		sq := 0.0
		for k := range d[i] {
			sq += (d[i][k] - d[j][k]) * (d[i][k] - d[j][k])
		}
		row[j] = sq / float64(len(d[i]))
	}
	lv.dist[v][i] = row
	return row
}

// dotRow returns the mean products of the descriptors of level i of variable v with every
// level's (0 for a variable or level without them); descriptors are set.
func (lv *levels) dotRow(v, i int) []float64 {
	if r := lv.dot[v][i]; r != nil {
		return r
	}
	n := len(lv.dot[v])
	row := make([]float64, n)
	d := lv.desc[v]
	if d != nil {
		for j := range n {
			if len(d[i]) == 0 || len(d[i]) != len(d[j]) {
				continue
			}
			p := 0.0
			for k := range d[i] {
				p += d[i][k] * d[j][k]
			}
			row[j] = p / float64(len(d[i]))
		}
	}
	lv.dot[v][i] = row
	return row
}

// MaxMeasurements bounds the measurements (not NaN) a Bayes models: its Gram matrix is n × n
// and each of a proposal's few hundred fit evaluations costs O(n³).
const MaxMeasurements = 200

// ErrTooMany: Tell was given more than MaxMeasurements measurements.
var ErrTooMany = errors.New("bayes: too many measurements")

// Tell records a measurement.
func (b *Bayes) Tell(x []int, y float64) error {
	if err := b.space.Check(x); err != nil {
		return fmt.Errorf("bayes: tell: %w", err)
	}
	k := opt.Key(x)
	if b.told[k] {
		return fmt.Errorf("bayes: tell: %v was already told", x)
	}
	if !math.IsNaN(y) && len(b.y) >= MaxMeasurements {
		return fmt.Errorf("%w: %d already; at most %d are modeled", ErrTooMany, len(b.y), MaxMeasurements)
	}
	b.told[k] = true
	if !math.IsNaN(y) {
		b.x = append(b.x, slices.Clone(x))
		b.xi = append(b.xi, b.pos[k])
		b.y = append(b.y, y)
	}
	return nil
}

// Ask proposes the untried point with the highest expected improvement.
func (b *Bayes) Ask(ctx context.Context) ([]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var free []int // candidate indices
	for i := range b.cands {
		if !b.told[b.keys[i]] {
			free = append(free, i)
		}
	}
	if len(free) == 0 {
		return nil, opt.ErrExhausted
	}
	if b.pmean == nil && len(b.y) < b.o.Init {
		return b.spaceFilling(free), nil
	}
	if b.pmean != nil {
		b.priorMean()
	}
	ys, _, _ := b.standardize()
	b.fit(ys)
	mu, sd, err := b.predict(ys, free)
	if err != nil {
		return nil, err
	}
	best := math.Inf(-1)
	for _, y := range ys {
		best = max(best, y)
	}
	if len(ys) == 0 {
		best = 0
	}
	screen := b.screen(free)
	bi, bv := -1, math.Inf(-1)
	for i := range free {
		if screen != nil && !screen[i] {
			continue
		}
		a := ei(mu[i], sd[i], best+b.o.Explore)
		if a > bv+1e-12 {
			bi, bv = i, a
		}
	}
	return slices.Clone(b.cands[free[bi]]), nil
}

// screenStart and screenEvery schedule the one-factor screens of a campaign with a prior
// (see the package documentation). Leave-one-group-out on Suzuki, seeds 1–20: NMA@20 of the
// memory prior 0.940 → 0.950; held-out seeds 21–30: 0.935 → 0.933 with random campaigns in
// memory, 0.919 → 0.932 without. Potassium quinoline-6-trifluoroborate + 2d, whose optimum is
// the one good DMF well, rises from 0.73 to 0.86. Without a prior the GP's own uncertainty
// spreads the search, and the screen did not help (bayes NMA@20 0.899 → 0.891).
const (
	screenStart = 10
	screenEvery = 3
)

// screen returns, on a screening turn, which free candidates the proposal is chosen among;
// nil on other turns or when the screen has nothing left to try.
func (b *Bayes) screen(free []int) []bool {
	n := len(b.y)
	if b.pmean == nil || n < screenStart || (n-screenStart)%screenEvery != 0 {
		return nil
	}
	bi := 0
	for i, y := range b.y {
		if y > b.y[bi] {
			bi = i
		}
	}
	inc := b.x[bi]
	along := make([]int, len(free)) // the one variable a free point differs in, or −1
	pick := -1
	for j, i := range free {
		d, last := 0, -1
		for v, l := range b.cands[i] {
			if l != inc[v] {
				d, last = d+1, v
			}
		}
		along[j] = -1
		if d != 1 {
			continue
		}
		along[j] = last
		if pick < 0 || len(b.space.Levels[last]) < len(b.space.Levels[pick]) {
			pick = last
		}
	}
	if pick < 0 {
		return nil
	}
	out := make([]bool, len(free))
	for j, v := range along {
		out[j] = v == pick
	}
	return out
}

// spaceFilling picks a random untried point that shares as few levels as possible with the
// points measured so far.
func (b *Bayes) spaceFilling(free []int) []int {
	bestShared := math.MaxInt
	var pool [][]int
	for _, i := range free {
		c := b.cands[i]
		shared := 0
		for _, x := range b.x {
			for v := range c {
				if c[v] == x[v] {
					shared++
				}
			}
		}
		switch {
		case shared < bestShared:
			bestShared, pool = shared, [][]int{c}
		case shared == bestShared:
			pool = append(pool, c)
		}
	}
	return slices.Clone(pool[b.rng.IntN(len(pool))])
}

// standardize returns the measurements in standardized units, with the location and scale.
func (b *Bayes) standardize() ([]float64, float64, float64) {
	n := len(b.y)
	if n == 0 {
		return nil, 0, 1
	}
	m := 0.0
	for _, y := range b.y {
		m += y
	}
	m /= float64(n)
	s := 0.0
	for _, y := range b.y {
		s += (y - m) * (y - m)
	}
	s = math.Sqrt(s / float64(n))
	if n < 3 || s < 1e-9 {
		if b.pmean != nil {
			s = max(s, 1)
		}
		s = max(s, 1e-9*math.Abs(m)+1e-9)
		if n < 2 {
			s = max(math.Abs(m), 1)
		}
	}
	out := make([]float64, n)
	for i, y := range b.y {
		out[i] = (y - m) / s
	}
	return out, m, s
}

// residual subtracts the scaled prior mean.
func (b *Bayes) residual(th, ys []float64) []float64 {
	r := slices.Clone(ys)
	if b.pmean == nil {
		return r
	}
	c := th[2*b.nv+3]
	for i := range b.x {
		r[i] -= c * b.pmean[b.xi[i]]
	}
	return r
}

func (b *Bayes) gram(th []float64) *mat.SymDense {
	n := len(b.x)
	k := mat.NewSymDense(n, nil)
	h := b.hyper(th)
	noise := h.noise
	for i := range n {
		for j := i; j < n; j++ {
			v := h.k(b.x[i], b.x[j], b.measuredSpread(i), b.measuredSpread(j))
			if i == j {
				v += noise + 1e-8
			}
			k.SetSym(i, j, v)
		}
	}
	return k
}

// nlml is the negative log marginal likelihood of ys.
func (b *Bayes) nlml(th, ys []float64) float64 {
	var ch mat.Cholesky
	if !ch.Factorize(b.gram(th)) {
		return math.Inf(1)
	}
	r := mat.NewVecDense(len(ys), b.residual(th, ys))
	var alpha mat.VecDense
	if err := ch.SolveVecTo(&alpha, r); err != nil {
		return math.Inf(1)
	}
	return 0.5*mat.Dot(r, &alpha) + 0.5*ch.LogDet()
}

// fit maximizes the penalized marginal likelihood of ys from the last fit and, now and then,
// also from the defaults, so that one bad optimum does not stick.
func (b *Bayes) fit(ys []float64) {
	if len(ys) < 2 {
		return
	}
	b.minimize(func(th []float64) float64 { return b.nlml(th, ys) + b.penalty(th) }, fitEvaluations,
		len(ys) <= 4 || len(ys)%4 == 0)
}

// minimize sets b.theta to the minimum of obj found by Nelder–Mead runs of at most evals
// evaluations from b.theta and, when fresh, from the defaults too. Searched are the parameters
// in use: not the prior mean's weight c nor the spread's variance e without a prior mean, not
// the linear kernel's variance without the linear kernel.
func (b *Bayes) minimize(obj func([]float64) float64, evals int, fresh bool) {
	v := b.nv
	var free []int
	for i := range b.theta {
		if ((i == 2*v+3 || i == 2*v+4) && b.pmean == nil) || (i == 2*v+2 && !b.linear()) {
			continue
		}
		free = append(free, i)
	}
	pick := func(th []float64) []float64 {
		x := make([]float64, len(free))
		for j, i := range free {
			x[j] = th[i]
		}
		return x
	}
	full := func(x []float64) []float64 {
		th := slices.Clone(b.theta)
		for j, i := range free {
			th[i] = x[j]
		}
		return th
	}
	f := func(x []float64) float64 { return obj(full(x)) }
	best := pick(b.theta)
	bestF := f(best)
	starts := [][]float64{best}
	if fresh {
		starts = append(starts, pick(b.defaultTheta()))
	}
	for _, start := range starts {
		res, err := optimize.Minimize(optimize.Problem{Func: f}, slices.Clone(start),
			&optimize.Settings{FuncEvaluations: evals}, &optimize.NelderMead{})
		if err != nil && res == nil {
			continue
		}
		if res.F < bestF {
			best, bestF = res.X, res.F
		}
	}
	b.theta = full(best)
}

// fitEvaluations bounds each Nelder–Mead run of the hyperparameter fit; the related tasks'
// shared hyperparameters are fitted once, from the defaults, with sharedEvaluations.
const (
	fitEvaluations    = 200
	sharedEvaluations = 400
)

// predict returns the posterior mean and standard deviation (standardized units) at pts.
func (b *Bayes) predict(ys []float64, idx []int) ([]float64, []float64, error) {
	pts := make([][]int, len(idx))
	for j, i := range idx {
		pts[j] = b.cands[i]
	}
	th := b.theta
	m := len(pts)
	mu := make([]float64, m)
	sd := make([]float64, m)
	c := th[2*b.nv+3]
	n := len(b.x)
	h := b.hyper(th)
	for j, p := range pts {
		if b.pmean != nil {
			mu[j] = c * b.pmean[idx[j]]
		}
		sd[j] = h.kDiag(p, at(b.spread, idx[j]))
	}
	if n > 0 {
		var ch mat.Cholesky
		if !ch.Factorize(b.gram(th)) {
			return nil, nil, fmt.Errorf("bayes: the covariance of %d points is not positive definite", n)
		}
		var alpha mat.VecDense
		if err := ch.SolveVecTo(&alpha, mat.NewVecDense(n, b.residual(th, ys))); err != nil {
			return nil, nil, fmt.Errorf("bayes: %w", err)
		}
		var l mat.TriDense
		ch.LTo(&l)
		// The cross-covariances of the measurements and a block of points at a time.
		for lo := 0; lo < m; lo += predictBlock {
			hi := min(m, lo+predictBlock)
			ks := mat.NewDense(n, hi-lo, nil)
			for i := range n {
				for j := lo; j < hi; j++ {
					ks.Set(i, j-lo, h.k(b.x[i], pts[j], b.measuredSpread(i), at(b.spread, idx[j])))
				}
			}
			var v mat.Dense
			if err := v.Solve(&l, ks); err != nil {
				return nil, nil, fmt.Errorf("bayes: %w", err)
			}
			for j := lo; j < hi; j++ {
				mu[j] += mat.Dot(ks.ColView(j-lo), &alpha)
				col := v.ColView(j - lo)
				sd[j] -= mat.Dot(col, col)
			}
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(max(sd[j], 1e-12))
	}
	return mu, sd, nil
}

// predictBlock is how many points predict takes at a time: it holds two n × predictBlock
// matrices (the cross-covariances and their triangular solve), not n × the space.
const predictBlock = 4096

// ei is the expected improvement over best of a normal(mu, sd).
func ei(mu, sd, best float64) float64 {
	z := (mu - best) / sd
	return sd * (z*normCDF(z) + normPDF(z))
}

func normPDF(z float64) float64 { return math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) }
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// source is a model of one related task: its GP's posterior mean at every candidate, with the
// task's own measurements where it has them, scaled to zero mean and unit variance.
type source struct {
	task string
	f    []float64
}

// maxPerTask bounds the points of one related task its model is fitted on, and
// maxRelatedTasks the related tasks (those with the most measurements are kept): each holds a
// prediction per point of the space.
const (
	maxPerTask      = 60
	maxRelatedTasks = 64
)

// fitPrior fits one GP per related task on that task's observations, all with the same
// hyperparameters: those that maximize the sum of the tasks' marginal likelihoods. Related
// substrates share how alike their levels behave, and several hundred points pin that down
// where one task's few dozen do not. A task's prediction at a point it measured is that
// measurement: the GP, whose kernel cannot follow a sharp optimum, would smooth it, and would
// rank untried combinations of good levels above the task's best. The prior mean of this task is
// then a weighted sum of the predictions; the weights follow how well each ranks this task's
// own measurements so far (see priorMean).
//
// Leave-one-group-out over seeds 1–180, memory prior NMA@5 / NMA@20: with one fit per task and
// plain posterior means, Suzuki 0.805 / 0.945; with the measurements kept, 0.831 / 0.950; with the
// shared fit as well, 0.829 / 0.952 (Buchwald–Hartwig, seeds 1–60: 0.887 / 0.989 → 0.896 / 0.993).
func (b *Bayes) fitPrior(obs []opt.Observation) error {
	byTask := map[string][]opt.Observation{}
	var tasks []string
	for i, o := range obs {
		if err := inRange(b.space, o.X); err != nil {
			return fmt.Errorf("bayes: prior observation %d (%s): %w", i, o.Task, err)
		}
		if math.IsNaN(o.Y) {
			continue
		}
		if _, ok := byTask[o.Task]; !ok {
			tasks = append(tasks, o.Task)
		}
		byTask[o.Task] = append(byTask[o.Task], o)
	}
	if len(tasks) > maxRelatedTasks {
		keep := slices.Clone(tasks)
		slices.SortStableFunc(keep, func(a, b string) int { return cmp.Compare(len(byTask[b]), len(byTask[a])) })
		keep = keep[:maxRelatedTasks]
		tasks = slices.DeleteFunc(tasks, func(t string) bool { return !slices.Contains(keep, t) })
	}
	var subs []*Bayes
	var names []string
	var ys [][]float64 // each task's measurements, standardized
	for _, t := range tasks {
		// Without dot: the related tasks' models go without the linear kernel (see linVar).
		sub := &Bayes{space: b.space, o: Options{Init: 1}, told: map[string]bool{}, nv: b.nv,
			lv: b.lv, cands: b.cands, keys: b.keys, pos: b.pos}
		sub.theta = sub.defaultTheta()
		for _, o := range byTask[t] {
			k := opt.Key(o.X)
			if sub.told[k] {
				continue
			}
			sub.told[k] = true
			sub.x = append(sub.x, o.X)
			sub.y = append(sub.y, o.Y)
		}
		if len(sub.y) < 3 {
			continue
		}
		sub.x, sub.y = thin(sub.x, sub.y, maxPerTask)
		for _, x := range sub.x {
			sub.xi = append(sub.xi, b.pos[opt.Key(x)])
		}
		y, _, _ := sub.standardize()
		subs, names, ys = append(subs, sub), append(names, t), append(ys, y)
	}
	if len(subs) == 0 {
		return nil
	}
	lead := subs[0]
	lead.minimize(func(th []float64) float64 {
		f := lead.penalty(th)
		for h, sub := range subs {
			f += sub.nlml(th, ys[h])
		}
		return f
	}, sharedEvaluations, false)
	all := make([]int, len(b.cands))
	for i := range all {
		all[i] = i
	}
	for h, sub := range subs {
		sub.theta = lead.theta
		mu, _, err := sub.predict(ys[h], all)
		if err != nil {
			return fmt.Errorf("bayes: prior task %s: %w", names[h], err)
		}
		for i, c := range sub.xi {
			mu[c] = ys[h][i]
		}
		if normalize(mu) == 0 {
			continue
		}
		b.sources = append(b.sources, source{task: names[h], f: mu})
	}
	if len(b.sources) == 0 {
		return nil
	}
	b.pmean = make([]float64, len(b.cands))
	b.priorMean()
	return nil
}

// normalize scales v to zero mean and unit variance and returns the scale it divided by; 0 (and
// v unchanged) when v is constant.
func normalize(v []float64) float64 {
	m, sd := 0.0, 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		sd += (x - m) * (x - m)
	}
	sd = math.Sqrt(sd / float64(len(v)))
	if sd < 1e-9 {
		return 0
	}
	for i := range v {
		v[i] = (v[i] - m) / sd
	}
	return sd
}

// priorMean sets the prior mean from the sources, each weighted by exp(−misranked/T): the
// number of pairs of this task's measurements it orders wrongly, against a temperature T of a
// fifth of the pairs (a tenth gave 0.938 instead of 0.945 on Suzuki, seeds 1–10, with random
// and bayes campaigns in memory). With fewer than two measurements all sources count equally.
func (b *Bayes) priorMean() {
	n := len(b.y)
	at := b.xi
	pairs := n * (n - 1) / 2
	loss := make([]float64, len(b.sources))
	best := math.Inf(1)
	for h, s := range b.sources {
		for i := range n {
			for j := i + 1; j < n; j++ {
				if (s.f[at[i]] < s.f[at[j]]) != (b.y[i] < b.y[j]) {
					loss[h]++
				}
			}
		}
		best = min(best, loss[h])
	}
	temp := max(1, 0.2*float64(pairs))
	w := make([]float64, len(b.sources))
	sum := 0.0
	for h := range w {
		w[h] = 1
		if pairs > 0 {
			w[h] = math.Exp(-(loss[h] - best) / temp)
		}
		sum += w[h]
	}
	clear(b.pmean)
	for h, s := range b.sources {
		for j, f := range s.f {
			b.pmean[j] += w[h] / sum * f
		}
	}
	// The spread is measured in the units of the prior mean, which normalize rescales.
	mean := slices.Clone(b.pmean)
	sd := normalize(b.pmean)
	if sd == 0 {
		clear(b.pmean)
		b.spread = nil
		return
	}
	if b.spread == nil {
		b.spread = make([][]float64, len(b.cands))
	}
	for j := range b.spread {
		row := make([]float64, len(b.sources))
		for h, s := range b.sources {
			row[h] = math.Sqrt(w[h]/sum) * (s.f[j] - mean[j]) / sd
		}
		b.spread[j] = row
	}
}

// at is s[i], or nil when s is.
func at(s [][]float64, i int) []float64 {
	if s == nil {
		return nil
	}
	return s[i]
}

// inRange checks that x has a valid level for every variable (a related task may have run a
// point this task cannot).
func inRange(s *opt.Space, x []int) error {
	if len(x) != len(s.Levels) {
		return fmt.Errorf("%w: %d coordinates for %d variables", opt.ErrOutside, len(x), len(s.Levels))
	}
	for v, i := range x {
		if i < 0 || i >= len(s.Levels[v]) {
			return fmt.Errorf("%w: %s level %d of %d", opt.ErrOutside, s.Names[v], i, len(s.Levels[v]))
		}
	}
	return nil
}

// thin keeps at most n points: the best half by value, and the rest spread evenly over the
// others in their original order.
func thin(x [][]int, y []float64, n int) ([][]int, []float64) {
	if n <= 0 || len(y) <= n {
		return x, y
	}
	idx := make([]int, len(y))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(y[j], y[i]) })
	keep := map[int]bool{}
	for _, i := range idx[:n/2] {
		keep[i] = true
	}
	var rest []int
	for i := range y {
		if !keep[i] {
			rest = append(rest, i)
		}
	}
	m := n - n/2
	for k := range m {
		keep[rest[k*len(rest)/m]] = true
	}
	var xo [][]int
	var yo []float64
	for i := range y {
		if keep[i] {
			xo = append(xo, x[i])
			yo = append(yo, y[i])
		}
	}
	return xo, yo
}
