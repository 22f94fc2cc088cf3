package operation_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
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
	onset     time.Time // the program's labmate_log('onset', 1)
	interrupt time.Time // the Hot-Fix's interrupt
	terminal  *operation.Message
	wall      time.Duration
}

// runProgram runs p in a fresh kernel; it may run on any goroutine.
func runProgram(opts kernel.Options, workspace string, p *program, hotfix protocol.Hotfix) (*outcome, error) {
	start := python.Start
	if p.kernel == "octave" {
		start = octave.Start
	}
	opts.Workspace = workspace
	k, err := start(context.Background(), &opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	defer k.Close()
	rec := &recorder{Kernel: k}
	plan, err := operation.Check(&protocol.Request{Kind: "exec", Kernel: p.kernel, Code: p.code, Hotfix: hotfix,
		Watch: p.watch, ExpectSilenceS: p.silence.Seconds(), TimeoutS: 2*p.runtime.Seconds() + 30})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	o := &outcome{}
	begin := time.Now()
	for m := range operation.Exec(context.Background(), rec, plan, nil) {
		if pr, ok := m.Payload.(*protocol.Progress); ok {
			if v := pr.Verdict; v != nil {
				o.verdicts = append(o.verdicts, v)
				if v.State == protocol.Error && o.errorAt.IsZero() {
					o.errorAt = pr.Observation.Time
				}
			}
			if s := pr.Observation.Sample; s != nil && s.Name == "onset" && s.Source == protocol.FromHelper && o.onset.IsZero() {
				o.onset = pr.Observation.Time
			}
		}
		o.terminal = m
	}
	o.wall = time.Since(begin)
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

// TestCorpus runs every labelled program through a real kernel with the default Hot-Fix
// policy and holds perception to the bar: recall on faulty runs ≥ 95%, false alarms
// on healthy runs ≤ 5%, and every faulty run that would take over 10 s interrupted within
// 2 s of its anomaly's onset.
func TestCorpus(t *testing.T) {
	progs := loadCorpus(t)
	opts := testutil.KernelOptions(t)
	results := make([]*outcome, len(progs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, p := range progs {
		ws := t.TempDir()
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o, err := runProgram(opts, ws, p, protocol.HotfixOnError)
			if err != nil {
				t.Error(err)
			}
			results[i] = o
		})
	}
	wg.Wait()

	var faulty, caught, healthy, alarms, long, slow int
	var hotfixWall, fullRuntime time.Duration
	for i, p := range progs {
		o := results[i]
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
		if p.runtime > 10*time.Second {
			long++
			switch {
			case o.onset.IsZero() && !o.interrupt.IsZero():
				// The fault printed its evidence and the Hot-Fix stopped the program before the
				// statement after it, which logs the onset, could run: caught at once.
				t.Logf("faulty %s: interrupted by %s before it could log its onset", p.name, o.verdicts[len(o.verdicts)-1].Detector)
			case o.onset.IsZero():
				t.Errorf("faulty %s never logged its onset", p.name)
			case o.interrupt.IsZero():
				t.Errorf("faulty %s (runtime %v) was not interrupted", p.name, p.runtime)
			case o.interrupt.Sub(o.onset) > 2*time.Second:
				slow++
				t.Errorf("faulty %s interrupted %v after its onset, want ≤ 2s (%s)", p.name, o.interrupt.Sub(o.onset).Round(time.Millisecond), describe(o.verdicts))
			default:
				t.Logf("faulty %s: interrupted %v after onset by %s", p.name, o.interrupt.Sub(o.onset).Round(time.Millisecond), o.verdicts[len(o.verdicts)-1].Detector)
			}
		}
	}
	recall := float64(caught) / float64(faulty)
	falseRate := float64(alarms) / float64(healthy)
	t.Logf("corpus: %d programs; recall %d/%d = %.1f%%; false alarms %d/%d = %.1f%%; %d long faulty runs, %d interrupted late",
		len(progs), caught, faulty, 100*recall, alarms, healthy, 100*falseRate, long, slow)
	t.Logf("faulty corpus wall time with hot-fix %v vs %v declared run-to-completion: ratio %.3f",
		hotfixWall.Round(time.Millisecond), fullRuntime, hotfixWall.Seconds()/fullRuntime.Seconds())
	if len(progs) < 40 || faulty < 15 || healthy < 15 || long < 6 {
		t.Errorf("corpus too small: %d programs, %d faulty, %d healthy, %d long faulty", len(progs), faulty, healthy, long)
	}
	if recall < 0.95 {
		t.Errorf("recall %.1f%% < 95%%", 100*recall)
	}
	if falseRate > 0.05 {
		t.Errorf("false alarms %.1f%% > 5%%", 100*falseRate)
	}
	if *compare {
		var off time.Duration
		for _, p := range progs {
			if p.faulty {
				o, err := runProgram(opts, t.TempDir(), p, protocol.HotfixOff)
				if err != nil {
					t.Fatal(err)
				}
				off += o.wall
			}
		}
		t.Logf("faulty corpus: hot-fix %v vs run to completion %v: ratio %.3f", hotfixWall.Round(time.Millisecond), off.Round(time.Millisecond), hotfixWall.Seconds()/off.Seconds())
	}
}
