package perception

import (
	"fmt"
	"time"

	"github.com/labmate/labmate/protocol"
)

// stagnation reports a run that makes no visible progress, in two ways.
//
// Silence. No stdout, stderr or telemetry for Silence (default 10 s) while the process burns
// CPU is a Warning; for SilenceError (default 30 s) an Error. Busy means the resource samples
// show CPU seconds growing by at least half a second per second of silence: a run that sleeps,
// waits for I/O or for an instrument is silent but not stuck, and stays Normal. Without
// resource samples there is no way to tell, and silence is never judged. An operation that
// declares a longer legitimate silence (Expectation.Silence: a large SVD, a quiet solver) is
// Normal until that has passed, a Warning after it and an Error after twice it. 10 s is long
// for an interactive cell that reports progress and short for anything that does not, which
// is what the declaration is for; the Warning clears as soon as output resumes. Kernel events
// bound the judgement: the clock starts at `started` (or the first observation) and stops at
// `finished`, `interrupted` or `crashed`.
//
// Frozen series. A run that keeps emitting telemetry in which nothing changes claims to
// iterate without progressing: a bisection whose interval stopped shrinking at machine
// precision, a fixed-point loop stuck on one value. It is an Error when Frozen (default 40)
// samples in a row repeat their series' previous value exactly, spanning at least FrozenFor
// (default 1 s), while no series changes meanwhile. What does not count:
//
//   - series that never changed: constants logged for reference (a mass, a setpoint);
//   - clocks: series whose last three steps were equal, and four in five of all their steps
//     (an iteration counter, a day number), which change without saying anything about
//     progress; they neither count nor reset. A value creeping to its limit by one unit of
//     its last printed digit per step (0.9999998, 0.9999999, 1) steps evenly too, but after
//     a history of uneven steps: it is progressing, and resets the count;
//   - a series that froze while others still change: a converged gain, a running maximum;
//     any other series changing resets the count;
//   - samples whose simulation time advanced: a simulation that reached its steady state is
//     still stepping towards its end time (such samples neither count nor reset).
//
// 40 samples and 1 s let a converged iterative method print its final value a few dozen times,
// or in a quick burst at the end, without an alarm, while a stuck loop printing 20 lines a
// second is stopped within about a second and a half. The count is over samples, not lines: a
// line `mid = … width = …` is two samples, and the helper's copy of a printed value a third. A
// known blind spot: a search that only prints its best-so-far value looks frozen while it is
// still exploring; print something that changes each iteration (the current candidate).
type stagnation struct {
	batch               bool // a batch job: CPU rising is progress, silence means idle (Expectation.Batch)
	warnAfter, errAfter time.Duration
	cadence             float64
	frozen              int
	frozenFor           time.Duration
	longestGap          time.Duration // the longest silence the run ended by itself so far

	started      bool
	ended        bool
	lastActivity time.Time
	// CPU use over the silence: the first resource sample after the last activity is the
	// baseline (CPU seconds are cumulative over the interpreter's life), the latest the end.
	needBase bool
	baseCPU  float64
	baseAt   time.Time
	lastCPU  float64
	lastRes  time.Time
	// Resource samples sum the CPU of the live process tree: when a child exits (a shell
	// cell's pw.x runs, then the next one starts), its seconds leave the sum. rawCPU is the
	// last raw value, cpuGone what left, so that rawCPU + cpuGone never falls.
	rawCPU, cpuGone float64
	silent          protocol.VerdictState // the silence state reported

	frozenRun   int
	frozenSince time.Time
	reported    bool
}

const (
	// busyShare is the CPU seconds per second of silence that make a silent run busy: a fifth
	// of a core, so that a loop on a crowded machine (two cores, four busy processes) still is.
	busyShare = 0.2
	// idleShare is the CPU seconds per second below which a silent batch job is idle: a job
	// that computes on a crowded machine gets well under a core, one that waits gets none.
	idleShare = 0.05
	clockRun  = 3 // equal steps in a row that make a series a clock …
	// clockShare: … when at least (clockShare-1)/clockShare of all its steps were equal to
	// the one before.
	clockShare = 5
	clockTol   = 1e-6
)

// freezeState is one series' state for the frozen-series check.
type freezeState struct {
	seen    bool
	changed bool // the series changed at least once
	fp      uint64
	prev    float64 // the previous Value
	step    float64 // the previous step
	equal   int     // equal steps in a row
	steps   int     // changes so far
	even    int     // … of which steps equal to the one before
	t       float64 // the previous simulation time
	hasT    bool
}

func (d *stagnation) activity(t time.Time, m *Monitor) {
	if t.IsZero() {
		return
	}
	if d.started && !d.ended && t.After(d.lastActivity) {
		d.longestGap = max(d.longestGap, t.Sub(d.lastActivity))
	}
	d.started = true
	d.lastActivity = t
	d.needBase = true
	if d.silent != protocol.Normal && d.silent != "" && d.silent != protocol.Error {
		d.silent = protocol.Normal
		m.set(detStagnation, finding{state: protocol.Normal})
	}
}

func (d *stagnation) resource(t time.Time, raw float64, m *Monitor) {
	if t.IsZero() {
		return
	}
	if raw < d.rawCPU {
		d.cpuGone += d.rawCPU - raw
	}
	d.rawCPU = raw
	cpu := raw + d.cpuGone
	if d.batch && !d.lastRes.IsZero() && t.After(d.lastRes) && cpu-d.lastCPU >= idleShare*t.Sub(d.lastRes).Seconds() {
		d.activity(t, m) // a batch job that computes is progressing
	}
	if !d.started {
		d.started, d.lastActivity, d.needBase = true, t, true
	}
	if d.needBase {
		d.baseCPU, d.baseAt, d.needBase = cpu, t, false
	}
	d.lastCPU, d.lastRes = cpu, t
}

func (d *stagnation) event(t time.Time, name protocol.EventName, m *Monitor) {
	switch name {
	case protocol.EventStarted, protocol.EventRestarted:
		d.ended = false
		d.activity(t, m)
	case protocol.EventFinished, protocol.EventInterrupted, protocol.EventCrashed:
		d.ended = true
		d.activity(t, m) // clears a silence Warning: the run is over
	}
}

// silence judges the time since the last activity at now.
func (d *stagnation) silence(now time.Time, m *Monitor) {
	if !d.started || d.ended || d.needBase || now.IsZero() || d.silent == protocol.Error {
		return
	}
	quiet := now.Sub(d.lastActivity)
	warnAfter, errAfter := d.limits()
	if quiet < warnAfter {
		return
	}
	measured := d.lastRes.Sub(d.baseAt).Seconds() // the silence covered by resource samples
	burnt := d.lastCPU - d.baseCPU
	if measured <= 0 || !d.batch && burnt < busyShare*measured {
		return // a batch job busy over the silence made it activity (resource)
	}
	st, limit := protocol.Warning, warnAfter
	if quiet >= errAfter {
		st, limit = protocol.Error, errAfter
	}
	if st == d.silent {
		return
	}
	d.silent = st
	sev := 0.5
	if st == protocol.Error {
		sev = 0.8
	}
	msg := fmt.Sprintf("no output or telemetry for %s while busy (limit %s)", quiet.Round(100*time.Millisecond), limit)
	if d.batch {
		msg = fmt.Sprintf("job idle: no output, no growth of its followed files and no CPU use for %s (limit %s)", quiet.Round(100*time.Millisecond), limit)
	}
	m.set(detStagnation, finding{
		state:    st,
		message:  msg,
		evidence: fmt.Sprintf("silent %s, %.1f CPU s burnt", quiet.Round(100*time.Millisecond), burnt),
		severity: sev,
	})
}

// limits are the silence limits for this run: the thresholds, stretched by the run's own
// cadence (Cadence times the longest gap it already ended by itself).
func (d *stagnation) limits() (warn, err time.Duration) {
	own := time.Duration(d.cadence * float64(d.longestGap))
	return max(d.warnAfter, own), max(d.errAfter, 2*own)
}

// sample updates the frozen-series check with one sample of sr.
func (d *stagnation) sample(t time.Time, sr *series, s *protocol.Sample) (finding, bool) {
	fs := &sr.stag
	fp := fingerprint(s)
	advanced := false
	if s.T != nil {
		advanced = fs.hasT && *s.T != fs.t
		fs.t, fs.hasT = *s.T, true
	}
	if !fs.seen {
		fs.seen, fs.fp, fs.prev = true, fp, s.Value
		return finding{}, false
	}
	if fp != fs.fp {
		step := s.Value - fs.prev
		fs.steps++
		if abs(step-fs.step) <= clockTol*max(abs(step), abs(fs.step)) && step != 0 {
			fs.equal++
			fs.even++
		} else {
			fs.equal = 0
		}
		fs.fp, fs.prev, fs.step, fs.changed = fp, s.Value, step, true
		// A clock steps evenly all its life (an iteration counter, a time); a value creeping
		// toward its limit one unit of its last printed digit at a time steps evenly too,
		// but only at the end of a history of uneven steps: that is progress.
		if fs.equal < clockRun-1 || fs.even*clockShare < fs.steps*(clockShare-1) {
			d.frozenRun = 0 // real progress
		}
		return finding{}, false
	}
	if !fs.changed || advanced || d.reported {
		return finding{}, false
	}
	d.frozenRun++
	if d.frozenRun == 1 {
		d.frozenSince = t
	}
	if d.frozenRun < d.frozen || t.Sub(d.frozenSince) < d.frozenFor {
		return finding{}, false
	}
	d.reported = true
	span := t.Sub(d.frozenSince).Round(10 * time.Millisecond)
	return finding{
		state:    protocol.Error,
		message:  fmt.Sprintf("no progress: %d samples in %s repeated their previous value and no series changed", d.frozenRun, span),
		evidence: fmt.Sprintf("%s stuck at %s%s", sr.label(), num(s.Value), at(s)),
		severity: 0.8,
	}, true
}
