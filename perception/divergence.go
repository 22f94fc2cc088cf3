package perception

import (
	"fmt"
	"math"

	"github.com/labmate/labmate/protocol"
)

// divergence reports a telemetry series that grows without bound: what explicit Euler does on
// a stiff system, a recurrence with a multiplier above one, gradient descent with a learning
// rate past its limit. Exponential growth is a straight line in log|x| (|x| the magnitude, the
// largest |element| of a vector), whatever its rate, so the detector fits log|x| — through
// the upper envelope of two samples, so that a value alternating in sign and passing near zero
// does not break the line — over windows of growing length: the last 8, 16, 32 and 64 samples,
// and a view of the whole run thinned to at most 32 points. A window shows sustained
// exponential growth when all of these hold:
//
//   - log|x| rose in at least 85% of its steps (70% in windows over 16 points, which must
//     then also fit a straight line with R² ≥ 0.9): the growth is consistent, not a noisy
//     series that drifts;
//   - the fitted line rises by at least three decades (two for a residual or a loss, whose
//     role is to fall) over the window;
//   - the newer half of the window climbs at least half as fast as the older half (0.6 in
//     windows over 16 points): polynomial
//     growth from near zero (t³ from the first steps) and a logistic curve approaching its
//     bound climb fast at first and then slow down, transient growth turns over — none of
//     them is a straight line.
//
// What the growth means depends on the series' role (see Role). A residual or a loss that
// grows exponentially to 100 times the best value it reached (and over 12 samples or more)
// has diverged: an Error. So has one that rises at nine steps in ten, however slowly, from
// its start (never having fallen below it) to ten times that start over 64 samples or more
// (see steadyMin): it never converged. So has the norm of a simulation's state (`max|u|`, `||u||`) that
// grows exponentially, along a straight line over 24 samples or more, to 1000 times its first
// value: a stable scheme keeps it bounded (transient growth turns over). Any other series is an Error once |x| is also 10¹⁰ times its
// initial scale (its first non-zero magnitude, or 1 if that was smaller — values that stay
// below 10¹⁰ never count): the run has left any plausible range and is still accelerating
// away, at whatever rate it got there. Before that it is a Warning once |x| is 10³ times the
// initial scale over a window of 16 samples or more (so a quantity growing from 10⁻⁵ towards
// 0.1, like a product concentration in a stiff kinetics problem, stays Normal): a population
// in its exponential phase, a perturbation growing in a chaotic system and an unstable loop
// look alike for a while, so that is an ambiguous window for a judge, not an interrupt. There
// is no absolute bound by default (Thresholds.DivergenceBound sets one).
//
// A large but bounded value (a constant 1e30, a logistic curve saturating at 1e12), a
// converging series and a transient bump do not fit a rising line at their end: all stay
// Normal. A --watch bound on the series (`N < 1e20`, `N in [0, 1e20]`) replaces the detector:
// growth below the bound was declared.
type divergence struct {
	window int     // the shortest window that judges fast growth (16)
	bound  float64 // |x| at or above it diverged at once (+Inf: none)
	scan   [divRing]float64
}

const (
	divergenceMinSamples = 8
	divergenceRise       = 3.0  // decades a window must rise
	divergenceRoleRise   = 2.0  // … for a residual or a loss
	divergenceGrowth     = 10.0 // decades above the initial scale for an Error
	divergenceOverBest   = 2.0  // residual or loss: decades above its best for an Error
	divergenceRoleMin    = 12   // residual or loss: samples the growth must span
	divergenceBoundedMin = 24   // a state norm: samples the growth must span
	divergenceUpShare    = 85   // percent of the steps that must rise (short windows)
	divergenceLongShare  = 70   // … in windows over 16 points
	divergenceR2         = 0.9  // least R² of the line in windows over 16 points
	log10Zero            = -400 // log10 of a zero magnitude: below any double
	divRing              = 64   // the longest recent window
	divLong              = 32   // points of the whole-run view
)

// divergenceState is one series' history of log10|x|.
type divergenceState struct {
	ring   [divRing]float64
	n      int     // samples seen
	scale  float64 // log10 of the initial scale
	first  float64 // log10 of the first non-zero magnitude
	scaled bool
	best   float64 // the lowest log10|x| so far
	level  int     // 1 Warning, 2 Error already reported

	long    [divLong]float64 // every stride-th sample, the whole run
	nLong   int
	stride  int
	pending int // samples since the last point of the long view
}

// record adds one sample's log-magnitude to the recent ring and the long view.
func (st *divergenceState) record(lg float64) {
	st.ring[st.n%divRing] = lg
	if st.n == 0 || lg < st.best {
		st.best = lg
	}
	st.n++
	if st.stride == 0 {
		st.stride = 1
	}
	st.pending++
	if st.pending < st.stride {
		return
	}
	st.pending = 0
	if st.nLong == divLong { // thin out: keep every other point, double the stride
		for i := range divLong / 2 {
			st.long[i] = st.long[2*i+1]
		}
		st.nLong, st.stride = divLong/2, 2*st.stride
	}
	st.long[st.nLong] = lg
	st.nLong++
}

// steadyMin samples, rising at steadyShare percent of the steps of the whole-run view, to
// steadyRise decades above a start the series never fell far below: a residual or a loss
// that rises from the first iteration on, however slowly (linearly, as the recurrences of
// conjugate gradients on a nonsymmetric matrix, or a diverging training at a fixed rate),
// is never converging. A converging solver's residual may rise for a few iterations, bump by
// orders of magnitude and fall back, or grow for a few dozen iterations before it turns over
// (a stable but non-normal iteration); it does not rise tenfold at nine steps in ten for
// steadyMin samples.
const (
	steadyMin   = 64
	steadyShare = 90
	steadyRise  = 1.0
)

// risesSteadily: see steadyMin.
func (st *divergenceState) risesSteadily() bool {
	if st.n < steadyMin || st.nLong < 8 || st.best < st.first-0.3 {
		return false
	}
	last := st.ring[(st.n-1)%divRing]
	if last-st.first < steadyRise || last-st.best < steadyRise {
		return false
	}
	up := 0
	for i := 1; i < st.nLong; i++ {
		if st.long[i] > st.long[i-1] {
			up++
		}
	}
	return up*100 >= steadyShare*(st.nLong-1)
}

// growth is what a window of log10|x| shows.
type growth struct {
	k      int     // points
	span   int     // samples covered
	rise   float64 // decades, along the fitted line
	factor float64 // the measured ratio, last over first point
}

func (d *divergence) sample(sr *series, mag float64) (finding, bool) {
	st := &sr.div
	if st.level == 2 {
		return finding{}, false
	}
	if mag >= d.bound {
		st.level = 2
		ev := fmt.Sprintf("|%s| = %s", sr.label(), num(mag))
		return finding{state: protocol.Error, message: fmt.Sprintf("%s diverged: |%s| reached %s (bound %s)", sr.label(), sr.name, num(mag), num(d.bound)), evidence: ev, severity: 1}, true
	}
	lg := float64(log10Zero)
	if mag > 0 {
		lg = math.Log10(mag)
		if !st.scaled {
			st.scale, st.first, st.scaled = max(lg, 0), lg, true
		}
	}
	st.record(lg)
	if st.n < divergenceMinSamples || !st.scaled {
		return finding{}, false
	}
	falls := sr.role.role == RoleResidual || sr.role.role == RoleLoss
	bounded := sr.role.role == RoleBounded
	if falls && st.level < 2 && st.risesSteadily() {
		st.level = 2
		return finding{
			state: protocol.Error,
			message: fmt.Sprintf("%s rises steadily: |%s| has never fallen below its start and grew to %s, %s× its start, rising at %d%% or more of its steps over %d samples; it is a %s",
				sr.label(), sr.name, num(mag), num(math.Pow(10, lg-st.first)), steadyShare, st.n, sr.role.describe()),
			evidence: fmt.Sprintf("|%s| = %s, start %s", sr.label(), num(mag), num(math.Pow(10, st.first))),
			severity: 0.9, role: sr.roleText(),
		}, true
	}
	if lg-st.scale < divergenceRise && (!falls || lg-st.best < divergenceOverBest) && (!bounded || lg-st.first < divergenceRise) {
		return finding{}, false // still near its initial scale and its best: nothing to judge
	}
	g, ok := d.grows(st, falls)
	if !ok {
		return finding{}, false
	}
	switch {
	case falls && lg-st.best >= divergenceOverBest && g.span < divergenceRoleMin && st.level < 1:
		st.level = 1 // fast growth, not yet over a dozen samples: a Warning first
		return finding{
			state:    protocol.Warning,
			message:  fmt.Sprintf("%s grows exponentially: |%s| grew ×%s over %d samples; it is a %s", sr.label(), sr.name, num(g.factor), g.span, sr.role.describe()),
			evidence: fmt.Sprintf("|%s| = %s, ×%s in %d samples", sr.label(), num(mag), num(g.factor), g.span),
			severity: 0.5, role: sr.roleText(),
		}, true
	case falls && lg-st.best >= divergenceOverBest && g.span >= divergenceRoleMin:
		st.level = 2
		return finding{
			state: protocol.Error,
			message: fmt.Sprintf("%s diverges: |%s| grew ×%s over %d samples to %s, %s× its best %s; it is a %s",
				sr.label(), sr.name, num(g.factor), g.span, num(mag), num(math.Pow(10, lg-st.best)), num(math.Pow(10, st.best)), sr.role.describe()),
			evidence: fmt.Sprintf("|%s| = %s, ×%s in %d samples", sr.label(), num(mag), num(g.factor), g.span),
			severity: 0.9, role: sr.roleText(),
		}, true
	case bounded && lg-st.first >= divergenceRise && g.span >= divergenceBoundedMin:
		st.level = 2
		return finding{
			state: protocol.Error,
			message: fmt.Sprintf("%s diverges: |%s| grew ×%s over %d samples to %s, %s× its start; it is a %s",
				sr.label(), sr.name, num(g.factor), g.span, num(mag), num(math.Pow(10, lg-st.first)), sr.role.describe()),
			evidence: fmt.Sprintf("|%s| = %s, ×%s in %d samples", sr.label(), num(mag), num(g.factor), g.span),
			severity: 0.9, role: sr.roleText(),
		}, true
	case lg-st.scale >= divergenceGrowth:
		st.level = 2
		return finding{
			state:    protocol.Error,
			message:  fmt.Sprintf("%s diverges: |%s| grew ×%s over %d samples to %s", sr.label(), sr.name, num(g.factor), g.span, num(mag)),
			evidence: fmt.Sprintf("|%s| = %s, ×%s in %d samples", sr.label(), num(mag), num(g.factor), g.span),
			severity: 0.9, role: sr.roleText(),
		}, true
	case g.span >= 16 && st.level < 1 && lg-st.scale >= divergenceRise:
		st.level = 1
		return finding{
			state:    protocol.Warning,
			message:  fmt.Sprintf("%s grows exponentially: |%s| grew ×%s over %d samples", sr.label(), sr.name, num(g.factor), g.span),
			evidence: fmt.Sprintf("|%s| = %s, ×%s in %d samples", sr.label(), num(mag), num(g.factor), g.span),
			severity: 0.5, role: sr.roleText(),
		}, true
	}
	return finding{}, false
}

// grows judges the recent windows (8, 16, 32, 64 samples) and the whole-run view, longest
// rise first; it returns the window that shows sustained exponential growth.
func (d *divergence) grows(st *divergenceState, falls bool) (growth, bool) {
	minRise := divergenceRise
	if falls {
		minRise = divergenceRoleRise
	}
	var best growth
	found := false
	try := func(x []float64, stride int) {
		if g, ok := fitGrowth(x, minRise); ok {
			g.span = (g.k-1)*stride + 1
			if !found || g.span > best.span {
				best, found = g, true
			}
		}
	}
	for _, k := range [...]int{divergenceMinSamples, d.window, 32, divRing} {
		if k > st.n || k > divRing {
			continue
		}
		if st.ring[(st.n-1)%divRing]-st.ring[(st.n-k)%divRing] < minRise {
			continue // too little rise to fit: the cheap common case
		}
		x := d.scan[:k]
		for i := range k {
			x[i] = st.ring[(st.n-k+i)%divRing]
		}
		try(x, 1)
	}
	if st.stride > 1 && st.nLong >= 16 {
		for _, k := range [...]int{16, st.nLong} {
			if st.long[st.nLong-1]-st.long[st.nLong-k] < minRise {
				continue
			}
			x := d.scan[:k]
			copy(x, st.long[st.nLong-k:st.nLong])
			try(x, st.stride)
		}
	}
	return best, found
}

// fitGrowth reports whether the log-magnitudes x (oldest first) climb along a straight line
// by at least minRise decades (see divergence). x is overwritten with its envelope.
func fitGrowth(x []float64, minRise float64) (growth, bool) {
	k := len(x)
	if k < divergenceMinSamples {
		return growth{}, false
	}
	first, last := x[0], x[k-1]
	if last-first < minRise {
		return growth{}, false
	}
	for i := k - 1; i > 0; i-- { // the upper envelope of two samples
		x[i] = max(x[i], x[i-1])
	}
	ups := 0
	for i := 1; i < k; i++ {
		if x[i] > x[i-1] {
			ups++
		}
	}
	share := divergenceUpShare
	if k > 16 {
		share = divergenceLongShare
	}
	if ups*100 < share*(k-1) {
		return growth{}, false
	}
	b, r2 := lineFit(x)
	if k > 16 && r2 < divergenceR2 {
		return growth{}, false
	}
	rise := b * float64(k-1)
	if rise < minRise {
		return growth{}, false
	}
	h := k / 2
	b1, _ := lineFit(x[:h+1])
	b2, _ := lineFit(x[h:])
	decel := 0.5
	if k > 16 {
		decel = 0.6 // a long window must be straighter
	}
	if b2 < decel*b1 {
		return growth{}, false // decelerating: polynomial, saturating or transient
	}
	return growth{k: k, rise: rise, factor: math.Pow(10, last-first)}, true
}

// lineFit is the least-squares slope of x against its index, and the fit's R².
func lineFit(x []float64) (slope, r2 float64) {
	n := float64(len(x))
	if len(x) < 2 {
		return 0, 0
	}
	mi := (n - 1) / 2
	var mx float64
	for _, v := range x {
		mx += v
	}
	mx /= n
	var sxy, sxx, syy float64
	for i, v := range x {
		di, dv := float64(i)-mi, v-mx
		sxy += di * dv
		sxx += di * di
		syy += dv * dv
	}
	slope = sxy / sxx
	if syy == 0 {
		return slope, 1
	}
	return slope, sxy * sxy / (sxx * syy)
}
