package operation_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/kernel/shell"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

var compare = flag.Bool("corpus.compare", false, "also run every faulty corpus program to completion (hot-fix off) and report the wall-time ratio")

const corpusDir = "../perception/testdata/corpus"

// program is one labelled corpus program (see its README for the header format).
type program struct {
	name, path, kernel, code string
	faulty                   bool
	fault                    string
	watch                    []string
	silence                  time.Duration
	runtime                  time.Duration
	perception               map[string]string // perception: KEY=VALUE headers
	follow                   []string
	requires                 []string       // commands the program runs (pw.x, lmp)
	onsetLine                *regexp.Regexp // onset-line: the fault begins at the first output line matching it
}

func loadCorpus(t testing.TB) []*program {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*program
	for _, e := range entries {
		p := &program{name: e.Name(), path: filepath.Join(corpusDir, e.Name())}
		comment := ""
		switch filepath.Ext(e.Name()) {
		case ".m":
			p.kernel, comment = "octave", "%"
		case ".py":
			p.kernel, comment = "python", "#"
		case ".sh":
			p.kernel, comment = "shell", "#"
		default:
			continue
		}
		b, err := os.ReadFile(p.path)
		if err != nil {
			t.Fatal(err)
		}
		p.code = string(b)
		sc := bufio.NewScanner(strings.NewReader(p.code))
		for n := 1; sc.Scan(); n++ {
			key, val, ok := strings.Cut(strings.TrimPrefix(sc.Text(), comment+" "), ": ")
			if !ok || !strings.HasPrefix(sc.Text(), comment+" ") {
				break
			}
			switch key {
			case "label":
				p.faulty = val == "faulty"
			case "fault":
				p.fault = val
			case "watch":
				p.watch = append(p.watch, val)
			case "perception":
				k, v, ok := strings.Cut(val, "=")
				if !ok {
					t.Fatalf("%s:%d: perception %q is not KEY=VALUE", p.path, n, val)
				}
				if p.perception == nil {
					p.perception = map[string]string{}
				}
				p.perception[k] = v
			case "follow":
				p.follow = append(p.follow, val)
			case "requires":
				p.requires = append(p.requires, strings.Fields(val)...)
			case "onset-line":
				re, err := regexp.Compile(val)
				if err != nil {
					t.Fatalf("%s:%d: onset-line: %v", p.path, n, err)
				}
				p.onsetLine = re
			case "expect-silence", "runtime":
				s, err := strconv.ParseFloat(val, 64)
				if err != nil {
					t.Fatalf("%s:%d: %s %q is not a number of seconds", p.path, n, key, val)
				}
				if key == "runtime" {
					p.runtime = time.Duration(s * float64(time.Second))
				} else {
					p.silence = time.Duration(s * float64(time.Second))
				}
			}
		}
		if p.runtime == 0 {
			t.Fatalf("%s: no runtime header", p.path)
		}
		out = append(out, p)
	}
	return out
}

// recorder notes when the Hot-Fix interrupted the kernel.
type recorder struct {
	kernel.Kernel
	mu sync.Mutex
	at time.Time
}

func (r *recorder) Interrupt() error {
	r.mu.Lock()
	if r.at.IsZero() {
		r.at = time.Now()
	}
	r.mu.Unlock()
	return r.Kernel.Interrupt()
}

// outcome is what one run of a program showed.
type outcome struct {
	verdicts  []*protocol.Verdict
	errorAt   time.Time // first Error verdict
	begin     time.Time // when the operation started
	onset     time.Time // the program's labmate_log('onset', 1)
	interrupt time.Time // the Hot-Fix's interrupt
	terminal  *operation.Message
	wall      time.Duration
}

// runProgram runs p in a fresh kernel; it may run on any goroutine.
func runProgram(opts kernel.Options, workspace string, p *program, hotfix protocol.Hotfix) (*outcome, error) {
	start := python.Start
	switch p.kernel {
	case "octave":
		start = octave.Start
	case "shell":
		start = shell.Start
	}
	opts.Workspace = workspace
	k, err := start(context.Background(), &opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	defer k.Close()
	rec := &recorder{Kernel: k}
	plan, err := operation.Check(&protocol.Request{Kind: "exec", Kernel: p.kernel, Code: p.code, Hotfix: hotfix,
		Watch: p.watch, ExpectSilenceS: p.silence.Seconds(), TimeoutS: 2*p.runtime.Seconds() + 30,
		Perception: p.perception, Follow: p.follow})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	o := &outcome{begin: time.Now()}
	for m := range operation.Exec(context.Background(), rec, plan, nil) {
		if pr, ok := m.Payload.(*protocol.Progress); ok {
			if v := pr.Verdict; v != nil {
				o.verdicts = append(o.verdicts, v)
				if v.State == protocol.Error && o.errorAt.IsZero() {
					o.errorAt = time.Now()
					if pr.Observation != nil {
						o.errorAt = pr.Observation.Time
					}
				}
			}
			if ob := pr.Observation; ob != nil && o.onset.IsZero() {
				switch {
				case p.onsetLine != nil:
					if ob.Kind == protocol.ObsStdout && p.onsetLine.MatchString(ob.Line) {
						o.onset = ob.Time
					}
				case ob.Sample != nil && ob.Sample.Name == "onset" && ob.Sample.Source == protocol.FromHelper:
					o.onset = ob.Time
				}
			}
		}
		o.terminal = m
	}
	o.wall = time.Since(o.begin)
	o.interrupt = rec.at
	return o, nil
}

func describe(vs []*protocol.Verdict) string {
	var s []string
	for _, v := range vs {
		s = append(s, fmt.Sprintf("%s/%s: %s %v", v.State, v.Detector, v.Message, v.Evidence))
	}
	return strings.Join(s, "; ")
}

// runAll runs progs two at a time (the machines have two cores), each in a fresh kernel.
func runAll(t *testing.T, opts kernel.Options, progs []*program, hotfix protocol.Hotfix) []*outcome {
	results := make([]*outcome, len(progs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, p := range progs {
		ws := t.TempDir()
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o, err := runProgram(opts, ws, p, hotfix)
			if err != nil {
				t.Error(err)
			}
			results[i] = o
		})
	}
	wg.Wait()
	return results
}

// stopBudget is how late after its onset a stopped fault may be stopped: 5 s, or 20% of the
// time the program still had to run, whichever is longer. The declared runtime is measured on
// a quiet machine; a program stopped only after it would have ended there ran slower (the
// machine is loaded, as under -race with other packages' tests), and the budget stretches
// with it by at least that factor.
func stopBudget(p *program, onsetAfter, stoppedAt time.Duration) time.Duration {
	pace := max(1, float64(stoppedAt)/float64(p.runtime))
	return time.Duration(pace * float64(max(5*time.Second, (p.runtime-onsetAfter)/5)))
}

// TestCorpus runs every labelled program through a real kernel with the default Hot-Fix
// policy and holds perception to the bar: recall on faulty runs ≥ 95%, false alarms
// on healthy runs ≤ 5%, every faulty run that perception stopped stopped within 5 s of its
// anomaly's onset or 20% of its remaining run time, and every Octave or Python faulty run
// that would take over 10 s interrupted within 2 s of its onset. Programs that run Quantum
// ESPRESSO or LAMMPS are skipped, saying so, where pw.x or lmp is not installed.
func TestCorpus(t *testing.T) {
	all := loadCorpus(t)
	var progs []*program
	skipped := map[string]int{}
	for _, p := range all {
		missing := ""
		for _, req := range p.requires { // a command, or a path pattern (an Octave package)
			if strings.HasPrefix(req, "/") {
				if m, _ := filepath.Glob(req); len(m) == 0 {
					missing = req
				}
			} else if _, err := exec.LookPath(req); err != nil {
				missing = req
			}
		}
		if missing != "" {
			skipped[missing]++
			continue
		}
		progs = append(progs, p)
	}
	for cmd, n := range skipped {
		t.Logf("SKIPPED %d corpus programs: %s is not installed (scripts/deps installs it)", n, cmd)
	}
	opts := testutil.KernelOptions(t)
	results := runAll(t, opts, progs, protocol.HotfixOnError)

	var faulty, caught, healthy, alarms, long, slow, stopped, late, software int
	var hotfixWall, fullRuntime time.Duration
	for i, p := range progs {
		o := results[i]
		if len(p.requires) > 0 {
			software++
		}
		if o == nil {
			continue // runProgram's error failed the test already
		}
		gotError := !o.errorAt.IsZero()
		if !p.faulty {
			healthy++
			if gotError {
				alarms++
				t.Logf("FALSE ALARM on healthy %s: %s", p.name, describe(o.verdicts))
			} else if len(o.verdicts) > 0 {
				t.Logf("healthy %s had verdicts (not errors): %s", p.name, describe(o.verdicts))
			}
			t.Logf("healthy %s: wall %v (declared runtime %v)", p.name, o.wall.Round(time.Millisecond), p.runtime)
			continue
		}
		faulty++
		hotfixWall += o.wall
		fullRuntime += p.runtime
		if !gotError {
			t.Logf("MISSED faulty %s (%s): verdicts %s, ended %s", p.name, p.fault, describe(o.verdicts), o.terminal.Type)
			continue
		}
		caught++
		last := o.verdicts[len(o.verdicts)-1].Detector
		f, _ := o.terminal.Payload.(*protocol.Failed)
		if byHotfix := f != nil && f.Reason == protocol.ReasonInterrupted; byHotfix && !o.interrupt.IsZero() && !o.onset.IsZero() {
			stopped++
			after := o.interrupt.Sub(o.onset)
			budget := stopBudget(p, o.onset.Sub(o.begin), o.interrupt.Sub(o.begin))
			if after > budget {
				late++
				t.Errorf("faulty %s stopped %v after its onset, want ≤ %v (5 s or 20%% of the %v it had left): %s", p.name,
					after.Round(time.Millisecond), budget.Round(time.Millisecond), (p.runtime - o.onset.Sub(o.begin)).Round(time.Millisecond), describe(o.verdicts))
			}
			t.Logf("faulty %s: onset at %.1f s, stopped %v after it by %s (wall %v, runs %v to its end)", p.name, o.onset.Sub(o.begin).Seconds(),
				after.Round(time.Millisecond), last, o.wall.Round(time.Millisecond), p.runtime)
		} else if byHotfix {
			t.Logf("faulty %s: stopped by %s before it logged its onset (wall %v)", p.name, last, o.wall.Round(time.Millisecond))
		} else {
			t.Logf("faulty %s: caught by %s; it ended by itself, %s (wall %v)", p.name, last, o.terminal.Type, o.wall.Round(time.Millisecond))
		}
		if p.runtime > 10*time.Second {
			long++
			switch {
			case o.onset.IsZero() && !o.interrupt.IsZero():
				// The fault printed its evidence and the Hot-Fix stopped the program before the
				// statement after it, which logs the onset, could run: caught at once.
				t.Logf("faulty %s: interrupted by %s before it could log its onset", p.name, last)
			case o.onset.IsZero():
				t.Errorf("faulty %s never logged its onset", p.name)
			case o.interrupt.IsZero():
				t.Errorf("faulty %s (runtime %v) was not interrupted", p.name, p.runtime)
			case p.kernel != "shell" && o.interrupt.Sub(o.onset) > 2*time.Second:
				slow++
				t.Errorf("faulty %s interrupted %v after its onset, want ≤ 2s (%s)", p.name, o.interrupt.Sub(o.onset).Round(time.Millisecond), describe(o.verdicts))
			}
		}
	}
	recall := float64(caught) / float64(faulty)
	falseRate := float64(alarms) / float64(healthy)
	t.Logf("corpus: %d programs (%d run Quantum ESPRESSO or LAMMPS); recall %d/%d = %.1f%%; false alarms %d/%d = %.1f%%; %d faults stopped, %d late; %d long faulty runs, %d interrupted after 2 s",
		len(progs), software, caught, faulty, 100*recall, alarms, healthy, 100*falseRate, stopped, late, long, slow)
	t.Logf("faulty corpus wall time with hot-fix %v vs %v declared run-to-completion: ratio %.3f",
		hotfixWall.Round(time.Millisecond), fullRuntime, hotfixWall.Seconds()/fullRuntime.Seconds())
	minProgs := 85
	if len(skipped) > 0 {
		minProgs = 40
	}
	if len(progs) < minProgs || faulty < 15 || healthy < 15 || long < 6 {
		t.Errorf("corpus too small: %d programs, %d faulty, %d healthy, %d long faulty", len(progs), faulty, healthy, long)
	}
	if recall < 0.95 {
		t.Errorf("recall %.1f%% < 95%%", 100*recall)
	}
	if falseRate > 0.05 {
		t.Errorf("false alarms %.1f%% > 5%%", 100*falseRate)
	}
	if *compare {
		var faults []*program
		var withFix []*outcome
		for i, p := range progs {
			if p.faulty && results[i] != nil {
				faults, withFix = append(faults, p), append(withFix, results[i])
			}
		}
		toEnd := runAll(t, opts, faults, protocol.HotfixOff)
		var on, off time.Duration
		for i, p := range faults {
			if toEnd[i] == nil {
				continue
			}
			on, off = on+withFix[i].wall, off+toEnd[i].wall
			t.Logf("compare %-32s hot-fix %8v  run to the end %8v", p.name, withFix[i].wall.Round(time.Millisecond), toEnd[i].wall.Round(time.Millisecond))
		}
		t.Logf("faulty corpus: hot-fix %v vs run to completion %v: ratio %.3f", on.Round(time.Millisecond), off.Round(time.Millisecond), on.Seconds()/off.Seconds())
	}
}
