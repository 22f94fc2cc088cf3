package perception

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

// silentRun is a run that prints one line at 0 s, then only resource samples every 0.5 s up
// to end seconds, burning cpuPerSec CPU seconds per second.
func silentRun(end, cpuPerSec float64) []*protocol.Observation {
	obs := []*protocol.Observation{event(0, protocol.EventStarted), stdout(0, "computing…")}
	for s := 0.5; s <= end+1e-9; s += 0.5 {
		obs = append(obs, resource(s, cpuPerSec*s, 100<<20, 0))
	}
	return obs
}

// lastAt is the index in obs of the resource sample at sec seconds.
func lastAt(sec float64) int { return 1 + int(sec/0.5) }

func TestSilence(t *testing.T) {
	tests := []struct {
		name   string
		cfg    *Config
		end    float64
		cpu    float64
		want   []emitted
		extras []*protocol.Observation // appended after the silent run
	}{
		{"busy, just under 10 s", nil, 9.5, 1, nil, nil},
		{"busy, 10 s", nil, 10, 1, []emitted{{lastAt(10), protocol.Warning, DetectorStagnation}}, nil},
		{"busy, 30 s", nil, 30, 1, []emitted{{lastAt(10), protocol.Warning, DetectorStagnation}, {lastAt(30), protocol.Error, DetectorStagnation}}, nil},
		{"multithreaded BLAS", nil, 10, 3.5, []emitted{{lastAt(10), protocol.Warning, DetectorStagnation}}, nil},
		// Busy means at least a fifth of a CPU second per second of silence: a loop that gets
		// a fifth of a core on a crowded machine is busy; one that sleeps or waits is not.
		{"a quarter busy", nil, 40, 0.25, []emitted{{lastAt(40), protocol.Warning, DetectorStagnation}}, nil},
		// On a crowded machine that gives it a quarter of a core, a silence is measured in
		// the program's own time: 10 s of CPU take 40 s of wall time.
		{"a quarter busy, 39.5 s", nil, 39.5, 0.25, nil, nil},
		{"sleeping", nil, 40, 0.1, nil, nil},
		// A declared silence moves both limits.
		{"declared 30 s, at 29.5 s", &Config{Expect: Expectation{Silence: 30 * time.Second}}, 29.5, 1, nil, nil},
		{"declared 30 s, at 30 s", &Config{Expect: Expectation{Silence: 30 * time.Second}}, 59.5, 1, []emitted{{lastAt(30), protocol.Warning, DetectorStagnation}}, nil},
		{"declared 30 s, at 60 s", &Config{Expect: Expectation{Silence: 30 * time.Second}}, 60, 1, []emitted{{lastAt(30), protocol.Warning, DetectorStagnation}, {lastAt(60), protocol.Error, DetectorStagnation}}, nil},
		{"declared 5 s: the default still applies", &Config{Expect: Expectation{Silence: 5 * time.Second}}, 9.5, 1, nil, nil},
		{"thresholds", &Config{Thresholds: Thresholds{Silence: 2 * time.Second, SilenceError: 4 * time.Second}}, 4, 1,
			[]emitted{{lastAt(2), protocol.Warning, DetectorStagnation}, {lastAt(4), protocol.Error, DetectorStagnation}}, nil},
		// A batch job that computes is progressing, however long it is silent; one that neither
		// prints nor computes is idle, judged against limits scaled to its wall time.
		{"batch, busy", &Config{Expect: Expectation{Batch: true}}, 40, 1, nil, nil},
		{"batch, busy, short limits", &Config{Expect: Expectation{Batch: true}, Thresholds: Thresholds{Silence: 2 * time.Second, SilenceError: 4 * time.Second}}, 10, 1, nil, nil},
		// A job that computes on a crowded machine gets a fifth of a core: busy, not idle.
		{"batch, starved, short limits", &Config{Expect: Expectation{Batch: true}, Thresholds: Thresholds{Silence: 2 * time.Second, SilenceError: 4 * time.Second}}, 10, 0.2, nil, nil},
		{"batch, idle, short limits", &Config{Expect: Expectation{Batch: true}, Thresholds: Thresholds{Silence: 2 * time.Second, SilenceError: 4 * time.Second}}, 4, 0.02,
			[]emitted{{lastAt(2), protocol.Warning, DetectorStagnation}, {lastAt(4), protocol.Error, DetectorStagnation}}, nil},
		{"batch, idle, no wall time", &Config{Expect: Expectation{Batch: true}}, 60, 0, nil, nil},
		{"batch, idle, wall time 60 s", &Config{Expect: Expectation{Batch: true, WallTime: time.Minute}}, 30, 0,
			[]emitted{{lastAt(15), protocol.Warning, DetectorStagnation}, {lastAt(30), protocol.Error, DetectorStagnation}}, nil},
		{"batch, idle, wall time 10 min, reporting every minute", &Config{Expect: Expectation{Batch: true, WallTime: 10 * time.Minute}}, 60, 0, nil,
			[]*protocol.Observation{stdout(60.2, "step 1")}},
		// Output resumes: the Warning clears.
		{"resumes", nil, 11, 1, []emitted{{lastAt(10), protocol.Warning, DetectorStagnation}, {lastAt(11) + 1, protocol.Normal, ""}},
			[]*protocol.Observation{stdout(11.2, "done")}},
		// The run ended: silence is no longer judged.
		{"finished", nil, 5, 1, nil, append([]*protocol.Observation{event(5.1, protocol.EventFinished)}, silentRun(40, 1)[2:]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := append(silentRun(tt.end, tt.cpu), tt.extras...)
			got := feed(newMonitor(t, tt.cfg), obs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSilenceIdleInterpreter: CPU seconds are cumulative over the interpreter's life; CPU used
// by earlier cells does not make an idle, silent cell busy.
func TestSilenceIdleInterpreter(t *testing.T) {
	obs := []*protocol.Observation{event(0, protocol.EventStarted), stdout(0, "waiting for the instrument…")}
	for s := 0.5; s <= 40; s += 0.5 {
		obs = append(obs, resource(s, 30+0.01*s, 100<<20, 0))
	}
	if got := feed(newMonitor(t, nil), obs); got != nil {
		t.Errorf("verdicts %v, want none", got)
	}
}

func TestSilenceTick(t *testing.T) {
	m := newMonitor(t, nil)
	feed(m, silentRun(9, 1)) // the last resource sample at 9 s shows a busy process
	if v := m.Tick(ts(9.9)); v != nil {
		t.Errorf("Tick(9.9 s) = %+v, want nil", v)
	}
	v := m.Tick(ts(10))
	if v == nil || v.State != protocol.Warning || v.Detector != DetectorStagnation {
		t.Fatalf("Tick(10 s) = %+v, want a stagnation Warning", v)
	}
	if want := "no output or telemetry for 10s while busy (limit 10s)"; v.Message != want {
		t.Errorf("message %q, want %q", v.Message, want)
	}
	if v := m.Tick(ts(20)); v != nil {
		t.Errorf("Tick(20 s) = %+v, want nil (no change)", v)
	}
	if v := m.Tick(ts(30)); v == nil || v.State != protocol.Error {
		t.Errorf("Tick(30 s) = %+v, want an Error", v)
	}
	// Without resource samples nothing is known about CPU: silence is not judged.
	m = newMonitor(t, nil)
	m.Observe(stdout(0, "computing…"))
	if v := m.Tick(ts(100)); v != nil {
		t.Errorf("Tick without resource samples = %+v, want nil", v)
	}
}

// frozenRun: samples of x every dt seconds: changing for `moving` samples, then constant.
func frozenRun(dt float64, moving, frozen int) []*protocol.Observation {
	var obs []*protocol.Observation
	for i := range moving + frozen {
		v := 0.739085133215161 + 1/float64(min(i, moving-1)+1)
		obs = append(obs, tel(float64(i)*dt, "x", v))
	}
	return obs
}

// creeping is gradient descent's x escaping a saddle: growing geometrically, then creeping
// to 1 one unit of its seventh digit per line, printed with the loss, which reaches 0 first.
func creeping(dt float64) []*protocol.Observation {
	var obs []*protocol.Observation
	x := 1e-7
	for i := range 180 {
		if i < 120 {
			x = min(x*1.15, 0.999995)
		} else {
			x = min(0.999995+float64(i-119)*1e-7, 1)
		}
		loss := math.Round((1-x*x)*(1-x*x)*1e10) / 1e10
		obs = append(obs, printed(float64(i)*dt, "loss", loss), printed(float64(i)*dt, "x", math.Round(x*1e7)/1e7))
	}
	return obs
}

func TestFrozen(t *testing.T) {
	err := func(i int) []emitted { return []emitted{{i, protocol.Error, DetectorStagnation}} }
	withT := func(obs []*protocol.Observation) []*protocol.Observation {
		for i, o := range obs {
			tv := float64(i)
			o.Sample.T = &tv
		}
		return obs
	}
	counter := func(obs []*protocol.Observation) []*protocol.Observation {
		var out []*protocol.Observation
		for i, o := range obs {
			out = append(out, printed(o.Time.Sub(t0).Seconds(), "iter", float64(i+1)), o)
		}
		return out
	}
	changing := func(obs []*protocol.Observation) []*protocol.Observation {
		var out []*protocol.Observation
		for i, o := range obs {
			out = append(out, o, tel(o.Time.Sub(t0).Seconds(), "noise", float64(i*i%7)))
		}
		return out
	}
	// A protocol on its clock: a well's volume falling by the same 20 µL each command beside a
	// status line it prints again and again.
	onClock := func(obs []*protocol.Observation) []*protocol.Observation {
		var out []*protocol.Observation
		for i, o := range obs {
			vol := tel(o.Time.Sub(t0).Seconds(), "vol_res_A1", 10000-20*float64(i))
			tv := 30 * float64(i)
			vol.Sample.T = &tv
			out = append(out, o, vol)
		}
		return out
	}
	tests := []struct {
		name string
		obs  []*protocol.Observation
		want []emitted
	}{
		// 20 samples a second: the 40th repeat (sample 10+40) comes 1.95 s after the first.
		{"39 repeats", frozenRun(0.05, 10, 39), nil},
		{"40 repeats", frozenRun(0.05, 10, 40), err(49)},
		// 40 repeats in a quick burst are a converged method printing its result; a second's
		// worth is not.
		{"50 repeats in 0.98 s", frozenRun(0.02, 10, 50), nil},
		{"repeats for 1 s", frozenRun(0.02, 10, 51), err(60)},
		{"a constant is not frozen", frozenRun(0.05, 1, 500), nil},
		{"simulation time advances", withT(frozenRun(0.05, 10, 100)), nil},
		// An iteration counter changes but is a clock: it does not hide the stagnation.
		{"counter", counter(frozenRun(0.05, 10, 60)), err(2*49 + 1)},
		// Another series changing is progress.
		{"another series changes", changing(frozenRun(0.05, 10, 100)), nil},
		{"a series stepping evenly on the simulation's clock", onClock(frozenRun(0.05, 10, 100)), nil},
		// A value creeping to its limit one unit of its last printed digit at a time, after
		// uneven steps, on lines slowed by a busy machine (0.1 s), beside a converged loss:
		// it progresses, it is no clock.
		{"a value creeping in its last digit", creeping(0.1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := feed(newMonitor(t, nil), tt.obs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFrozenEvidence(t *testing.T) {
	m := newMonitor(t, nil)
	feed(m, frozenRun(0.05, 10, 60))
	want := protocol.Verdict{
		State:    protocol.Error,
		Detector: DetectorStagnation,
		Message:  "no progress: 40 samples in 1.95s repeated their previous value and no series changed",
		Evidence: []string{"x stuck at 0.839085"},
		Severity: 0.8,
		Action:   protocol.ActionInterrupt,
	}
	if diff := cmp.Diff(want, m.Verdict()); diff != "" {
		t.Errorf("verdict mismatch (-want +got):\n%s", diff)
	}
}

// TestSilenceChildProcesses: a shell cell runs one program after another; each one's CPU
// seconds leave the resource samples' sum when it exits. The run is busy all along.
func TestSilenceChildProcesses(t *testing.T) {
	obs := []*protocol.Observation{event(0, protocol.EventStarted), stdout(0, "running three jobs")}
	for s := 0.5; s <= 12; s += 0.5 {
		obs = append(obs, resource(s, math.Mod(s, 4), 100<<20, 0)) // a new child every 4 s
	}
	// 10 s of CPU time: each child's last half second before it ends is never sampled.
	want := []emitted{{lastAt(11.5), protocol.Warning, DetectorStagnation}}
	if diff := cmp.Diff(want, feed(newMonitor(t, nil), obs)); diff != "" {
		t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
	}
}

// pacedRun is a run that prints a line every dt seconds for n lines, then falls silent up to
// end seconds, burning cpuPerSec CPU seconds per second throughout; resource samples come
// every 0.5 s.
func pacedRun(n int, dt, end, cpuPerSec float64) []*protocol.Observation {
	obs := []*protocol.Observation{event(0, protocol.EventStarted)}
	next := 0.5
	for i := range n {
		at := 0.3 + float64(i)*dt
		for ; next <= at; next += 0.5 {
			obs = append(obs, resource(next, cpuPerSec*next, 100<<20, 0))
		}
		obs = append(obs, stdout(at, fmt.Sprintf("iter %d  x = %.6f", i, 1/float64(i+1))))
	}
	for ; next <= end+1e-9; next += 0.5 {
		obs = append(obs, resource(next, cpuPerSec*next, 100<<20, 0))
	}
	return obs
}

// TestSilencePaced: a run that reported at a regular pace and then falls silent for many
// times its cadence has stopped reporting: an Error at 8 average gaps and 3 longest gaps,
// never before 4 s, busy (a loop that no longer prints) or idle (blocked, waiting on
// nothing). A run with no cadence to learn from —
// one line and a long computation, a burst of lines, a declared silence — keeps the default
// limits.
func TestSilencePaced(t *testing.T) {
	alarm := func(obs []*protocol.Observation, cfg *Config) (first, errAt float64, msg string) {
		m := newMonitor(t, cfg)
		first, errAt = -1, -1
		for _, o := range obs {
			v := m.Observe(o)
			if v == nil || v.Detector != DetectorStagnation {
				continue
			}
			sec := o.Time.Sub(t0).Seconds()
			if first < 0 {
				first = sec
			}
			if v.State == protocol.Error && errAt < 0 {
				errAt, msg = sec, v.Message
			}
		}
		return first, errAt, msg
	}
	const last = 0.3 + 49*0.1 // the last line of 50 printed every 0.1 s
	for _, c := range []struct {
		name         string
		obs          []*protocol.Observation
		cfg          *Config
		first, error float64 // seconds of silence after the last line; -1: none
	}{
		{"paced, then a busy silence", pacedRun(50, 0.1, 20, 1), nil, 4, 4},
		{"paced, then an idle silence", pacedRun(50, 0.1, 20, 0.05), nil, 4, 4},
		{"paced at 0.5 s: 8 gaps", pacedRun(50, 0.5, 60, 1), nil, 4, 4},
		{"paced, declared silence", pacedRun(50, 0.1, 20, 1), &Config{Expect: Expectation{Silence: 30 * time.Second}}, -1, -1},
		{"paced, silence thresholds set", pacedRun(50, 0.1, 20, 1), &Config{Thresholds: Thresholds{Silence: 12 * time.Second, SilenceError: 40 * time.Second}}, 12, -1},
		{"a burst of lines, then busy", pacedRun(50, 0.001, 20, 1), nil, 10, -1},
		{"a few lines, then busy", pacedRun(5, 0.5, 20, 1), nil, 10, -1},
		{"paced with Quantum ESPRESSO's profile", pacedRun(50, 0.1, 20, 1), &Config{Profile: ProfileQE}, 8, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			end := last
			if c.name == "paced at 0.5 s: 8 gaps" {
				end = 0.3 + 49*0.5
			}
			if c.name == "a burst of lines, then busy" {
				end = 0.3 + 49*0.001
			}
			if c.name == "a few lines, then busy" {
				end = 0.3 + 4*0.5
			}
			first, errAt, msg := alarm(c.obs, c.cfg)
			// resource samples come every 0.5 s: the verdict comes with the first one past the limit
			within := func(got, want float64) bool {
				if want < 0 {
					return got < 0
				}
				return got >= end+want && got <= end+want+0.5+1e-9
			}
			if !within(first, c.first) || !within(errAt, c.error) {
				t.Errorf("first verdict %.1f s and Error %.1f s after the last line, want %v and %v (%s)", first-end, errAt-end, c.first, c.error, msg)
			}
			if c.error >= 0 && !strings.Contains(msg, "stopped reporting") && c.error != 30 {
				t.Errorf("message %q does not say the run stopped reporting", msg)
			}
		})
	}
}

// TestSilenceSpin: a run with no cadence — one line, then silence — whose code loops until a
// condition holds, and which burns CPU with its memory flat, spins in that loop: an Error
// after 4 s. A quiet computation without an open-ended loop, one whose memory moves, one
// that waits, and one that declared its silence keep the default limits.
func TestSilenceSpin(t *testing.T) {
	loop := "r = 3.2\nx = 0.3\nprint('solving')\nwhile True:\n    x_new = r * x * (1 - x)\n    if abs(x_new - x) < 1e-12:\n        break\n    x = x_new\n"
	octave := "x = 1;\ndo\n  x = cos(x);\nuntil abs(x - cos(x)) < 1e-300\n"
	quiet := "import numpy as np\nprint('computing')\ns = np.linalg.svd(np.random.rand(1800, 1800), compute_uv=False)\n# while we wait\n"
	growing := func(end float64) []*protocol.Observation {
		obs := []*protocol.Observation{event(0, protocol.EventStarted), stdout(0, "computing…")}
		for s := 0.5; s <= end+1e-9; s += 0.5 {
			obs = append(obs, resource(s, s, int64(100<<20+s*(8<<20)), 0))
		}
		return obs
	}
	starved := func(end float64, runnable bool) []*protocol.Observation {
		obs := silentRun(end, 0.04) // a crowded machine gives the loop 4% of a core
		for _, o := range obs {
			if o.Resource != nil {
				o.Resource.Runnable = runnable
			}
		}
		return obs
	}
	// looked: the Python kernel's looks at the loop, one per resource sample: the distance to
	// the loop's exit at the i-th.
	looked := func(obs []*protocol.Observation, dist func(i int) float64) []*protocol.Observation {
		i := 0
		for _, o := range obs {
			if o.Resource != nil {
				o.Resource.Loop = &protocol.Loop{Line: 4, Exits: []protocol.LoopExit{{Line: 6, Distance: dist(i)}}}
				i++
			}
		}
		return obs
	}
	counted := "import random\nn, s = 0, 0.0\nprint('sampling')\nwhile n < 40_000_000:\n    s += random.random()\n    n += 1\n"
	tests := []struct {
		name string
		cfg  *Config
		obs  []*protocol.Observation
		want []emitted
	}{
		{"counted while loop", &Config{Code: counted}, silentRun(9.5, 1), nil},
		// Seen from inside, a loop that nears its exit is a quiet search, not a spin — even
		// when each of its steps takes three looks; one whose distance stays put, cycles or
		// grows spins.
		{"while loop, seen converging", &Config{Code: loop}, looked(silentRun(9.5, 1), func(i int) float64 { return math.Pow(0.5, float64(i)) }), nil},
		{"while loop, seen converging in slow steps", &Config{Code: loop}, looked(silentRun(9.5, 1), func(i int) float64 { return math.Pow(0.5, float64(i/3)) }), nil},
		{"while loop, seen stuck", &Config{Code: loop}, looked(silentRun(12, 1), func(int) float64 { return 1.1e-13 }), []emitted{{lastAt(4), protocol.Error, DetectorStagnation}}},
		{"while loop, seen cycling", &Config{Code: loop}, looked(silentRun(12, 1), func(i int) float64 { return []float64{882, 0.4, 882, 3}[i%4] }), []emitted{{lastAt(4), protocol.Error, DetectorStagnation}}},
		{"while loop, seen cycling, a look between two statements", &Config{Code: loop}, looked(silentRun(12, 1), func(i int) float64 {
			if i == 6 || i == 15 {
				return 1e-12 // x = x_new done, the next x_new not yet computed
			}
			return 0.2859
		}), []emitted{{lastAt(4), protocol.Error, DetectorStagnation}}},
		{"while loop, seen moving away", &Config{Code: loop}, looked(silentRun(12, 1), func(i int) float64 { return 0.1 * float64(i+1) }), []emitted{{lastAt(4), protocol.Error, DetectorStagnation}}},
		// Starved of CPU but runnable all along, it tries to run the whole silence: its own
		// wall-clock guard does not wait for the CPU it did not get.
		{"while loop, starved of CPU but runnable", &Config{Code: loop}, starved(12, true), []emitted{{lastAt(4), protocol.Error, DetectorStagnation}}},
		{"while loop, starved of CPU, 3.5 s", &Config{Code: loop}, starved(3.5, true), nil},
		{"while loop, asleep", &Config{Code: loop}, starved(20, false), nil},
		{"while loop, busy, 3.5 s", &Config{Code: loop}, silentRun(3.5, 1), nil},
		{"while loop, busy, 4 s", &Config{Code: loop}, silentRun(4, 1), []emitted{{lastAt(4), protocol.Error, DetectorStagnation}}},
		{"do-until, busy on a crowded machine", &Config{Code: octave}, silentRun(14, 0.3), []emitted{{lastAt(7), protocol.Error, DetectorStagnation}}},
		{"while loop, waiting", &Config{Code: loop}, silentRun(20, 0.05), nil},
		{"while loop, memory growing", &Config{Code: loop}, growing(9.5), nil},
		{"no open loop", &Config{Code: quiet}, silentRun(9.5, 1), nil},
		{"while loop, declared silence", &Config{Code: loop, Expect: Expectation{Silence: 30 * time.Second}}, silentRun(29.5, 1), nil},
		{"while loop, Quantum ESPRESSO", &Config{Code: loop, Profile: ProfileQE}, silentRun(9.5, 1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, feed(newMonitor(t, tt.cfg), tt.obs)); diff != "" {
				t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
			}
		})
	}
	m := newMonitor(t, &Config{Code: loop})
	feed(m, silentRun(4, 1))
	if v := m.Verdict(); !strings.Contains(v.Message, "while loop") {
		t.Errorf("message %q does not say why", v.Message)
	}
}
