package perception

import (
	"fmt"
	"math"

	"github.com/labmate/labmate/protocol"
)

// divergence reports a telemetry series that grows without bound: what explicit Euler does on
// a stiff system, or a recurrence with a multiplier above one. It looks at the magnitude |x|
// (the largest |element| of a vector) over the last Window samples (default 16; judged from 8
// samples on) and calls the growth exponential when all of these hold:
//
//   - |x| rose in at least 85% of the steps (13 of 15): the growth is consistent, not a noisy
//     series that drifts;
//   - |x| rose by at least 10³ over the samples judged: three decades, fast enough that the
//     run cannot be slowly approaching a large value;
//   - the rise in the newer half of the samples is at least half the rise in the older half:
//     log|x| keeps climbing at a steady (or faster) rate. Polynomial growth from near zero
//     (t³ from the first steps) climbs fast at first and then slows: not divergence.
//
// Exponential growth is an Error once |x| is also 10¹⁰ times the series' initial scale (its
// first non-zero magnitude, or 1 if that was smaller — values that stay below 10¹⁰ never
// count): the run has left any plausible range and is still accelerating away. Before that it
// is a Warning once the window is full and |x| is 10³ times the initial scale (so a quantity
// growing from 10⁻⁵ towards 0.1, like a product concentration in a stiff kinetics problem,
// stays Normal): a population in its exponential phase, a perturbation growing in a chaotic
// system and an unstable loop look alike for a while, so that is an ambiguous window for a
// judge, not an interrupt. Independently, |x| ≥ Bound
// (default 1e100) is an Error at once: no physical quantity in any unit system gets there.
//
// A large but bounded value (a constant 1e30, a logistic curve saturating at 1e12) does not
// rise by 10³ with consistent steps at its bound, and a converging series falls: both stay
// Normal.
type divergence struct {
	window int
	bound  float64
}

const (
	divergenceMinSamples = 8
	divergenceRise       = 3.0  // decades over the judged samples
	divergenceGrowth     = 10.0 // decades above the initial scale for an Error
	divergenceUpShare    = 85   // percent of the steps that must rise
	log10Zero            = -400 // log10 of a zero magnitude: below any double
)

// divergenceState is one series' window of log10|x|.
type divergenceState struct {
	ring   []float64
	n      int     // samples seen
	scale  float64 // log10 of the initial scale
	scaled bool
	level  int // 1 Warning, 2 Error already reported
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
			st.scale, st.scaled = max(lg, 0), true
		}
	}
	w := len(st.ring)
	st.ring[st.n%w] = lg
	st.n++
	k := min(st.n, w)
	if k < divergenceMinSamples {
		return finding{}, false
	}
	base := st.n - k
	first := st.ring[base%w]
	rise := lg - first
	if rise < divergenceRise {
		return finding{}, false
	}
	ups, prev := 0, first
	for i := 1; i < k; i++ {
		x := st.ring[(base+i)%w]
		if x > prev {
			ups++
		}
		prev = x
	}
	if ups*100 < divergenceUpShare*(k-1) {
		return finding{}, false
	}
	mid := st.ring[(base+k/2)%w]
	if lg-mid < 0.5*(mid-first) {
		return finding{}, false // decelerating: polynomial, or approaching a bound
	}
	factor := math.Pow(10, rise)
	switch {
	case st.scaled && lg-st.scale >= divergenceGrowth:
		st.level = 2
		return finding{
			state:    protocol.Error,
			message:  fmt.Sprintf("%s diverges: |%s| grew ×%s over %d samples to %s", sr.label(), sr.name, num(factor), k, num(mag)),
			evidence: fmt.Sprintf("|%s| = %s, ×%s in %d samples", sr.label(), num(mag), num(factor), k),
			severity: 0.9,
		}, true
	case k == w && st.level < 1 && st.scaled && lg-st.scale >= divergenceRise:
		st.level = 1
		return finding{
			state:    protocol.Warning,
			message:  fmt.Sprintf("%s grows exponentially: |%s| grew ×%s over %d samples", sr.label(), sr.name, num(factor), k),
			evidence: fmt.Sprintf("|%s| = %s, ×%s in %d samples", sr.label(), num(mag), num(factor), k),
			severity: 0.5,
		}, true
	}
	return finding{}, false
}
