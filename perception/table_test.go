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

// parsedFrom feeds lines as stdout and collects what Parsed returned, as "name=value@t".
func parsedFrom(t *testing.T, cfg *Config, lines ...string) []string {
	t.Helper()
	m := newMonitor(t, cfg)
	var out []string
	for i, l := range lines {
		m.Observe(stdout(float64(i)*0.1, l))
		for _, s := range m.Parsed() {
			e := s.Name + "=" + num(s.Value)
			if s.T != nil {
				e += "@" + num(*s.T)
			}
			if s.Source != protocol.FromStdout {
				e += " (" + string(s.Source) + ")"
			}
			out = append(out, e)
		}
	}
	return out
}

func TestTables(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"aligned", []string{"Step Temp TotEng", "   0   300  -896.35", "  20   197.4  -896.35"},
			[]string{"Step=0", "Temp=300", "TotEng=-896.35", "Step=20", "Temp=197.4", "TotEng=-896.35"}},
		{"CSV", []string{"epoch,loss,accuracy", "1,0.693,0.51", "2, nan, 0.49"},
			[]string{"epoch=1", "loss=0.693", "accuracy=0.51", "epoch=2", "loss=NaN", "accuracy=0.49"}},
		{"pipes with borders", []string{"| iter | residual |", "|------|----------|", "|    1 | 1.0e-2   |"},
			[]string{"iter=1", "residual=0.01"}},
		{"pandas index", []string{"   epoch      loss", "0      1  0.500000", "1      2  0.400000"},
			[]string{"epoch=1", "loss=0.5", "epoch=2", "loss=0.4"}},
		{"time column", []string{"t x v", "0.1 1 -2", "0.2 0.9 -2.1"},
			[]string{"x=1@0.1", "v=-2@0.1", "x=0.9@0.2", "v=-2.1@0.2"}},
		{"Fortran exponents", []string{"iter resid", "1 1.5D-03"}, []string{"iter=1", "resid=0.0015"}},
		{"LAMMPS names", []string{"Step c_msd[4] v_T", "100 0.25 1.5"}, []string{"Step=100", "c_msd[4]=0.25", "v_T=1.5"}},
		{"norms and ratios", []string{"iter  ||F||  |dx|  dE/E0", "1  2.5e-1  0.1  -inf"}, []string{"iter=1", "||F||=0.25", "|dx|=0.1", "dE/E0=-Inf"}},
		{"pipes and norms", []string{"| k | |r| |", "| 1 | 0.5 |"}, nil},
		// Not tables.
		{"words then a different count", []string{"Results summary", "1 2 3"}, nil},
		{"words, prose, numbers", []string{"iter residual", "starting the solver", "1 0.5"}, nil},
		{"numbers without a header", []string{"   1   2", "   3   4"}, nil},
		{"a matrix display", []string{"A =", "", "   1   2", "   3   4"}, nil},
		{"mixed header", []string{"x = 3 y", "1 2 3"}, []string{"x=3"}}, // a pair, not a header
		// A table survives prose once it has rows; a row of another width ends it.
		{"prose mid-table", []string{"n err", "1 0.5", "checkpoint saved to disk", "2 0.25"}, []string{"n=1", "err=0.5", "n=2", "err=0.25"}},
		{"a new header", []string{"n err", "1 0.5", "k x y", "1 2 3"}, []string{"n=1", "err=0.5", "k=1", "x=2", "y=3"}},
		{"another width", []string{"n err", "1 0.5", "1 2 3", "2 0.25"}, []string{"n=1", "err=0.5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, parsedFrom(t, nil, c.lines...)); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTableVerdicts(t *testing.T) {
	// A column that turns NaN mid-run is an Error (the row is a sample, not an anonymous
	// number); a column diverging exponentially too.
	lines := []string{"epoch,loss"}
	for i := range 6 {
		lines = append(lines, itoa(i)+","+num(1/float64(i+1)))
	}
	lines = append(lines, "6,nan", "7,nan")
	m := newMonitor(t, nil)
	got := feed(m, linesAt(0.1, lines...))
	want := []emitted{{7, protocol.Error, DetectorNonFinite}} // a loss: its first NaN is an Error
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NaN column (-want +got):\n%s", diff)
	}
	lines[0] = "epoch,value"
	got = feed(newMonitor(t, nil), linesAt(0.1, lines...))
	want = []emitted{{7, protocol.Warning, DetectorNonFinite}, {8, protocol.Error, DetectorNonFinite}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NaN column of no role (-want +got):\n%s", diff)
	}
	lines = []string{"step N"}
	for i := range 40 {
		lines = append(lines, itoa(i)+" "+num(math.Pow(4, float64(i))))
	}
	if e := firstAlarm(t, nil, linesAt(0.1, lines...)); e.Detector != DetectorDivergence {
		t.Errorf("a diverging column: %+v", e)
	}
}

func linesAt(dt float64, lines ...string) []*protocol.Observation {
	out := make([]*protocol.Observation, len(lines))
	for i, l := range lines {
		out[i] = stdout(float64(i)*dt, l)
	}
	return out
}

func TestFollowedFiles(t *testing.T) {
	// A followed file has its own table state and its own series (source "file").
	m := newMonitor(t, nil)
	file := func(sec float64, path, line string) *protocol.Observation {
		return &protocol.Observation{Kind: protocol.ObsFile, Time: ts(sec), Path: path, Line: line}
	}
	var got []string
	for _, o := range []*protocol.Observation{
		file(0, "a.log", "n err"), stdout(0.1, "n x"), file(0.2, "a.log", "1 0.5"), stdout(0.3, "1 2"), file(0.4, "b.log", "1 2"),
	} {
		m.Observe(o)
		for _, s := range m.Parsed() {
			got = append(got, s.Name+"="+num(s.Value)+" "+string(s.Source))
		}
	}
	if diff := cmp.Diff([]string{"n=1 file", "err=0.5 file", "n=1 stdout", "x=2 stdout"}, got); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	// A followed file's lines are activity: a busy run writing only to its log is not silent.
	m = newMonitor(t, nil)
	obs := []*protocol.Observation{event(0, protocol.EventStarted), stdout(0, "writing to run.log")}
	for s := 0.5; s <= 40; s += 0.5 {
		obs = append(obs, resource(s, s, 100<<20, 0), file(s, "run.log", "step "+num(s)))
	}
	if v := feed(m, obs); v != nil {
		t.Errorf("a run writing its log: %v", v)
	}
	m = newMonitor(t, nil)
	obs = obs[:2]
	for s := 0.5; s <= 40; s += 0.5 {
		obs = append(obs, resource(s, s, 100<<20, 0), file(s, "out.bin", "")) // growth without lines
	}
	if v := feed(m, obs); v != nil {
		t.Errorf("a run writing a binary file: %v", v)
	}
}

func TestWatchBoundReplacesDivergence(t *testing.T) {
	growth := seriesObs("N", 0.05, geometric(100, 2, 50)) // 100 → 5.6e16
	if e := firstAlarm(t, nil, growth); e.Detector != DetectorDivergence || e.State != protocol.Warning {
		t.Fatalf("unwatched exponential growth: %+v, want a divergence Warning first", e)
	}
	for _, w := range []string{"N < 1e20", "N <= 1e20", "N in [0, 1e20]"} {
		if got := feed(newMonitor(t, &Config{Watch: []string{w}}), growth); got != nil {
			t.Errorf("--watch %q: verdicts %v, want none", w, got)
		}
	}
	// The bound still holds: past it the constraint stops the run.
	over := seriesObs("N", 0.05, geometric(100, 2, 70))
	if e := firstAlarm(t, &Config{Watch: []string{"N < 1e20"}}, over); e.Detector != DetectorConstraint {
		t.Errorf("past the bound: %+v", e)
	}
	// A lower bound says nothing about growth.
	if e := firstAlarm(t, &Config{Watch: []string{"N > 0"}}, growth); e.Detector != DetectorDivergence {
		t.Errorf("--watch 'N > 0': %+v", e)
	}
}

func TestIntegratorCrawl(t *testing.T) {
	// An explicit integrator on a problem that turns stiff at t = 1: its step falls from 1e-2
	// to 1e-9 and t crawls — `t = 1 step = 1e-9 nfev = 500000`, printed 20 times a second.
	var crawl []*protocol.Observation
	tt, sec := 0.0, 0.0
	for i := range 200 {
		h := 1e-2
		if i >= 50 {
			h = 1e-9
		}
		tt += 100 * h
		sec += 0.05
		crawl = append(crawl, stepSample(sec, "step", h, tt))
	}
	e := firstAlarm(t, nil, crawl)
	if e.State != protocol.Error || e.Detector != DetectorStagnation {
		t.Fatalf("crawl: %+v", e)
	}
	if stopped := float64(e.At) * 0.05; stopped < 50*0.05+0.9 || stopped > 50*0.05+1.5 {
		t.Errorf("stopped at %.2f s, want about 1 s (20 samples) after the collapse at 2.5 s", stopped)
	}
	// An implicit method crossing a sharp transient: the step collapses for a few dozen
	// steps, t moves on, the step grows back.
	var transient []*protocol.Observation
	tt, sec = 0, 0
	for i := range 300 {
		h := 1e-2
		if i >= 100 && i < 115 {
			h = 1e-7
		}
		tt += h
		sec += 0.05
		transient = append(transient, stepSample(sec, "h", h, tt))
	}
	if got := feed(newMonitor(t, nil), transient); got != nil {
		t.Errorf("transient: %v", got)
	}
	// A step that is small from the start (a fixed dt) did not collapse.
	var fixed []*protocol.Observation
	for i := range 300 {
		fixed = append(fixed, stepSample(float64(i)*0.05, "dt", 1e-9, 1+float64(i)*1e-7))
	}
	if got := feed(newMonitor(t, nil), fixed); got != nil {
		t.Errorf("fixed step: %v", got)
	}
}

func stepSample(sec float64, name string, h, t float64) *protocol.Observation {
	o := printed(sec, name, h)
	o.Sample.T = &t
	return o
}

func TestSilenceCadence(t *testing.T) {
	// A run that reports every 15 s is not silent after 10 s: once a 15 s gap has ended,
	// its limits stretch to three times that (45 s, Error 90 s).
	obs := []*protocol.Observation{event(0, protocol.EventStarted), stdout(0, "step 0")}
	for s := 0.5; s <= 125; s += 0.5 {
		obs = append(obs, resource(s, s, 100<<20, 0))
		if s <= 30 && math.Mod(s, 15) == 0 {
			obs = append(obs, stdout(s, "step "+num(s)))
		}
	}
	got := feed(newMonitor(t, nil), obs)
	var at []float64
	for _, e := range got {
		at = append(at, obs[e.At].Time.Sub(t0).Seconds())
	}
	// The first gap comes before any cadence is known: the default 10 s applies to it.
	if diff := cmp.Diff([]float64{10, 15, 30 + 45, 30 + 90}, at); diff != "" || len(got) != 4 || got[2].State != protocol.Warning || got[3].State != protocol.Error {
		t.Errorf("verdicts %v at %v s, want a Warning at 10 s, Normal at 15 s, a Warning at 75 s and an Error at 120 s (-want +got):\n%s", got, at, diff)
	}
	var th Thresholds
	if err := th.Set("cadence", "1"); err != nil || th.withDefaults(Expectation{}).Cadence != 1 {
		t.Errorf("cadence=1: %v", err)
	}
}

func TestThresholdSettings(t *testing.T) {
	th, err := ParseThresholds(map[string]string{"silence": "20s", "divergence_bound": "1e50", "scf_stall": "30", "divergence": "off"})
	if err != nil {
		t.Fatal(err)
	}
	want := Thresholds{Silence: 20 * time.Second, DivergenceBound: 1e50, ScfStall: 30, Off: []string{DetectorDivergence}}
	if diff := cmp.Diff(want, th); diff != "" {
		t.Errorf("thresholds (-want +got):\n%s", diff)
	}
	// divergence=off: perception stays on, the divergence detector is quiet.
	growth := seriesObs("N", 0.05, geometric(100, 10, 60))
	if got := feed(newMonitor(t, &Config{Thresholds: th}), growth); got != nil {
		t.Errorf("divergence off: %v", got)
	}
	nanRun := seriesObs("x", 0.1, []float64{1, math.NaN(), math.NaN()})
	if e := firstAlarm(t, &Config{Thresholds: th}, nanRun); e.Detector != DetectorNonFinite {
		t.Errorf("divergence off, NaN: %+v", e)
	}
	for settings, want := range map[string]string{
		"silence=abc":      `silence="abc": want a positive duration`,
		"frozen=-1":        `frozen="-1": want a positive whole number`,
		"colour=blue":      `unknown perception setting "colour"`,
		"constraint=off":   "constraint cannot be turned off",
		"nonfinite=maybe":  "a detector is on or off",
		"swing_growth=NaN": "want a positive number",
	} {
		k, v, _ := strings.Cut(settings, "=")
		if _, err := ParseThresholds(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", settings, err, want)
		}
	}
	if _, err := New(&Config{Thresholds: Thresholds{Off: []string{"telepathy"}}}); err == nil {
		t.Error("New accepted an unknown detector in Off")
	}
}

// TestHeaderlessTable: rows of bare numbers whose first column counts up (`print(it, err)`)
// are a table without a header, with columns col1, col2, …; two rows, or rows whose first
// column does not increase (a matrix), are not.
func TestHeaderlessTable(t *testing.T) {
	names := func(lines ...string) []string {
		m := newMonitor(t, nil)
		var out []string
		for i, l := range lines {
			m.Observe(stdout(float64(i)*0.1, l))
			for _, s := range m.Parsed() {
				out = append(out, s.Name+"="+num(s.Value))
			}
		}
		return out
	}
	got := names("   1   1.0000e+00  0.5", "   2   2.5000e-01  0.4", "   3   6.2500e-02  0.3", "   4   3.9063e-03  0.2")
	want := []string{"col1=3", "col2=0.0625", "col3=0.3", "col1=4", "col2=0.0039063", "col3=0.2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headerless rows (-want +got):\n%s", diff)
	}
	if got := names("1 2 3", "4 5 6"); got != nil {
		t.Errorf("two rows: %v, want no samples", got)
	}
	if got := names("  9  1  2", "  3  7  1", "  5  4  8", "  1  6  3"); got != nil {
		t.Errorf("a matrix: %v, want no samples", got)
	}
	if got := names("0.5,1.5", "1.0,1.4", "1.5,1.2", "2.0,1.1"); len(got) != 4 {
		t.Errorf("CSV rows without a header: %v, want two rows of two samples", got)
	}
	// A headerless residual column turning NaN is a fault.
	m := newMonitor(t, nil)
	for i, l := range []string{"1 0.5 1.2", "2 0.4 1.1", "3 0.3 1.0", "4 0.2 0.9", "5 nan 0.8", "6 nan 0.7"} {
		m.Observe(stdout(float64(i)*0.1, l))
	}
	if v := m.Verdict(); v.State != protocol.Error || v.Detector != DetectorNonFinite {
		t.Errorf("NaN in a headerless column: %s/%s (%s), want a non-finite Error", v.State, v.Detector, v.Message)
	}
}

// TestRowNames: the names of a bare table's columns come from the print statement that
// writes its rows.
func TestRowNames(t *testing.T) {
	tests := []struct {
		code string
		want [][]string
	}{
		{`print(it, res, du)`, [][]string{{"it", "res", "du"}}},
		{`print(it, res, flush=True)`, [][]string{{"it", "res"}}},
		{`    print(f"{it:5d} {res:14.6e} {du:14.6e}", flush=True)`, [][]string{{"it", "res", "du"}}},
		{`print("%5d %12.4e" % (k, state.energy))`, [][]string{{"k", "energy"}}},
		{`print("{} {:.3e}".format(k, norm(r)))`, [][]string{{"k", "norm(r)"}}},
		{`printf('%5d %14.6e %g\n', k, err, 2*h);`, [][]string{{"k", "err", ""}}},
		{`fprintf(fid, '%d, %e\n', iter, resid);`, [][]string{{"iter", "resid"}}},
		{`disp([k, res, norm(dx)])`, [][]string{{"k", "res", "norm(dx)"}}},
		{`disp([k res])`, [][]string{{"k", "res"}}},
		{`disp([1 2; 3 4])`, nil},
		// Labelled prints are not bare rows (their pairs are read as they are).
		{`print(f"it {it} res {res:.3e}")`, nil},
		{`printf('iter %d: res = %e\n', k, r);`, nil},
		{`print("done", x)`, nil},
		{`print(x)`, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, rowNames(tt.code)); diff != "" {
			t.Errorf("rowNames(%q) (-want +got):\n%s", tt.code, diff)
		}
	}
	// A bare table printed by `print(f"{it:5d} {res:14.6e}")` has a residual column, judged
	// as one: growing steadily by two decades over its best is a divergence.
	code := "for it in range(400):\n    print(f\"{it:5d} {res:14.6e} {du:14.6e}\", flush=True)\n"
	m := newMonitor(t, &Config{Code: code})
	res := 1.0
	var stopped int
	for i := 1; i <= 200 && stopped == 0; i++ {
		res *= 1.05
		m.Observe(stdout(float64(i)*0.03, fmt.Sprintf("%5d %14.6e %14.6e", i, res, res/100)))
		if m.Verdict().State == protocol.Error {
			stopped = i
		}
	}
	if stopped == 0 || stopped > 120 {
		t.Errorf("a residual growing x1.05 per row in a bare table: stopped at row %d, want by row 120", stopped)
	} else if v := m.Verdict(); v.Role == "" {
		t.Errorf("verdict %+v names no role", v)
	}
}
