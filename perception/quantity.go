package perception

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/protocol"
)

// quantity judges a series against its role over the whole run (see Role):
//
//   - stall (a residual): over the last ResidualStall (25) samples the residual set at most
//     a fifth of them as new bests, none in the last half, and its best improved less than
//     twofold, while the median
//     of those samples is at least 1.5 times the best: it bounces far above what it once
//     reached instead of falling toward its tolerance — a Newton iteration wandering without
//     converging, a fixed point that cycles —, turning back at least every fourth step (a
//     hump that rises and then falls, the transient growth of a non-normal iteration, is
//     not wandering; steady growth is the divergence detector's). A residual that has already fallen eight decades
//     from its largest value is at its rounding floor and is not judged; a plateau at its
//     best (a long flat stretch before a drop) has its median at the best and stays Normal;
//     a slow but steady residual sets a new best at every step. A residual that repeats the
//     same value 13 times in a row, above its rounding floor, has stalled too (a restarted
//     Krylov solver that makes no progress), and so has one that cycles through two to four
//     values as many times (a Newton iteration flipping between two points).
//   - drift (a conserved quantity): its relative drift — |x| for a relative error such as
//     dE/E0, |x − x₀| / |x₀| for a total — reaching DriftTolerance (5%) for 10 samples in a
//     row, from the 20th sample on, while it is also 1.5 times the largest drift of the first
//     half of the run: a secular drift (explicit Euler's energy growing step after step), not
//     the bounded oscillation of a symplectic integrator's energy error, which reaches its
//     amplitude in the first period and keeps it.
//   - range: an absolute temperature below zero, a probability outside [0, 1] (one that
//     started inside it), or an amount (a population, a stock, a mass, a concentration)
//     below zero by more than 10⁻⁴ of its largest magnitude, in two samples with fewer than
//     three in a row back in range between them.
//
// Growth (divergence) and non-finite values are judged by their own detectors, with the
// role lowering their bars; a controlled quantity (LAMMPS' thermostatted temperature) by
// the LAMMPS rules.
type quantity struct {
	stall     int     // samples without progress that make a residual stalled (25)
	drift     float64 // relative drift of a conserved quantity → Error (0.05)
	deviation float64 // relative distance from a setpoint (0.5) …
	rows      int     // … for this many samples in a row → Error (15)
	scan      [divRing]float64
}

const (
	stallMedian    = 0.176 // log10 1.5: the median this far above the best bounces
	stallImprove   = 0.301 // log10 2: a best that improved this much progresses
	stallFloor     = 8.0   // decades below its largest value: a rounding floor
	stallTurns     = 4     // at least one step in this many turns back: it wanders
	residualFrozen = 12    // a residual repeating its value this many times more has stalled
	lossFrozen     = 11    // a loss repeating its value this many times more (12 in all) …
	lossSettle     = 4     // … after this many shrinking steps …
	lossSettleBy   = 4.0   // … that shrank this much, while it is still over half its largest value (lossFell), has stopped learning
	lossFell       = 0.301 // log10 2
	stallLong      = 40    // samples without any new best that make a residual stuck …
	stuckDepth     = 2.0   // … when it fell less than this many decades from its largest value …
	stuckMedian    = 0.021 // … and its median is this far above its best (log10 1.05)
	stuckGain      = 0.046 // a new best counts when it improves by 10% (-log10 0.9)
	episodeJump    = 3.0   // decades: a converged residual jumping back up this much starts a new solve
	driftMinN      = 20    // samples before drift is judged
	driftRun       = 10    // samples in a row beyond the tolerance
	driftSecular   = 1.5   // drift now over the first half's largest
	linearDrift    = 50    // a linear invariant's tolerance is DriftTolerance over this (0.1%)
	chainFrozen    = 39    // a chain's series repeating its value this many times more (40 in all) is stuck
	acceptHealthy  = 0.1   // an acceptance rate this high is a working sampler …
	acceptLow      = 0.05  // … and one at most this for collapseRun samples in a row …
	acceptMean     = 0.01  // … averaging at most this has frozen
	collapseRun    = 10
	rangeRun       = 2 // samples out of range …
	rangeClear     = 3 // … without this many in a row back inside
	rangeTolerance = 1e-9
	// amountTolerance is how far below zero, relative to its largest magnitude, an amount
	// must go to be negative rather than rounded.
	amountTolerance = 1e-4
)

// quantityState is one series' state for the role rules.
type quantityState struct {
	n         int
	bests     [divRing]float64 // running best log10|x| at each recent sample (residual)
	maxLog    float64
	negative  bool // a residual took a negative value: not a norm, not judged for stalls
	last      float64
	repeats   int     // a residual or a loss: samples in a row equal to the one before
	changed   bool    // a loss: it changed at least once …
	lastStep  float64 // … its last change …
	decel     int     // … the changes in a row no larger than the one before …
	decelFrom float64 // … and the first of them
	epBest    float64 // the best log10|x| of the current episode (one solve)
	epStart   int     // the sample the episode started at
	epBestAt  int     // the sample its best last improved by 10% or more (stuckGain) …
	sigBest   float64 // … to this log10|x|

	x0, scale float64 // conserved: the start and the scale of the relative drift
	have0     bool
	drifts    thinned // the drift over the whole run
	over      int     // samples in a row beyond the tolerance

	outside int // range: samples outside since the last rangeClear in a row inside
	inRow   int // range: samples in a row inside
	maxAbs  float64
	inside  bool // range: every sample so far was inside (a probability)

	hadHealthy bool    // acceptance: it was at acceptHealthy or more
	lowRun     int     // acceptance: samples in a row at acceptLow or less …
	lowSum     float64 // … and their sum
	reported   bool
}

// thinned keeps a series over the whole run in at most divLong points: when full, pairs of
// points merge into their maximum and the stride doubles.
type thinned struct {
	v       [divLong]float64
	n       int // samples seen
	k       int // points held
	stride  int
	pending int
}

func (t *thinned) add(x float64) {
	t.n++
	if t.stride == 0 {
		t.stride = 1
	}
	t.pending++
	if t.pending < t.stride {
		t.v[t.k-1] = max(t.v[t.k-1], x)
		return
	}
	t.pending = 0
	if t.k == divLong {
		for i := range divLong / 2 {
			t.v[i] = max(t.v[2*i], t.v[2*i+1])
		}
		t.k, t.stride = divLong/2, 2*t.stride
	}
	t.v[t.k] = x
	t.k++
}

// firstHalfMax is the largest value of the first half of the run so far.
func (t *thinned) firstHalfMax() float64 {
	m := 0.0
	for _, x := range t.v[:t.k/2] {
		m = max(m, x)
	}
	return m
}

// judgeRole applies the role rules to one finite scalar sample of sr.
func (m *Monitor) judgeRole(t time.Time, sr *series, v float64) {
	q, st := &m.qty, &sr.qty
	if st.reported {
		return
	}
	st.n++
	switch sr.role.role {
	case RoleResidual:
		if m.prof.qe && sr.name == "scf_accuracy" {
			return // judged per SCF cycle by the Quantum ESPRESSO rules
		}
		if f, ok := q.stalled(sr, v); ok {
			st.reported = true
			m.raise(detStall, m.corrected(sr, detStall, f))
		}
	case RoleLoss:
		if f, ok := q.lossStuck(sr, v); ok {
			st.reported = true
			m.raise(detStall, f)
		}
	case RoleConserved:
		if f, ok := q.drifting(sr, v); ok {
			st.reported = true
			m.raise(detDrift, m.corrected(sr, detDrift, f))
		}
	case RolePositive, RoleProbability, RoleNonNegative:
		if f, ok := q.outOfRange(sr, v); ok {
			st.reported = true
			m.raise(detRange, m.corrected(sr, detRange, f))
			return
		}
		if sr.role.role == RoleProbability && !m.ctx.annealing && slices.Contains(acceptanceNames, sr.lower) {
			if f, ok := q.collapsed(sr, v); ok {
				st.reported = true
				m.raise(detStall, f)
			}
		}
	}
}

// stalled is the residual rule.
func (q *quantity) stalled(sr *series, v float64) (finding, bool) {
	st, d := &sr.qty, &sr.div
	if v < 0 {
		st.negative = true
	}
	lg := float64(log10Zero)
	if v != 0 {
		lg = math.Log10(abs(v))
	}
	// An episode is one solve: a residual that had converged by three decades and jumps back
	// up by three (the next solve of a sweep, the next time step's Newton) starts a new one.
	if st.n == 1 || st.epBest <= st.maxLog-episodeJump && lg >= st.epBest+episodeJump {
		st.maxLog, st.epBest, st.epStart, st.epBestAt, st.sigBest, st.repeats = lg, lg, d.n-1, d.n-1, lg, 0
	}
	st.maxLog = max(st.maxLog, lg)
	st.epBest = min(st.epBest, lg)
	if lg <= st.sigBest-stuckGain {
		st.sigBest, st.epBestAt = lg, d.n-1
	}
	i := (d.n - 1) % divRing // divergence recorded this sample already
	st.bests[i] = st.epBest
	if v == st.last && v != 0 {
		st.repeats++
	} else {
		st.repeats = 0
	}
	st.last = v
	if st.repeats >= residualFrozen && !st.negative && st.epBest >= st.maxLog-stallFloor {
		return finding{
			state: protocol.Error,
			message: fmt.Sprintf("%s is not converging: it repeated %s for %d samples in a row, %s below its largest value; it is a %s",
				sr.label(), num(v), st.repeats+1, percent(1-v/math.Pow(10, st.maxLog)), sr.role.describe()),
			evidence: fmt.Sprintf("%s = %s, %d times in a row", sr.label(), num(v), st.repeats+1),
			severity: 0.8, role: sr.roleText(),
		}, true
	}
	if fs := &sr.stag; fs.period > 0 && fs.cyc >= residualFrozen && !st.negative && st.epBest >= st.maxLog-stallFloor {
		// a cycle: Newton's iterates flipping between two points, whatever else changes
		return finding{
			state: protocol.Error,
			message: fmt.Sprintf("%s is not converging: it cycles through %d values (now %s) for %d samples in a row; it is a %s",
				sr.label(), fs.period, num(v), fs.cyc+fs.period, sr.role.describe()),
			evidence: fmt.Sprintf("%s = %s, a cycle of period %d", sr.label(), num(v), fs.period),
			severity: 0.8, role: sr.roleText(),
		}, true
	}
	if f, ok := q.stuck(sr); ok {
		return f, true
	}
	n := q.stall
	if st.negative || d.n-st.epStart < n+5 || n >= divRing {
		return finding{}, false
	}
	best := st.epBest
	then := st.bests[(d.n-1-n)%divRing]
	if then-best >= stallImprove || best < st.maxLog-stallFloor {
		return finding{}, false
	}
	news, last := 0, 0
	for k := d.n - n; k < d.n; k++ {
		if st.bests[k%divRing] < st.bests[(k-1)%divRing] {
			news, last = news+1, k
		}
	}
	if news*5 > n || last >= d.n-n/2 {
		return finding{}, false // progressing: new bests, or one in the last half of the window
	}
	turns, med := q.wander(d, n) // direction changes: wandering, not a hump that rises and falls
	if turns*stallTurns < n || med-best < stallMedian {
		return finding{}, false
	}
	bestV := math.Pow(10, best)
	return finding{
		state: protocol.Error,
		message: fmt.Sprintf("%s is not converging: it has not improved on its best %s in %d samples, and wanders around %s (now %s); it is a %s",
			sr.label(), num(bestV), n, num(math.Pow(10, med)), num(v), sr.role.describe()),
		evidence: fmt.Sprintf("%s = %s, best %s, median of the last %d %s", sr.label(), num(v), num(bestV), n, num(math.Pow(10, med))),
		severity: 0.8, role: sr.roleText(),
	}, true
}

// chainStuck is the Markov-chain rule: in a code that samples a Markov chain (Metropolis,
// MCMC, Gibbs, HMC; not an annealing schedule), two series of the chain — a parameter and its
// log-density, two parameters — that moved before and then both repeat their exact values
// chainFrozen times in a row have stopped mixing: every proposal is rejected (a step far too large, a log-density
// that became -inf or NaN at the proposals). A healthy chain rejects often, but 40 rejections
// in a row at an acceptance of 20% happen once in 10⁴ runs; a running acceptance or mean
// that still creeps does not hide it. One series alone is not enough: an adapted step size or
// a converged gain stays put while the chain moves. Acceptance rates, clocks and best-so-far
// values are not the chain.
func (m *Monitor) chainStuck(sr *series, s *protocol.Sample) {
	if m.chainReported || !chainFrozenSeries(sr) {
		return
	}
	fs := &sr.stag
	partner := false // the state and its log-density freeze together; an adapted step size alone does not
	for _, o := range m.series {
		if o != sr && chainFrozenSeries(o) {
			partner = true
			break
		}
	}
	if !partner {
		return
	}
	m.chainReported = true
	m.raise(detStall, finding{
		state: protocol.Error,
		message: fmt.Sprintf("the Markov chain is stuck: %s repeated %s for %d samples in a row; every proposal is rejected",
			sr.label(), num(s.Value), fs.same+1),
		evidence:   fmt.Sprintf("%s = %s, %d times in a row", sr.label(), num(s.Value), fs.same+1),
		severity:   0.8,
		correction: "the sampler rejects every proposal: shrink the proposal step (aim for 20–50% acceptance), and check that the log-density is finite around the current state",
	})
}

// chainFrozenSeries: sr moved, and has now repeated its value chainFrozen times; it is no
// clock, acceptance rate or running extreme.
func chainFrozenSeries(sr *series) bool {
	fs := &sr.stag
	return fs.same >= chainFrozen && fs.changed && !(fs.steps > 0 && fs.even*clockShare >= fs.steps*(clockShare-1)) &&
		sr.role.role != RoleProbability && !isRunningExtreme(sr.lower)
}

// isRunningExtreme: a best-so-far or running extreme (best_loss, min_E, max_logp), which
// legitimately repeats.
func isRunningExtreme(lower string) bool {
	for _, p := range []string{"best", "min", "max", "lowest", "highest", "record"} {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}

// lossStuck is the loss rule: a loss that fell to no less than half its largest value,
// settled onto a value (its last lossSettle steps each at most twice the one before — the
// last printed digit jitters — and the last a quarter of the first or less) and then repeats that value exactly lossFrozen times in
// a row has stopped learning —
// every gradient but a bias's is zero (dead ReLUs, a saturated output), the learning rate
// underflowed, the parameters are frozen — while the loop keeps stepping. It is judged in
// samples, not seconds: twelve identical epochs are as telling printed fast as slow. A loss
// that keeps creeping in its last digit progresses; one that fell to under half its largest
// value and then repeats itself has converged (to its floor, or to a minimum that cannot be
// judged from the stream); a loss constant from its first sample is a printed constant; noisy
// losses never repeat exactly; a loss on a plateau before a drop creeps off it in its last
// digit, a step as large as the one before or larger, rather than settling.
func (q *quantity) lossStuck(sr *series, v float64) (finding, bool) {
	st := &sr.qty
	lg := float64(log10Zero)
	if v != 0 {
		lg = math.Log10(abs(v))
	}
	if st.n == 1 {
		st.maxLog, st.last = lg, v
		return finding{}, false
	}
	st.maxLog = max(st.maxLog, lg)
	if v == st.last {
		st.repeats++
	} else {
		// Steps that shrink (or repeat at the printed resolution) are a loss converging onto
		// a value; one that grows again restarts the run.
		step := abs(v - st.last)
		if st.changed && step <= 2*st.lastStep { // the printed value's last digit jitters
			st.decel++
		} else {
			st.decel, st.decelFrom = 0, step
		}
		st.repeats, st.changed, st.lastStep = 0, true, step
	}
	st.last = v
	if !st.changed || st.repeats < lossFrozen || lg < st.maxLog-lossFell || v == 0 || st.decel < lossSettle || st.decelFrom < lossSettleBy*st.lastStep {
		return finding{}, false
	}
	return finding{
		state: protocol.Error,
		message: fmt.Sprintf("%s stopped learning: it repeated %s for %d samples in a row, only %s below its largest value %s; it is a %s",
			sr.label(), num(v), st.repeats+1, percent(1-v/math.Pow(10, st.maxLog)), num(math.Pow(10, st.maxLog)), sr.role.describe()),
		evidence:   fmt.Sprintf("%s = %s, %d times in a row", sr.label(), num(v), st.repeats+1),
		severity:   0.8,
		role:       sr.roleText(),
		correction: "the parameters no longer move: check for dead units (ReLU biases, saturated outputs), vanishing gradients or a learning rate decayed to zero; re-initialise or rescale",
	}, true
}

// stuck is the residual rule's long view: a residual that never got far below its start (two
// decades) and then went stallLong samples, and at least as many as it took to reach its
// best, without improving on that best by 10% (a new low by a hair, which noise sets now
// and then, is no progress), bouncing around above it — a subgradient
// method at a kink, a fixed-step optimiser rattling in a valley, a Newton iteration caught in
// a basin without a root. A converging residual keeps setting new bests, and a plateau sits
// at its best (its median there) without turning back and forth.
func (q *quantity) stuck(sr *series) (finding, bool) {
	st, d := &sr.qty, &sr.div
	since := d.n - 1 - st.epBestAt
	if st.negative || since < stallLong || since < st.epBestAt-st.epStart || st.epBest < st.maxLog-stuckDepth {
		return finding{}, false
	}
	turns, med := q.wander(d, stallLong)
	if turns*stallTurns < stallLong || med-st.epBest < stuckMedian {
		return finding{}, false
	}
	bestV, v := math.Pow(10, st.epBest), math.Pow(10, d.ring[(d.n-1)%divRing])
	return finding{
		state: protocol.Error,
		message: fmt.Sprintf("%s is not converging: it fell only %s× from its largest value, to %s, and has not improved on that by 10%% in %d samples, bouncing around %s (now %s); it is a %s",
			sr.label(), num(math.Pow(10, st.maxLog-st.epBest)), num(bestV), since, num(math.Pow(10, med)), num(v), sr.role.describe()),
		evidence: fmt.Sprintf("%s = %s, best %s %d samples ago", sr.label(), num(v), num(bestV), since),
		severity: 0.8, role: sr.roleText(),
	}, true
}

// collapsed is the acceptance-rate rule: a Markov chain's acceptance rate that was healthy
// (10% or more) and then stays near zero — every one of collapseRun samples in a row at 5% or
// less, averaging 1% or less — has frozen the chain: it keeps its state and samples nothing
// (a proposal step grown far too large, an adaptation with the wrong sign, a likelihood
// that became -inf). A tuned sampler runs at 20–50%; an annealing schedule, whose acceptance
// falls to zero by design, is not judged.
func (q *quantity) collapsed(sr *series, v float64) (finding, bool) {
	st := &sr.qty
	if v >= acceptHealthy {
		st.hadHealthy = true
	}
	if !st.hadHealthy || v > acceptLow {
		st.lowRun, st.lowSum = 0, 0
		return finding{}, false
	}
	st.lowRun++
	st.lowSum += v
	if st.lowRun < collapseRun || st.lowSum > acceptMean*float64(st.lowRun) {
		return finding{}, false
	}
	return finding{
		state: protocol.Error,
		message: fmt.Sprintf("%s collapsed: %s now, at most %s for %d samples in a row (mean %s) after a healthy start; the chain is frozen; it is a %s",
			sr.label(), num(v), percent(acceptLow), st.lowRun, num(st.lowSum/float64(st.lowRun)), sr.role.describe()),
		evidence:   fmt.Sprintf("%s = %s, %d samples in a row at %s or less", sr.label(), num(v), st.lowRun, percent(acceptLow)),
		severity:   0.8,
		role:       sr.roleText(),
		correction: "the sampler accepts nothing: shrink the proposal step (adapt it toward 20–50% acceptance, and check the adaptation's sign), and check that the log-density is finite at the current state",
	}, true
}

// imbalance is the conserved-quantity rule for the error of a balance (`imbalance`,
// `mass_error`), which stays at zero to rounding, with no scale to be relative to: its
// magnitude grew at every one of driftRun samples in a row (at most two of them equal) to ten
// times the largest it had in the first half of the run, from the driftRun+5th sample — mass
// leaking out of a scheme that is not conservative, steadily. Rounding noise around zero
// does not climb ten samples in a row.
func (q *quantity) imbalance(sr *series, v float64) (finding, bool) {
	st := &sr.qty
	a := abs(v)
	st.drifts.add(a)
	switch {
	case a > st.last:
		st.over++
	case a == st.last && a > 0 && st.repeats < 2:
		st.repeats++
	default:
		st.over, st.repeats = 0, 0
	}
	st.last = a
	if st.n < driftRun+5 || st.over+st.repeats < driftRun || a == 0 {
		return finding{}, false
	}
	early := st.drifts.firstHalfMax()
	if a < 10*early {
		return finding{}, false
	}
	return finding{
		state: protocol.Error,
		message: fmt.Sprintf("%s is not conserved: the balance's error grew at each of the last %d samples, to %s (at most %s in the first half of the run); it is a %s",
			sr.label(), st.over+st.repeats, num(v), num(early), sr.role.describe()),
		evidence: fmt.Sprintf("%s = %s, growing %d samples in a row", sr.label(), num(v), st.over+st.repeats),
		severity: 0.9, role: sr.roleText(),
		correction: "the scheme does not conserve what it should: check the fluxes (a face flux must leave one cell and enter its neighbour, divided by each cell's own size) and the source and sink terms",
	}, true
}

// drifting is the conserved-quantity rule.
func (q *quantity) drifting(sr *series, v float64) (finding, bool) {
	st := &sr.qty
	if sr.role.zero {
		return q.imbalance(sr, v)
	}
	if !st.have0 {
		st.x0, st.have0 = v, true
		st.scale = abs(v)
		return finding{}, false
	}
	var drift float64
	switch {
	case sr.role.relative:
		drift = abs(v)
	case st.scale > 0:
		drift = abs(v-st.x0) / st.scale
	default:
		st.x0, st.scale = v, abs(v) // a zero start: measure from the first non-zero value
		return finding{}, false
	}
	st.drifts.add(drift)
	tol := q.drift
	if sr.role.linear {
		tol = q.drift / linearDrift // a linear invariant is kept to rounding by any consistent scheme
	}
	if drift < tol {
		st.over = 0
		return finding{}, false
	}
	st.over++
	if st.n < driftMinN || st.over < driftRun {
		return finding{}, false
	}
	early := st.drifts.firstHalfMax()
	if drift < driftSecular*early {
		return finding{}, false // bounded: the drift was as large in the first half
	}
	what := fmt.Sprintf("drifted by %s from its start %s", pct(drift), num(st.x0))
	if sr.role.relative {
		what = "reached " + num(v)
	}
	return finding{
		state: protocol.Error,
		message: fmt.Sprintf("%s is not conserved: it %s (tolerance %s), and the drift keeps growing (%s in the first half of the run); it is a %s",
			sr.label(), what, pct(tol), pct(early), sr.role.describe()),
		evidence: fmt.Sprintf("%s = %s, relative drift %s", sr.label(), num(v), pct(drift)),
		severity: 0.9, role: sr.roleText(),
	}, true
}

// pct formats a fraction as a percentage: whole percents from 10% on (67%, 123%), two
// significant digits below (5%, 0.12%).
func pct(x float64) string {
	if abs(x) >= 0.1 {
		return percent(x)
	}
	return strconv.FormatFloat(100*x, 'g', 2, 64) + "%"
}

// outOfRange is the physical-range rule.
func (q *quantity) outOfRange(sr *series, v float64) (finding, bool) {
	st := &sr.qty
	lo, hi, what := 0.0, math.Inf(1), "below zero"
	tol := rangeTolerance * max(1, abs(lo))
	if sr.role.role == RoleNonNegative {
		// A solver's rounding leaves an amount a hair below zero (ode45 on stiff kinetics:
		// -1e-12 of its scale); an explicit step that overshoots leaves it visibly negative.
		st.maxAbs = max(st.maxAbs, abs(v))
		tol = amountTolerance * st.maxAbs
	}
	if sr.role.role == RoleProbability {
		hi, what = 1, "outside [0, 1]"
		if st.n == 1 {
			st.inside = true
		}
	}
	out := v < lo-tol || v > hi+rangeTolerance
	if sr.role.role == RoleProbability && !st.inside {
		return finding{}, false
	}
	if !out {
		// One sample back inside does not clear it: explicit Euler past its stability limit
		// takes a probability out of [0, 1] every other step.
		if st.inRow++; st.inRow >= rangeClear {
			st.outside = 0
		}
		return finding{}, false
	}
	st.inRow = 0
	if sr.role.role == RoleProbability && st.outside == 0 && st.n <= 3 {
		st.inside = false // a percentage or a count, not a probability
		return finding{}, false
	}
	st.outside++
	if st.outside < rangeRun {
		return finding{}, false
	}
	return finding{
		state:    protocol.Error,
		message:  fmt.Sprintf("%s is %s: %s; it is a %s", sr.label(), what, num(v), sr.role.describe()),
		evidence: fmt.Sprintf("%s = %s", sr.label(), num(v)),
		severity: 0.9, role: sr.roleText(),
	}, true
}

// roleFor assigns a new series its role: from a watch constraint on it, the software
// profile and the code's declarations, and its name.
func (m *Monitor) roleFor(name string, cons []*Constraint) roleInfo {
	if m.prof.lammps && name == "Temp" {
		if th := &m.lmp.thermo; th.ok && th.group == "all" {
			return roleInfo{role: RoleControlled, why: th.describe()}
		}
	}
	ri := nameRole(name, &m.ctx, &m.prof)
	if ri.role == RoleResidual && m.prof.qe && name == "scf_accuracy" {
		ri.tol = m.qeIn.convThr
	}
	if ri.role == RoleUnknown {
		for _, c := range cons {
			if c.kind == decreasing {
				return roleInfo{role: RoleLoss, why: "--watch " + c.Expr + " declares that it falls"}
			}
		}
	}
	return ri
}

// wander reads the last n samples of d's ring: how often they turn back (a step against the
// last non-zero one) and their median.
func (q *quantity) wander(d *divergenceState, n int) (turns int, med float64) {
	prev := 0.0
	for k := d.n - n + 1; k < d.n; k++ {
		step := d.ring[k%divRing] - d.ring[(k-1)%divRing]
		if step*prev < 0 {
			turns++
		}
		if step != 0 {
			prev = step
		}
	}
	w := q.scan[:n]
	for k := range n {
		w[k] = d.ring[(d.n-n+k)%divRing]
	}
	slices.Sort(w)
	return turns, w[n/2]
}
