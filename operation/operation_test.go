package operation_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

func TestCheck(t *testing.T) {
	ok := protocol.Request{Kind: "exec", Kernel: "python", Code: "x = 1"}
	if p, err := operation.Check(&ok); err != nil || p.Hotfix != protocol.HotfixOnError {
		t.Fatalf("Check(%+v) = %+v, %v; want on_error by default", ok, p, err)
	}
	for _, c := range []struct {
		name string
		edit func(*protocol.Request)
		want string
	}{
		{"kind", func(r *protocol.Request) { r.Kind = "job" }, `kind "job"`},
		{"kernel", func(r *protocol.Request) { r.Kernel = "" }, "kernel: missing"},
		{"timeout", func(r *protocol.Request) { r.TimeoutS = -1 }, "timeout_s: -1"},
		{"silence", func(r *protocol.Request) { r.ExpectSilenceS = -2 }, "expect_silence_s: -2"},
		{"hotfix", func(r *protocol.Request) { r.Hotfix = "sometimes" }, `hotfix "sometimes"`},
		{"empty", func(r *protocol.Request) { r.Code = " \n" }, "code: empty"},
		{"binary", func(r *protocol.Request) { r.Code = "\xff\xfe" }, "not UTF-8"},
		{"watch", func(r *protocol.Request) { r.Watch = []string{"x <"} }, "watch"},
		{"profile", func(r *protocol.Request) { r.Profile = "vasp" }, `profile: perception: bad config: unknown profile "vasp"`},
		{"perception", func(r *protocol.Request) { r.Perception = map[string]string{"silence": "soon"} }, `rejected: perception: bad config: silence="soon"`},
		{"detector", func(r *protocol.Request) { r.Perception = map[string]string{"telepathy": "off"} }, `unknown perception setting "telepathy"`},
		{"follow", func(r *protocol.Request) { r.Follow = []string{"../../etc/shadow"} }, "follow: \"../../etc/shadow\" is not a relative path"},
	} {
		r := ok
		c.edit(&r)
		_, err := operation.Check(&r)
		if !errors.Is(err, operation.ErrRejected) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrRejected mentioning %q", c.name, err, c.want)
		}
	}
	if _, err := operation.Check(nil); !errors.Is(err, operation.ErrRejected) {
		t.Errorf("Check(nil) = %v", err)
	}
}

// diverging prints a value that grows tenfold every 50 ms for ten seconds.
const diverging = "import time\nx = 1.0\nfor i in range(200):\n    x *= 10\n    print('x =', x, flush=True)\n    time.sleep(0.05)\nprint('done')"

func start(t testing.TB) kernel.Kernel {
	t.Helper()
	o := testutil.KernelOptions(t)
	o.Workspace = t.TempDir()
	k, err := python.Start(context.Background(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func run(t *testing.T, k kernel.Kernel, req *protocol.Request) []*operation.Message {
	t.Helper()
	p, err := operation.Check(req)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(operation.Exec(context.Background(), k, p, nil))
}

func TestHotfixStopsDivergence(t *testing.T) {
	k := start(t)
	begin := time.Now()
	msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: diverging})
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("a diverging run took %v: not stopped", d)
	}
	if msgs[0].Type != protocol.TypeStart {
		t.Errorf("first message %s, want operation_start", msgs[0].Type)
	}
	last := msgs[len(msgs)-1]
	f, ok := last.Payload.(*protocol.Failed)
	if !ok || f.Reason != protocol.ReasonInterrupted || f.Verdict == nil || f.Verdict.State != protocol.Error || !f.Result.WorkspaceOK {
		t.Fatalf("terminal %s %+v, want failed/interrupted with an Error verdict and the workspace kept", last.Type, last.Payload)
	}
	var verdicts int
	for _, m := range msgs[1 : len(msgs)-1] {
		if m.Type != protocol.TypeProgress {
			t.Fatalf("%s between start and the terminal message", m.Type)
		}
		if m.Payload.(*protocol.Progress).Verdict != nil {
			verdicts++
		}
	}
	if verdicts == 0 || verdicts > 3 {
		t.Errorf("%d verdicts: want them on change, not per line", verdicts)
	}
	// The workspace survived the hot-fix: x is still there.
	msgs = run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: "print(x > 1)"})
	if msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Errorf("next cell: %+v", msgs[len(msgs)-1].Payload)
	}
}

func TestHotfixOffObservesOnly(t *testing.T) {
	k := start(t)
	code := "import math\nfor i in range(5):\n    print('x =', math.nan if i >= 2 else i)\nprint('done')"
	msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: code, Hotfix: protocol.HotfixOff})
	var sawError, sawDone bool
	for _, m := range msgs {
		if p, ok := m.Payload.(*protocol.Progress); ok {
			sawError = sawError || (p.Verdict != nil && p.Verdict.State == protocol.Error)
			sawDone = sawDone || p.Observation.Line == "done"
		}
	}
	if !sawError || !sawDone || msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Errorf("hotfix off: error verdict %v, ran to the end %v, terminal %s", sawError, sawDone, msgs[len(msgs)-1].Type)
	}
}

func TestWatchConstraint(t *testing.T) {
	k := start(t)
	code := "import time\nfor i in range(100):\n    labmate.log('temperature', 300 + 10 * i)\n    time.sleep(0.02)"
	msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: code, Watch: []string{"temperature < 400"}})
	f, ok := msgs[len(msgs)-1].Payload.(*protocol.Failed)
	if !ok || f.Verdict == nil || f.Verdict.Detector != "constraint" {
		t.Fatalf("terminal %+v, want a failure by the constraint", msgs[len(msgs)-1].Payload)
	}
	if !strings.Contains(strings.Join(f.Verdict.Evidence, " "), "400") {
		t.Errorf("evidence %q does not show the offending value", f.Verdict.Evidence)
	}
}

// TestWatchNeverSeen: a watch on a series the cell never reports ends the cell with a Warning
// naming it; one the cell reports leaves it Normal.
func TestWatchNeverSeen(t *testing.T) {
	k := start(t)
	for _, tc := range []struct {
		watch string
		want  protocol.VerdictState
	}{
		{"temprature < 400", protocol.Warning},
		{"temperature < 400", protocol.Normal},
	} {
		msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: "labmate.log('temperature', 300)", Watch: []string{tc.watch}})
		if msgs[len(msgs)-1].Type != protocol.TypeComplete {
			t.Fatalf("watch %q: terminal %+v, want completed", tc.watch, msgs[len(msgs)-1].Payload)
		}
		got := protocol.Verdict{State: protocol.Normal}
		for _, m := range msgs {
			if p, ok := m.Payload.(*protocol.Progress); ok && p.Verdict != nil {
				got = *p.Verdict
			}
		}
		if got.State != tc.want {
			t.Errorf("watch %q: verdict %+v, want %s", tc.watch, got, tc.want)
		}
		if tc.want == protocol.Warning && !strings.Contains(got.Message, `watch "temprature < 400" was never checked: no value of temprature appeared`) {
			t.Errorf("verdict %q does not name the series", got.Message)
		}
	}
}

func TestErrorCarriesVerdict(t *testing.T) {
	k := start(t)
	msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: "x = [1]\nx[3]", Hotfix: protocol.HotfixOff})
	f, ok := msgs[len(msgs)-1].Payload.(*protocol.Failed)
	if !ok || f.Reason != protocol.ReasonError || f.Verdict == nil || f.Result.Line != 2 {
		t.Fatalf("terminal %+v, want an error at line 2 with perception's verdict", msgs[len(msgs)-1].Payload)
	}
}

func TestDeadKernelFails(t *testing.T) {
	k := start(t)
	k.Close()
	msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: "x = 1"})
	f, ok := msgs[len(msgs)-1].Payload.(*protocol.Failed)
	if !ok || f.Reason != protocol.ReasonError || !strings.Contains(f.Error, "closed") {
		t.Fatalf("terminal %+v, want failed: kernel closed", msgs[len(msgs)-1].Payload)
	}
}

// BenchmarkHotfixLatency measures the time from the offending line being printed (the
// line carries its own time stamp) to the Hot-Fix's interrupt being sent.
func BenchmarkHotfixLatency(b *testing.B) {
	k := start(b)
	code := "import time\nprint('x = 1', flush=True)\nprint('x = nan', flush=True)\ntime.sleep(0.01)\nprint('at %.6f x = nan' % time.time(), flush=True)\ntime.sleep(30)"
	p, err := operation.Check(&protocol.Request{Kind: "exec", Kernel: "python", Code: code})
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	for b.Loop() {
		rec := &recorder{Kernel: k}
		var printed time.Time
		for m := range operation.Exec(context.Background(), rec, p, nil) {
			if pr, ok := m.Payload.(*protocol.Progress); ok && strings.HasPrefix(pr.Observation.Line, "at ") {
				f := strings.Fields(pr.Observation.Line)
				sec, err := strconv.ParseFloat(f[1], 64)
				if err != nil {
					b.Fatal(err)
				}
				printed = time.Unix(0, int64(sec*1e9))
			}
		}
		if rec.at.IsZero() || printed.IsZero() {
			b.Fatal("the NaN line did not trigger the hot-fix")
		}
		lat = append(lat, rec.at.Sub(printed))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
}

// judgeFunc is a scripted Judge.
type judgeFunc func(window []*protocol.Observation, v *protocol.Verdict) *protocol.Verdict

func (f judgeFunc) Judge(_ context.Context, window []*protocol.Observation, v *protocol.Verdict) (*protocol.Verdict, error) {
	return f(window, v), nil
}

func TestJudgeEscalation(t *testing.T) {
	// A RuntimeWarning is a Warning: ambiguous. Without a judge the run completes.
	code := "import numpy as np, time\nnp.float64(1e308) * 10\nfor i in range(30):\n    print('step', i, flush=True)\n    time.sleep(0.05)"
	req := &protocol.Request{Kind: "exec", Kernel: "python", Code: code}
	k := start(t)
	msgs := run(t, k, req)
	if last := msgs[len(msgs)-1]; last.Type != protocol.TypeComplete {
		t.Fatalf("without a judge: %s %+v", last.Type, last.Payload)
	}
	// A judge that reads the window and calls it an Error stops the run.
	var asked []string
	judge := judgeFunc(func(window []*protocol.Observation, v *protocol.Verdict) *protocol.Verdict {
		for _, o := range window {
			asked = append(asked, o.Line)
		}
		return &protocol.Verdict{State: protocol.Error, Message: "overflow poisons the run", Action: protocol.ActionInterrupt}
	})
	p, err := operation.Check(req)
	if err != nil {
		t.Fatal(err)
	}
	msgs = slices.Collect(operation.Exec(context.Background(), k, p, &operation.Options{Judge: judge}))
	f, ok := msgs[len(msgs)-1].Payload.(*protocol.Failed)
	if !ok || f.Verdict == nil || f.Verdict.Detector != "judge" || f.Reason != protocol.ReasonInterrupted {
		t.Fatalf("with a judge: %+v", msgs[len(msgs)-1].Payload)
	}
	if !strings.Contains(strings.Join(asked, "\n"), "RuntimeWarning: overflow") {
		t.Errorf("the judge's window lacks the warning: %q", asked)
	}
}

// TestLateViolationNeverSucceeds: a --watch violated on the very last sample, when the cell
// finishes before the interrupt can take hold, must still end as operation_failed
// (interrupted, with the constraint's verdict) — every time. It runs the case 200 times,
// on four kernels at once, with the violation logged by the helper and printed on stdout.
func TestLateViolationNeverSucceeds(t *testing.T) {
	cases := []struct {
		code  string
		watch string
	}{
		{"for i in range(5):\n    labmate.log('x', i)", "x < 4"},
		{"for i in range(6):\n    print('x =', i)", "x < 5"},
		{"print('progress: 1 of 1')\nlabmate.log('temperature', 401)", "temperature < 400"},
	}
	const runs, kernels = 200, 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for w := range kernels {
		k := start(t)
		wg.Go(func() {
			for i := w; i < runs; i += kernels {
				c := cases[i%len(cases)]
				p, err := operation.Check(&protocol.Request{Kind: "exec", Kernel: "python", Code: c.code, Watch: []string{c.watch}})
				if err != nil {
					t.Error(err)
					return
				}
				var sawError bool
				var last *operation.Message
				for m := range operation.Exec(context.Background(), k, p, nil) {
					if pr, ok := m.Payload.(*protocol.Progress); ok && pr.Verdict != nil && pr.Verdict.State == protocol.Error {
						sawError = true
					}
					last = m
				}
				key := string(last.Type)
				if f, ok := last.Payload.(*protocol.Failed); ok {
					key += "/" + string(f.Reason)
					if f.Verdict == nil || f.Verdict.Detector != perception.DetectorConstraint {
						key += "/no constraint verdict"
					}
				}
				if !sawError {
					key += "/no Error verdict in the stream"
				}
				mu.Lock()
				outcomes[key]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	want := map[string]int{"operation_failed/interrupted": runs}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("outcomes of %d late violations (-want +got):\n%s", runs, diff)
	}
}

// TestHotfixCarriesRoleAndCorrection: a conserved quantity drifting under explicit Euler is
// stopped, and the verdict handed to the agent (and printed) names the series' role and the
// documented correction.
func TestHotfixCarriesRoleAndCorrection(t *testing.T) {
	k := start(t)
	code := `import time, math
x, y, vx, vy, dt = 1.0, 0.0, 0.0, 1.0, 0.05
E0 = 0.5 * (vx * vx + vy * vy) - 1.0
for step in range(2000):
    r3 = (x * x + y * y) ** 1.5
    x, y, vx, vy = x + dt * vx, y + dt * vy, vx - dt * x / r3, vy - dt * y / r3
    E = 0.5 * (vx * vx + vy * vy) - 1.0 / math.hypot(x, y)
    print(f"step {step} dE/E0 = {(E - E0) / abs(E0):.6e}", flush=True)
    time.sleep(0.01)
`
	msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: code})
	f, ok := msgs[len(msgs)-1].Payload.(*protocol.Failed)
	if !ok || f.Reason != protocol.ReasonInterrupted || f.Verdict == nil {
		t.Fatalf("terminal %+v, want failed/interrupted with a verdict", msgs[len(msgs)-1].Payload)
	}
	v := f.Verdict
	if v.Detector != "drift" || !strings.Contains(v.Role, "conserved") || !strings.Contains(v.Correction, "symplectic") {
		t.Errorf("verdict %+v: want the drift detector, a conserved role and a symplectic-integrator correction", v)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"correction":`) || !strings.Contains(string(b), `"role":`) {
		t.Errorf("the failure the agent reads lacks the role or the correction: %s", b)
	}
}

// TestHotfixProgressBar: a training loop that reports through a progress bar redrawn with
// carriage returns (as tqdm does, on stderr, with no newline until the bar closes) is read
// redraw by redraw: its loss turning NaN stops the run while the bar is still open.
func TestHotfixProgressBar(t *testing.T) {
	k := start(t)
	code := `import sys, time, math
n = 400
for i in range(1, n + 1):
    loss = 1.0 / i if i < 60 else math.nan
    done = 10 * i // n
    sys.stderr.write(f"\r{100 * i // n:3d}%|{'#' * done}{' ' * (10 - done)}| {i}/{n} [00:00<00:10, 40.0it/s, loss={loss:.4f}]")
    sys.stderr.flush()
    time.sleep(0.05)
sys.stderr.write("\n")
`
	begin := time.Now()
	msgs := run(t, k, &protocol.Request{Kind: "exec", Kernel: "python", Code: code})
	f, ok := msgs[len(msgs)-1].Payload.(*protocol.Failed)
	if !ok || f.Reason != protocol.ReasonInterrupted || f.Verdict == nil || f.Verdict.Detector != perception.DetectorNonFinite {
		t.Fatalf("terminal %s %+v, want interrupted by a non-finite loss", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	// The NaN appears 3 s in; the bar would close after 20 s.
	if d := time.Since(begin); d > 15*time.Second {
		t.Errorf("stopped after %v: the redraws were not read as they were drawn", d)
	}
}
