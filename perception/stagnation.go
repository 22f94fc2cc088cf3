package perception

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/labmate/labmate/protocol"
)

// stagnation reports a run that makes no visible progress, in two ways.
//
// Silence. No stdout, stderr or telemetry for Silence (default 10 s) while the process burns
// CPU is a Warning; for SilenceError (default 30 s) an Error. Busy means the resource samples
// show CPU seconds growing by at least a fifth of a second per second of silence, or the
// process runnable (state R) at nine samples in ten: a loop that a crowded machine starves of
// CPU is still busy. A run that sleeps, waits for I/O or for an instrument is silent but not
// stuck, and stays Normal. A busy silence is measured in the program's own time — the CPU
// seconds it got, at most one per second — so that a machine that runs it five times slower
// delays the verdict on a quiet computation five times instead of raising it. Without
// resource samples there is no way to tell, and silence is never judged.
//
// Spin. A run with no cadence (below) whose code holds an open-ended loop (while true, a
// loop until a tolerance or an equality holds, do … until; not one counting to a bound or
// reading its input) and that stays busy, with its resident memory flat, for 4 s, 2 s of them
// on a CPU — or all of them runnable, waiting for a CPU a crowded machine did not give it — is
// an Error (a loop's own wall-clock guard must not outlast a crowded machine): a
// loop spinning on a few scalars without meeting its exit (a fixed point that never
// converges, a float equality that never holds). Where the kernel looks inside (Python: the
// distance of the running loop to each of its exits, protocol.Loop), a loop seen nearing an
// exit is a quiet search, not a spin. A quiet computation is finite work —
// library calls, loops of a fixed count — or allocates as it goes; a declared silence turns
// the rule off. An operation that
// declares a longer legitimate silence (Expectation.Silence: a large SVD, a quiet solver) is
// Normal until that has passed, a Warning after it and an Error after twice it. 10 s is long
// for an interactive cell that reports progress and short for anything that does not, which
// is what the declaration is for; the Warning clears as soon as output resumes.
//
// Cadence. A run that has reported at a regular pace learns how long it may be silent from
// its own stream, as a scientist watching it would: after cadenceBeats outputs (a line and the
// samples read from it are one) spanning cadenceSpan, a silence of cadenceGaps times its
// average gap and cadenceLongest times its longest gap, never under cadenceFloor, is
// an Error, busy or idle, and the CPU time says which hang it is: busy, the code is in a loop
// that no longer reports (a fixed point that never meets its tolerance, an inner loop without
// exit); idle, it is blocked on a lock, a queue or input that does not come. Eight gaps of a
// regular cadence is strong evidence either way: a healthy run that must pause that long says
// so (an expected silence), and a paced program that simply sleeps longer is rare. A
// declared silence, declared silence thresholds, a batch job, and a run without a cadence (a
// line announcing a long computation, a burst of setup lines) keep the limits above. Kernel events
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
//     still stepping towards its end time (such samples do not count; those whose value
//     changed reset the count, even in even steps: a protocol moving liquid well by well on
//     its clock while it prints the same status line is progressing).
//
// A series cycling through two to four values in a fixed rhythm (Newton's iterates flipping
// between two points, a map settled on a 2-cycle) repeats too: once it has followed its
// period twice, each of its samples counts like a repeat.
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
	// learn: neither the operation nor its thresholds declare a silence, so the run's own
	// cadence sets how long a silence may last (see beat).
	learn      bool
	frozen     int
	frozenFor  time.Duration
	longestGap time.Duration // the longest silence the run ended by itself so far

	started      bool
	ended        bool
	lastActivity time.Time
	// The run's cadence: beats are outputs at least beatGap after the beat before (a line and
	// the samples read from it are one beat), counted from the first.
	beats               int
	firstBeat, lastBeat time.Time
	longestBeat         time.Duration // the longest gap between beats
	floor               time.Duration // the shortest silence the cadence may judge (cadenceFloor)
	// spin: the code holds an open-ended loop (a while loop: its number of iterations is not
	// fixed in advance), the one construct that can burn CPU forever without printing.
	spin bool
	// CPU use over the silence: the first resource sample after the last activity is the
	// baseline (CPU seconds are cumulative over the interpreter's life), the latest the end.
	needBase bool
	baseCPU  float64
	baseAt   time.Time
	lastCPU  float64
	lastRes  time.Time
	// Resident memory at the baseline and at the latest sample: a loop that spins on a few
	// scalars keeps it flat to the page.
	baseRSS, lastRSS int64
	// Resource samples since the baseline, and how many found the process runnable (state R):
	// on a crowded machine a spinning loop may get a few percent of a core, but it is always
	// runnable, while a blocked one sleeps.
	samples, runnable int
	// The loop the program runs, seen from inside (protocol.Loop; the Python kernel looks):
	// each exit's distance at every look since the baseline, by the exit's line.
	loopLine int
	loopDist map[int][]float64
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
	// runnableShare (in tenths) of the resource samples over a silence, and at least
	// runnableMin of them, found the process runnable: it is busy however little CPU the
	// machine gives it.
	runnableShare = 9
	runnableMin   = 4
	// idleShare is the CPU seconds per second below which a silent batch job is idle: a job
	// that computes on a crowded machine gets well under a core, one that waits gets none.
	idleShare = 0.05
	clockRun  = 3 // equal steps in a row that make a series a clock …
	// clockShare: … when at least (clockShare-1)/clockShare of all its steps were equal to
	// the one before.
	clockShare = 5
	clockTol   = 1e-6
	// cycleMax is the longest period of a cycle the frozen check recognises; a series must
	// follow its period cycleRepeats times before its samples count as repeats.
	cycleMax     = 4
	cycleRepeats = 2
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
	// Cycles: the last cycleMax fingerprints, the period the series is cycling with (0: none)
	// and the samples in a row that followed it.
	same   int // samples in a row equal to the one before
	ring   [cycleMax]uint64
	n      int
	period int
	cyc    int
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
	if d.beats == 0 || t.Sub(d.lastBeat) >= beatGap {
		if d.beats == 0 {
			d.firstBeat = t
		} else if d.beats > cadenceWarmup {
			d.longestBeat = max(d.longestBeat, t.Sub(d.lastBeat)) // past the start-up (imports, a first compute)
		}
		d.beats++
		d.lastBeat = t
	}
	if d.silent != protocol.Normal && d.silent != "" && d.silent != protocol.Error {
		d.silent = protocol.Normal
		m.set(detStagnation, finding{state: protocol.Normal})
	}
}

func (d *stagnation) resource(t time.Time, raw float64, rss int64, run bool, loop *protocol.Loop, m *Monitor) {
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
		d.baseCPU, d.baseAt, d.baseRSS, d.needBase = cpu, t, rss, false
		d.samples, d.runnable = 0, 0
		d.loopLine, d.loopDist = 0, nil
	} else {
		d.samples++
		if run {
			d.runnable++
		}
	}
	d.lastCPU, d.lastRes, d.lastRSS = cpu, t, rss
	if loop != nil {
		if loop.Line != d.loopLine {
			d.loopLine, d.loopDist = loop.Line, map[int][]float64{}
		}
		for _, e := range loop.Exits {
			d.loopDist[e.Line] = append(d.loopDist[e.Line], math.Abs(e.Distance))
		}
	}
}

func (d *stagnation) event(t time.Time, name protocol.EventName, m *Monitor) {
	switch name {
	case protocol.EventStarted, protocol.EventRestarted:
		d.ended = false
		d.activity(t, m)
		d.beats, d.longestBeat = 0, 0 // the cadence is the run's outputs, from the first
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
	paced, gap := d.paced()
	spinning := d.spinLimit(paced)
	if quiet < warnAfter && (paced == 0 || quiet < paced) && (spinning == 0 || quiet < spinning) {
		return
	}
	measured := d.lastRes.Sub(d.baseAt).Seconds() // the silence covered by resource samples
	burnt := d.lastCPU - d.baseCPU
	if measured <= 0 {
		return
	}
	// Busy: burning CPU, or runnable at nearly every sample — a loop starved of CPU by a
	// crowded machine is as stuck as one that gets a whole core. (A batch job busy over the
	// silence made it activity, see resource.)
	busy := d.batch || burnt >= busyShare*measured || d.samples >= runnableMin && d.runnable*10 >= d.samples*runnableShare
	// A busy silence is measured in the program's own time: the CPU seconds it had, at the
	// share it got over the silence (at most one core: a multithreaded library call counts
	// as wall time). On a crowded machine that stretches the wall time of a quiet
	// computation, the verdict comes as late as the computation does, not earlier: the
	// machine changes when a hang is caught, never whether a healthy run is. A batch job's
	// silence is idleness, measured on the wall clock.
	work := quiet
	if !d.batch {
		work = min(quiet, time.Duration(float64(quiet)*burnt/measured))
	}
	var st protocol.VerdictState
	var limit time.Duration
	switch {
	case busy && work >= errAfter:
		st, limit = protocol.Error, errAfter
	case busy && paced > 0 && work >= paced && !d.batch:
		st, limit = protocol.Error, paced
	case busy && spinning > 0 && quiet >= spinning && d.spinWork(quiet, work) >= spinning/2 && d.flatMemory() && !d.converging():
		st, limit = protocol.Error, spinning
	case busy && work >= warnAfter:
		st, limit = protocol.Warning, warnAfter
	case !busy && paced > 0 && measured >= 1 && quiet >= paced:
		st, limit = protocol.Error, paced
	default:
		return
	}
	if st == d.silent {
		return
	}
	d.silent = st
	sev := 0.5
	if st == protocol.Error {
		sev = 0.8
	}
	q := quiet.Round(100 * time.Millisecond)
	msg := fmt.Sprintf("no output or telemetry for %s while busy (limit %s)", q, limit)
	if w := work.Round(100 * time.Millisecond); w < q-time.Second/2 && !d.batch {
		msg = fmt.Sprintf("no output or telemetry for %s while busy, %s of it on a CPU (limit %s)", q, w, limit)
	}
	switch {
	case d.batch:
		msg = fmt.Sprintf("job idle: no output, no growth of its followed files and no CPU use for %s (limit %s)", q, limit)
	case spinning > 0 && limit == spinning && limit != errAfter:
		// No cadence to learn from, but the code loops until a condition holds, the process
		// burns CPU and its memory does not move: the loop spins without reaching its exit.
		msg = fmt.Sprintf("silent for %s while running (%.1f CPU s) with its memory flat, in code that loops until a condition holds (a while loop): a loop that never meets its exit (limit %s for a run with no cadence; declare a longer silence if the loop is meant to run quietly)",
			q, burnt, limit)
	case paced > 0 && limit != warnAfter && limit != errAfter:
		// The run's own cadence set the limit: it reported every gap, and stopped.
		doing := fmt.Sprintf("still burning CPU (%.1f CPU s): a loop that no longer reports", burnt)
		if !busy {
			doing = fmt.Sprintf("and idle (%.2f CPU s): blocked or waiting on something that does not come", burnt)
		}
		msg = fmt.Sprintf("stopped reporting: it printed every %s on average (%d outputs), and has been silent for %s (%.0f× its cadence, limit %s), %s",
			gap.Round(10*time.Millisecond), d.beats, q, quiet.Seconds()/gap.Seconds(), limit, doing)
	}
	m.set(detStagnation, finding{
		state:    st,
		message:  msg,
		evidence: fmt.Sprintf("silent %s, %.1f CPU s burnt", q, burnt),
		severity: sev,
	})
}

// Cadence: a run that reported at a regular pace and then falls silent.
const (
	beatGap        = 20 * time.Millisecond // outputs closer than this are one beat (a line and its samples, a burst)
	cadenceBeats   = 10                    // beats before a cadence is known …
	cadenceSpan    = 2 * time.Second       // … spanning at least this
	cadenceGaps    = 8                     // a silence of this many average gaps …
	cadenceLongest = 3                     // … and this many of its longest gap so far (after cadenceWarmup beats) …
	cadenceWarmup  = 2                     // the first gaps are start-up (imports, a first compute), not cadence
	cadenceFloor   = 4 * time.Second       // … and at least this long is suspicious
	// cadenceFloorCode is the floor for codes with long quiet phases between their reports
	// (Quantum ESPRESSO's forces and stress after an SCF, LAMMPS' setup of a new run).
	cadenceFloorCode = 8 * time.Second
)

// paced is the silence the run's own cadence allows — cadenceGaps times its average gap
// between outputs and cadenceLongest times its longest after start-up, at least cadenceFloor — and that
// average gap; 0 when there is no cadence to learn from: a declared silence or declared
// silence thresholds, a batch job, or fewer than cadenceBeats separate outputs over
// cadenceSpan (a program that announces a long computation and goes quiet has no cadence,
// and keeps the default limits).
func (d *stagnation) paced() (limit, gap time.Duration) {
	if !d.learn || d.batch || d.beats < cadenceBeats {
		return 0, 0
	}
	span := d.lastBeat.Sub(d.firstBeat)
	if span < cadenceSpan {
		return 0, 0
	}
	gap = span / time.Duration(d.beats-1)
	return max(d.floor, cadenceGaps*gap, cadenceLongest*d.longestBeat), gap
}

// spinAfter is how long a run with no cadence may be silent and busy, with its memory flat,
// when its code holds an open-ended loop. A quiet computation that forgets to declare its
// silence is finite work — library calls, loops of a fixed count — and typically allocates
// as it goes; a while loop spinning on a few scalars (a fixed point that never meets its
// tolerance, a float equality that never holds) burns a core with its memory flat to the
// page, and nothing bounds it.
const spinAfter = 4 * time.Second

// spinRSS is the change of resident memory under which a silence counts as flat: a few
// pages of an interpreter's own churn.
const spinRSS = 4 << 20

// spinLimit is the silence after which a busy run spins (spinAfter), 0 when the rule does
// not apply: the run declared its silence, has a cadence (paced judges it), is a batch job,
// or its code has no open-ended loop.
func (d *stagnation) spinLimit(paced time.Duration) time.Duration {
	if !d.spin || !d.learn || d.batch || paced > 0 {
		return 0
	}
	return spinAfter
}

// spinWork is how much of a silence of quiet counts as the loop running, for the spin rule:
// the whole of it when the process was runnable at nearly every sample (a loop starved by a
// crowded machine tries to run all the time, and its own wall-clock guard does not wait for
// the CPU it did not get), else the CPU time it had (work).
func (d *stagnation) spinWork(quiet, work time.Duration) time.Duration {
	if d.samples >= runnableMin && d.runnable*10 >= d.samples*runnableShare {
		return quiet
	}
	return work
}

// loopLooks is the fewest looks at a loop over a silence that can show it nearing an exit, and
// loopGain how far the distance must fall from the first half of them to the second.
const (
	loopLooks = 4
	loopGain  = 0.9
)

// converging: seen from inside, the loop nears one of its exits: the median distance to it
// over the second half of the silence's looks is below loopGain times the median over the
// first half — a slow solver quietly closing in on its tolerance, a bisection halving its
// bracket, however long each of its steps takes. A loop spinning without meeting its exit
// does not: its distances stay put (a residual at its floor, a bracket one ulp wide), cycle
// (a map on a 2-cycle, Newton's iterates flipping) or grow (a float stepped past the value it
// was to equal). Medians, not lows: a look lands anywhere in the loop's body, and one taken
// between `x = x_new` and the next `x_new = f(x)` finds a spinning map's |x_new − x| at 0.
// Without looks (an Octave or shell kernel), false.
func (d *stagnation) converging() bool {
	for _, ds := range d.loopDist {
		if n := len(ds); n >= loopLooks && median(ds[n/2:]) < loopGain*median(ds[:n/2]) {
			return true
		}
	}
	return false
}

// median of xs (not modified).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// flatMemory: resident memory moved by less than spinRSS (and 2%) over the silence.
func (d *stagnation) flatMemory() bool {
	dr := d.lastRSS - d.baseRSS
	if dr < 0 {
		dr = -dr
	}
	return dr < spinRSS && dr*50 <= d.baseRSS
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
		fs.push(fp)
		return finding{}, false
	}
	if fp != fs.fp {
		fs.same = 0
		if advanced {
			// A value that changed as simulated time moved on: the simulated world changes
			// (a protocol moving liquid at an even pace, a trajectory), even in even steps.
			d.frozenRun = 0
		}
		// A value met one to three samples before, in the same rhythm again and again, is a
		// cycle: Newton's iterates flipping between two points, a fixed point of period 3.
		p := fs.cycle(fp)
		if p > 0 && p == fs.period {
			fs.cyc++
		} else {
			fs.period, fs.cyc = p, min(p, 1)
		}
		fs.push(fp)
		step := s.Value - fs.prev
		fs.fp, fs.prev = fp, s.Value
		if fs.period > 0 && fs.cyc >= cycleRepeats*fs.period {
			fs.changed = true
			return d.frozenSample(t, sr, s, advanced)
		}
		fs.steps++
		if abs(step-fs.step) <= clockTol*max(abs(step), abs(fs.step)) && step != 0 {
			fs.equal++
			fs.even++
		} else {
			fs.equal = 0
		}
		fs.step, fs.changed = step, true
		// A clock steps evenly all its life (an iteration counter, a time); a value creeping
		// toward its limit one unit of its last printed digit at a time steps evenly too,
		// but only at the end of a history of uneven steps: that is progress.
		if fs.equal < clockRun-1 || fs.even*clockShare < fs.steps*(clockShare-1) {
			d.frozenRun = 0 // real progress
		}
		return finding{}, false
	}
	fs.push(fp)
	fs.same++
	if fs.period > 0 {
		fs.period, fs.cyc = 0, 0 // a plain repeat ends a cycle
	}
	return d.frozenSample(t, sr, s, advanced)
}

// frozenSample counts a sample of sr that repeated a value (its previous one, or one of a
// cycle) toward the frozen run.
func (d *stagnation) frozenSample(t time.Time, sr *series, s *protocol.Sample, advanced bool) (finding, bool) {
	fs := &sr.stag
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
	f := finding{
		state:    protocol.Error,
		message:  fmt.Sprintf("no progress: %d samples in %s repeated their previous value and no series changed", d.frozenRun, span),
		evidence: fmt.Sprintf("%s stuck at %s%s", sr.label(), num(s.Value), at(s)),
		severity: 0.8,
	}
	if fs.period > 0 {
		f.message = fmt.Sprintf("no progress: %d samples in %s repeated a value of their series' last few, and no series changed: a cycle that never converges", d.frozenRun, span)
		f.evidence = fmt.Sprintf("%s cycles with period %d through %s%s", sr.label(), fs.period, num(s.Value), at(s))
	}
	return f, true
}

// cycle is the period (2 to cycleMax) at which fp repeats a value of the series' last few
// samples, 0 when it does not.
func (fs *freezeState) cycle(fp uint64) int {
	for p := 2; p <= cycleMax && p <= fs.n; p++ {
		if fs.ring[(fs.n-p)%cycleMax] == fp {
			return p
		}
	}
	return 0
}

// push records a sample's fingerprint in the ring of recent values.
func (fs *freezeState) push(fp uint64) {
	fs.ring[fs.n%cycleMax] = fp
	fs.n++
}
