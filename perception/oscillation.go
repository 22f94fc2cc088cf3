package perception

import (
	"fmt"
	"math"

	"github.com/labmate/labmate/protocol"
)

// oscillation reports a growing oscillation: an unstable feedback loop (a PID retuned too
// aggressively, a controller with too much delay) whose swings get larger every half-period.
//
// It follows the series (a vector's first element) as a zigzag of confirmed extremes. An
// extreme is confirmed when the series has moved back from it by a quarter of the move that
// led to it (or by a roundoff-sized amount, 10⁻⁹ of the values, whichever is larger): that
// hysteresis keeps noise riding on a peak from splitting it into many small swings. A swing
// is the distance between successive extremes, peak to trough or trough to peak, so a drifting
// centre (a setpoint step) does not matter.
//
// The oscillation is growing when GrowingSwings (default 3) successive swings are each at
// least SwingGrowth (default 1.2) times the swing before, so the amplitude has grown by at
// least 1.2³ ≈ 1.7 across four swings — a ratio 1.2 is well above the sampling jitter of a
// steady oscillation (ratios within a few percent of 1) and below the 1.5–2 per half-period
// of a loop that is clearly unstable. Noise alone produces such runs now and then, so three
// more conditions keep false alarms out:
//
//   - the growth is steady: the ratios judged differ by at most a factor 1.5 from each other.
//     An unstable linear loop multiplies its amplitude by nearly the same factor every
//     half-period; swings drawn from noise grow by erratic factors;
//   - the growth is not slowing down: the newest ratio's excess over 1 is at least half that
//     of the oldest. An oscillator building up to a steady amplitude (a driven oscillator
//     started from rest, a limit cycle forming) grows fast at first, then by less and less;
//   - the newest swing is at least twice every swing before the four judged, and there were
//     at least four of those: stationary noise does not exceed its own past range by a factor
//     of two. (Twice, not more: a loop growing by 1.2 per swing exceeds the swing four back by
//     1.2⁴ ≈ 2.07 — a larger factor would never fire on it.)
//
// On simulated noise (Gaussian, heavy-tailed, AR(1), random walks) these conditions fire on
// about 1% of 1000-sample series or fewer; the price is latency: a loop that starts to
// oscillate and grow is caught at its eighth swing, about seven half-periods in (1.1–1.7 s
// for the unstable PID loops of the test corpus). A damped oscillation (ratios below 1), a
// steady one (ratios near 1) and noisy but stable series stay Normal. The verdict is an
// Error: a loop that keeps growing does not heal.
type oscillation struct {
	growth float64
	swings int
}

const (
	oscRetrace       = 0.25 // a reversal must retrace this share of the move to the extreme
	oscRoundoff      = 1e-9 // … and at least this much relative to the values
	oscSteady        = 1.5  // largest ratio / smallest ratio among the judged swings
	oscHistorySwings = 4    // swings needed before the judged ones
	oscOverHistory   = 2.0  // the newest swing must exceed every earlier one this many times
	maxGrowingSwings = 8
)

// oscillationState is one series' zigzag.
type oscillationState struct {
	started  bool
	dir      int8                          // +1 following a rise (tracking a maximum), -1 a fall, 0 not moving yet
	ext      float64                       // the running extreme
	from     float64                       // the last confirmed extreme (at first: the first value)
	recent   [maxGrowingSwings + 1]float64 // the last GrowingSwings+1 swings, a ring
	nswings  int
	histMax  float64 // the largest swing older than those in recent
	run      int     // successive swings with a ratio ≥ SwingGrowth
	reported bool
}

func (d *oscillation) sample(sr *series, v float64) (finding, bool) {
	st := &sr.osc
	if st.reported {
		return finding{}, false
	}
	if !st.started {
		st.started, st.from, st.ext = true, v, v
		return finding{}, false
	}
	if st.dir >= 0 && v > st.ext || st.dir <= 0 && v < st.ext {
		st.ext = v
		if st.dir == 0 {
			st.dir = 1
			if v < st.from {
				st.dir = -1
			}
		}
		return finding{}, false
	}
	if st.dir == 0 {
		return finding{}, false
	}
	move := abs(st.ext - st.from)
	back := abs(st.ext - v)
	if back <= oscRetrace*move || back <= oscRoundoff*(abs(st.ext)+abs(v)) {
		return finding{}, false
	}
	// st.ext is confirmed: one swing ends there, the next starts.
	st.from, st.ext, st.dir = st.ext, v, -st.dir
	return d.swing(sr, move)
}

func (d *oscillation) swing(sr *series, s float64) (finding, bool) {
	st := &sr.osc
	k := d.swings + 1 // swings judged
	if st.nswings > 0 {
		if s >= d.growth*st.recent[(st.nswings-1)%k] {
			st.run++
		} else {
			st.run = 0
		}
	}
	if st.nswings >= k {
		st.histMax = max(st.histMax, st.recent[st.nswings%k]) // leaves the window
	}
	st.recent[st.nswings%k] = s
	st.nswings++
	if st.run < d.swings || st.nswings < k+oscHistorySwings || s < oscOverHistory*st.histMax {
		return finding{}, false
	}
	base := st.nswings - k
	lo, hi := math.Inf(1), 0.0
	var oldest, newest float64
	for j := range d.swings {
		r := st.recent[(base+j+1)%k] / st.recent[(base+j)%k]
		lo, hi = min(lo, r), max(hi, r)
		if j == 0 {
			oldest = r
		}
		newest = r
	}
	if hi > oscSteady*lo || newest-1 < 0.5*(oldest-1) {
		return finding{}, false
	}
	st.reported = true
	return finding{
		state:    protocol.Error,
		message:  fmt.Sprintf("growing oscillation in %s: %d swings in a row grew ×%s–×%s each, now %s", sr.label(), d.swings, num(lo), num(hi), num(s)),
		evidence: fmt.Sprintf("%s swing %s, ×%s over the last one", sr.label(), num(s), num(newest)),
		severity: 0.9,
	}, true
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
