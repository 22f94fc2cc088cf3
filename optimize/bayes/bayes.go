// Package bayes is Bayesian optimization over a categorical space: a Gaussian process on the
// measurements so far, with hyperparameters fitted by (penalized) marginal likelihood, and an
// acquisition function that chooses the next untried point.
//
// # Model
//
// Each variable v compares two points by whether they share its level, δ_v ∈ {0, 1}. The
// kernel adds a main-effect part and an interaction part,
//
//	k(x, x') = Σ_v a_v δ_v(x, x') + b · exp(−Σ_v (1 − δ_v(x, x')) / ℓ_v)
//
// — an additive model of level effects (what a chemist's intuition looks for first: a good
// ligand, a good base) plus an ARD Hamming (one-hot) kernel for the interactions. The outputs
// are standardized; a_v, b, ℓ_v and the noise are fitted by maximizing the marginal likelihood
// with weak log-normal priors (20 points do not pin 8 parameters down), with gonum/optimize.
//
// With prior observations from other tasks (earlier campaigns on other substrates), each task's
// values are standardized and a pooled model of level effects becomes the GP's prior mean,
// scaled by a fitted coefficient: the campaign starts where the other substrates did well, and
// its own measurements override that belief where they disagree.
//
// Linear algebra is gonum's (mat.Cholesky); nothing is proposed twice or outside the space;
// proposals are deterministic for a seed.
package bayes

import (
	"context"
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
	// no prior (default 2).
	Init int
	// Prior holds measurements from related tasks (never from this one).
	Prior []opt.Observation
	// Explore is the expected-improvement margin ξ in standardized units (default 0.01).
	Explore float64
}

// Bayes is a GP-based optimizer. It is not safe for concurrent use.
type Bayes struct {
	space *opt.Space
	o     Options
	rng   *rand.Rand
	cands [][]int
	told  map[string]bool
	x     [][]int
	y     []float64
	theta []float64 // log a_v…, log b, log ℓ_v…, log noise, c
	prior []float64 // prior mean per candidate (standardized units); nil without a prior
	pmean map[string]float64
	nv    int
}

// New returns a Bayes optimizer over s.
func New(s *opt.Space, o *Options) (*Bayes, error) {
	if o == nil {
		o = &Options{}
	}
	b := &Bayes{space: s, o: *o, told: map[string]bool{}, nv: len(s.Levels)}
	if b.o.Init <= 0 {
		b.o.Init = 2
	}
	if b.o.Explore == 0 {
		b.o.Explore = 0.01
	}
	b.rng = rand.New(rand.NewPCG(b.o.Seed, 0x6261796573))
	b.cands = s.All()
	if len(b.cands) == 0 {
		return nil, fmt.Errorf("bayes: the space is empty")
	}
	b.theta = b.defaultTheta()
	if len(o.Prior) > 0 {
		if err := b.fitPrior(o.Prior); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *Bayes) defaultTheta() []float64 {
	v := b.nv
	th := make([]float64, 2*v+3)
	for i := range v {
		th[i] = math.Log(0.5 / float64(v)) // a_v
	}
	th[v] = math.Log(0.5) // b
	for i := range v {
		th[v+1+i] = math.Log(1.0) // ℓ_v
	}
	th[2*v+1] = math.Log(0.05) // noise
	th[2*v+2] = 1              // c: weight of the prior mean
	return th
}

// priorTheta is the center and spread of the weak prior on each hyperparameter.
func (b *Bayes) penalty(th []float64) float64 {
	v := b.nv
	p := 0.0
	sq := func(x, mu, s float64) float64 { d := (x - mu) / s; return 0.5 * d * d }
	for i := range v {
		p += sq(th[i], math.Log(0.5/float64(v)), 1.5)
		p += sq(th[v+1+i], math.Log(1.0), 1.0)
	}
	p += sq(th[v], math.Log(0.5), 1.5)
	p += sq(th[2*v+1], math.Log(0.05), 1.5)
	if b.prior != nil {
		p += sq(th[2*v+2], 1, 0.5)
	}
	return p
}

func (b *Bayes) kernel(th []float64, x, z []int) float64 {
	v := b.nv
	add, dist := 0.0, 0.0
	for i := range v {
		if x[i] == z[i] {
			add += math.Exp(th[i])
		} else {
			dist += math.Exp(-th[v+1+i])
		}
	}
	return add + math.Exp(th[v])*math.Exp(-dist)
}

// Tell records a measurement.
func (b *Bayes) Tell(x []int, y float64) error {
	if err := b.space.Check(x); err != nil {
		return fmt.Errorf("bayes: tell: %w", err)
	}
	k := opt.Key(x)
	if b.told[k] {
		return fmt.Errorf("bayes: tell: %v was already told", x)
	}
	b.told[k] = true
	if !math.IsNaN(y) {
		b.x = append(b.x, slices.Clone(x))
		b.y = append(b.y, y)
	}
	return nil
}

// Ask proposes the untried point with the highest expected improvement.
func (b *Bayes) Ask(ctx context.Context) ([]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var free [][]int
	for _, c := range b.cands {
		if !b.told[opt.Key(c)] {
			free = append(free, c)
		}
	}
	if len(free) == 0 {
		return nil, opt.ErrExhausted
	}
	if b.prior == nil && len(b.y) < b.o.Init {
		return b.spaceFilling(free), nil
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
	bi, bv := -1, math.Inf(-1)
	for i := range free {
		a := ei(mu[i], sd[i], best+b.o.Explore)
		if a > bv+1e-12 {
			bi, bv = i, a
		}
	}
	return free[bi], nil
}

// spaceFilling picks a random untried point that shares as few levels as possible with the
// points measured so far.
func (b *Bayes) spaceFilling(free [][]int) []int {
	bestShared := math.MaxInt
	var pool [][]int
	for _, c := range free {
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
	return pool[b.rng.IntN(len(pool))]
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
		if b.prior != nil {
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
	if b.prior == nil {
		return r
	}
	c := th[2*b.nv+2]
	for i, x := range b.x {
		r[i] -= c * b.pmean[opt.Key(x)]
	}
	return r
}

func (b *Bayes) gram(th []float64) *mat.SymDense {
	n := len(b.x)
	k := mat.NewSymDense(n, nil)
	noise := math.Exp(th[2*b.nv+1])
	for i := range n {
		for j := i; j < n; j++ {
			v := b.kernel(th, b.x[i], b.x[j])
			if i == j {
				v += noise + 1e-8
			}
			k.SetSym(i, j, v)
		}
	}
	return k
}

// nll is the penalized negative log marginal likelihood.
func (b *Bayes) nll(th, ys []float64) float64 {
	var ch mat.Cholesky
	if !ch.Factorize(b.gram(th)) {
		return math.Inf(1)
	}
	r := mat.NewVecDense(len(ys), b.residual(th, ys))
	var alpha mat.VecDense
	if err := ch.SolveVecTo(&alpha, r); err != nil {
		return math.Inf(1)
	}
	return 0.5*mat.Dot(r, &alpha) + 0.5*ch.LogDet() + b.penalty(th)
}

// fit maximizes the penalized marginal likelihood from the last fit and from the defaults.
func (b *Bayes) fit(ys []float64) {
	if len(ys) < 2 {
		return
	}
	f := func(th []float64) float64 { return b.nll(th, ys) }
	best, bestF := b.theta, f(b.theta)
	for _, start := range [][]float64{b.theta, b.defaultTheta()} {
		res, err := optimize.Minimize(optimize.Problem{Func: f}, slices.Clone(start),
			&optimize.Settings{FuncEvaluations: 300}, &optimize.NelderMead{})
		if err != nil && res == nil {
			continue
		}
		if res.F < bestF {
			best, bestF = res.X, res.F
		}
	}
	b.theta = best
}

// predict returns the posterior mean and standard deviation (standardized units) at pts.
func (b *Bayes) predict(ys []float64, pts [][]int) ([]float64, []float64, error) {
	th := b.theta
	m := len(pts)
	mu := make([]float64, m)
	sd := make([]float64, m)
	c := th[2*b.nv+2]
	n := len(b.x)
	for j, p := range pts {
		if b.prior != nil {
			mu[j] = c * b.pmean[opt.Key(p)]
		}
		sd[j] = b.kernel(th, p, p)
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
		ks := mat.NewDense(n, m, nil)
		for i := range n {
			for j, p := range pts {
				ks.Set(i, j, b.kernel(th, b.x[i], p))
			}
		}
		var l mat.TriDense
		ch.LTo(&l)
		var v mat.Dense
		if err := v.Solve(&l, ks); err != nil {
			return nil, nil, fmt.Errorf("bayes: %w", err)
		}
		for j := range m {
			mu[j] += mat.Dot(ks.ColView(j), &alpha)
			col := v.ColView(j)
			sd[j] -= mat.Dot(col, col)
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(max(sd[j], 1e-12))
	}
	return mu, sd, nil
}

// ei is the expected improvement over best of a normal(mu, sd).
func ei(mu, sd, best float64) float64 {
	z := (mu - best) / sd
	return sd * (z*normCDF(z) + normPDF(z))
}

func normPDF(z float64) float64 { return math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) }
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// fitPrior turns other tasks' observations into a prior mean over the candidates: each task's
// values are standardized, and a ridge model of level effects is fitted to all of them.
func (b *Bayes) fitPrior(obs []opt.Observation) error {
	byTask := map[string][]int{}
	var tasks []string
	for i, o := range obs {
		if err := b.space.Check(o.X); err != nil && len(o.X) != b.nv {
			return fmt.Errorf("bayes: prior observation %d: %w", i, err)
		}
		if _, ok := byTask[o.Task]; !ok {
			tasks = append(tasks, o.Task)
		}
		byTask[o.Task] = append(byTask[o.Task], i)
	}
	z := make([]float64, len(obs))
	for _, t := range tasks {
		idx := byTask[t]
		m, s := 0.0, 0.0
		for _, i := range idx {
			m += obs[i].Y
		}
		m /= float64(len(idx))
		for _, i := range idx {
			s += (obs[i].Y - m) * (obs[i].Y - m)
		}
		s = math.Sqrt(s / float64(len(idx)))
		if s < 1e-9 {
			s = 1
		}
		for _, i := range idx {
			z[i] = (obs[i].Y - m) / s
		}
	}
	// Ridge regression on one-hot level indicators: (XᵀX + λI) β = Xᵀz.
	offs := make([]int, b.nv+1)
	for v, l := range b.space.Levels {
		offs[v+1] = offs[v] + len(l)
	}
	p := offs[b.nv]
	xm := mat.NewDense(len(obs), p, nil)
	for i, o := range obs {
		for v, l := range o.X {
			xm.Set(i, offs[v]+l, 1)
		}
	}
	var xtx mat.SymDense
	xtx.SymOuterK(1, xm.T())
	for i := range p {
		xtx.SetSym(i, i, xtx.At(i, i)+1.0)
	}
	var xtz mat.VecDense
	xtz.MulVec(xm.T(), mat.NewVecDense(len(z), z))
	var ch mat.Cholesky
	if !ch.Factorize(&xtx) {
		return fmt.Errorf("bayes: prior level effects are not identifiable")
	}
	var beta mat.VecDense
	if err := ch.SolveVecTo(&beta, &xtz); err != nil {
		return fmt.Errorf("bayes: prior level effects: %w", err)
	}
	b.pmean = make(map[string]float64, len(b.cands))
	b.prior = make([]float64, len(b.cands))
	for j, c := range b.cands {
		s := 0.0
		for v, l := range c {
			s += beta.AtVec(offs[v] + l)
		}
		b.pmean[opt.Key(c)] = s
		b.prior[j] = s
	}
	return nil
}
