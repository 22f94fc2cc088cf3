package perception

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
)

// healthyStream is a realistic healthy operation as a kernel streams it: a simulation printing
// `t=… x=… v=… energy=…` lines (each also parsed into three printed samples), logging x and
// energy with the helper, a progress line on stderr now and then, and a resource sample every
// 100 observations. Nothing in it is anomalous, so the monitor's steady path is what runs.
func healthyStream(n int) []*protocol.Observation {
	obs := make([]*protocol.Observation, 0, n)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := 0; len(obs) < n; i++ {
		at := start.Add(time.Duration(i) * 10 * time.Millisecond)
		tt := float64(i) * 0.01
		x := math.Cos(3*tt) * (1 + 0.2*math.Sin(0.01*tt))
		v := -3 * math.Sin(3*tt)
		e := 0.5*v*v + 4.5*x*x
		line := fmt.Sprintf("t=%.2f x=%+.6f v=%+.6f energy=%.6e", tt, x, v, e)
		obs = append(obs, &protocol.Observation{Kind: protocol.ObsStdout, Time: at, Line: line})
		for _, s := range []struct {
			name string
			v    float64
		}{{"x", x}, {"v", v}, {"energy", e}} {
			obs = append(obs, &protocol.Observation{Kind: protocol.ObsTelemetry, Time: at,
				Sample: &protocol.Sample{Name: s.name, Value: s.v, T: &tt, Source: protocol.FromStdout}})
		}
		obs = append(obs,
			&protocol.Observation{Kind: protocol.ObsTelemetry, Time: at, Sample: &protocol.Sample{Name: "x", Value: x, T: &tt, Source: protocol.FromHelper}},
			&protocol.Observation{Kind: protocol.ObsTelemetry, Time: at, Sample: &protocol.Sample{Name: "energy", Value: e, T: &tt, Source: protocol.FromHelper}},
		)
		if i%20 == 0 {
			obs = append(obs, &protocol.Observation{Kind: protocol.ObsStderr, Time: at, Line: fmt.Sprintf("progress: step %d of 100000", i)})
		}
		if i%17 == 0 {
			obs = append(obs, &protocol.Observation{Kind: protocol.ObsResource, Time: at,
				Resource: &protocol.Resource{CPUSeconds: tt, RSSBytes: 200 << 20, WallSeconds: tt, OutputBytes: int64(i * 60), MemoryLimit: 4 << 30, OutputLimit: 64 << 20}})
		}
	}
	return obs[:n]
}

// telemetryStream is the steady path of the numeric detectors: helper samples of a few
// existing series (a damped oscillator's state, a vector, a residual), nothing else.
func telemetryStream(n int) []*protocol.Observation {
	obs := make([]*protocol.Observation, 0, n)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := 0; len(obs) < n; i++ {
		at := start.Add(time.Duration(i) * time.Millisecond)
		tt := float64(i) * 0.001
		x := math.Exp(-0.01*tt) * math.Cos(5*tt)
		obs = append(obs,
			&protocol.Observation{Kind: protocol.ObsTelemetry, Time: at, Sample: &protocol.Sample{Name: "x", Value: x, Source: protocol.FromHelper}},
			&protocol.Observation{Kind: protocol.ObsTelemetry, Time: at, Sample: &protocol.Sample{Name: "state", Value: x, Values: []float64{x, -x / 2, x * x}, Source: protocol.FromHelper}},
			&protocol.Observation{Kind: protocol.ObsTelemetry, Time: at, Sample: &protocol.Sample{Name: "residual", Value: 1 / (1 + tt), Source: protocol.FromHelper}},
		)
	}
	return obs[:n]
}

// roleStream is the steady path of the role rules: series whose names give them roles — a
// residual `||F||` converging noisily, a conserved `dE/E0` oscillating within its bound, a
// `loss`, a log-likelihood `logL` and a probability — under a code that names a symplectic
// integrator, as printed samples.
func roleStream(n int) []*protocol.Observation {
	obs := make([]*protocol.Observation, 0, n)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := 0; len(obs) < n; i++ {
		at := start.Add(time.Duration(i) * time.Millisecond)
		x := float64(i)
		for _, s := range []struct {
			name string
			v    float64
		}{
			{"||F||", math.Exp(-x/20) * (1 + 0.3*math.Sin(x))},
			{"dE/E0", 1e-4 * math.Sin(x/10)},
			{"loss", 0.3 + math.Exp(-x/500) + 0.05*math.Sin(x/3)},
			{"logL", -1000 + 10*math.Sin(x/7)},
			{"acceptance", 0.3 + 0.1*math.Sin(x/13)},
		} {
			obs = append(obs, &protocol.Observation{Kind: protocol.ObsTelemetry, Time: at, Sample: &protocol.Sample{Name: s.name, Value: s.v, Source: protocol.FromStdout}})
		}
	}
	return obs[:n]
}

// linesOnly keeps the stdout and stderr lines of obs.
func linesOnly(obs []*protocol.Observation) []*protocol.Observation {
	var out []*protocol.Observation
	for _, o := range obs {
		if o.Kind == protocol.ObsStdout || o.Kind == protocol.ObsStderr {
			out = append(out, o)
		}
	}
	return out
}

// warmMonitor is a monitor that has seen the stream once, so every series exists; it fails
// the benchmark if the stream (healthy by construction) raised anything.
func warmMonitor(tb testing.TB, cfg *Config, obs []*protocol.Observation) *Monitor {
	tb.Helper()
	m := newMonitor(tb, cfg)
	for _, o := range obs {
		m.Observe(o)
	}
	if v := m.Verdict(); v.State != protocol.Normal {
		tb.Fatalf("the healthy stream raised %+v", v)
	}
	return m
}

// BenchmarkMonitor is the cost of one observation through the whole monitor: on the mixed
// stream of a healthy run, on telemetry alone (the numeric detectors' steady path) and on
// output lines alone (language patterns and the non-finite scan).
func BenchmarkMonitor(b *testing.B) {
	cfg := &Config{Watch: []string{"finite(x)", "energy < 100", "residual decreasing"}}
	for _, bm := range []struct {
		name string
		obs  []*protocol.Observation
	}{
		{"mixed", healthyStream(1 << 14)},
		{"telemetry", telemetryStream(1 << 14)},
		{"lines", linesOnly(healthyStream(1 << 15))},
		{"roles", roleStream(1 << 14)},
	} {
		b.Run(bm.name, func(b *testing.B) {
			m := warmMonitor(b, cfg, bm.obs)
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				m.Observe(bm.obs[i%len(bm.obs)])
				i++
			}
			b.StopTimer()
			if v := m.Verdict(); v.State != protocol.Normal {
				b.Fatalf("the healthy stream raised %+v", v)
			}
		})
	}
}

// TestSteadyPathAllocations: observations of existing series, and ordinary lines, allocate
// nothing.
func TestSteadyPathAllocations(t *testing.T) {
	cfg := &Config{Watch: []string{"finite(x)", "energy < 100", "residual decreasing"}}
	for name, obs := range map[string][]*protocol.Observation{
		"telemetry": telemetryStream(3000),
		"mixed":     healthyStream(3000),
		"roles":     roleStream(3000),
	} {
		m := warmMonitor(t, cfg, obs)
		i := 0
		allocs := testing.AllocsPerRun(len(obs), func() {
			m.Observe(obs[i%len(obs)])
			i++
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per observation, want 0", name, allocs)
		}
		if v := m.Verdict(); v.State != protocol.Normal {
			t.Errorf("%s: the healthy stream raised %+v", name, v)
		}
	}
}

// profileStreams are real outputs (testdata/profiles) as stdout lines, with the profile
// that reads them: the steady path of the profile parsers.
func profileStreams(tb testing.TB) []struct {
	name string
	cfg  *Config
	obs  []*protocol.Observation
} {
	tb.Helper()
	load := func(file string) []*protocol.Observation {
		b, err := os.ReadFile("testdata/profiles/" + file)
		if err != nil {
			tb.Fatal(err)
		}
		var obs []*protocol.Observation
		for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			obs = append(obs, stdout(float64(i)*0.01, l))
		}
		return obs
	}
	var csv []*protocol.Observation
	csv = append(csv, stdout(0, "epoch,loss,accuracy,lr"))
	for i := 1; i < 2000; i++ {
		x := float64(i)
		csv = append(csv, stdout(x*0.01, fmt.Sprintf("%d,%.6f,%.4f,%.2e", i, 0.3+0.1*math.Sin(x/7), 0.9+0.05*math.Cos(x/5), 1e-3*(1+0.5*math.Sin(x/11)))))
	}
	var thermo []*protocol.Observation
	for _, o := range load("lammps_nve_multi.out") {
		if strings.HasPrefix(strings.TrimSpace(o.Line), "2") || strings.HasPrefix(o.Line, "Step") {
			thermo = append(thermo, o)
		}
	}
	nvt := []*protocol.Observation{stdout(0, "Step Temp E_pair E_mol TotEng Press")}
	for i := 1; i < 2000; i++ {
		x := float64(i)
		nvt = append(nvt, stdout(x*0.01, fmt.Sprintf("%d %.4f -906.2 0 %.4f %.3f", i*100, 300*(1+0.1*math.Sin(x/3)), -896.3+0.01*math.Sin(x/5), 2000*math.Sin(x/2))))
	}
	// the formats of point 3 of issue 32: a logging prefix on stderr, Fortran's D exponent, a
	// unit in brackets and one glued to the number, a chi2 and a residual
	var logLines []*protocol.Observation
	for i := 1; i < 2000; i++ {
		x := float64(i)
		res := strings.Replace(fmt.Sprintf("%.4E", math.Exp(-x/200)), "E", "D", 1)
		line := fmt.Sprintf("2026-12-05 10:%02d:%02d,%03d INFO it=%d rnorm=%s chi2: %.4f T = %.1fK E [eV] = %.6f", i/3600, i/60%60, i%1000, i, res,
			12+math.Sin(x/3), 300+2*math.Sin(x/7), -12.5+0.01*math.Sin(x/5))
		o := stdout(x*0.01, line)
		if i%2 == 0 {
			o.Kind = protocol.ObsStderr
		}
		logLines = append(logLines, o)
	}
	return []struct {
		name string
		cfg  *Config
		obs  []*protocol.Observation
	}{
		{"log-lines", nil, logLines},
		{"lammps-nvt-rows", &Config{Profile: ProfileLAMMPS, Code: "units metal\ntimestep 0.001\nfix 1 all nvt temp 300 300 0.1\nrun 200000"}, nvt},
		{"qe", &Config{Profile: ProfileQE}, load("qe_si_scf.out")},
		{"lammps", &Config{Profile: ProfileLAMMPS, Code: "fix 1 all nve"}, load("lammps_nve_multi.out")},
		{"lammps-thermo-rows", &Config{Profile: ProfileLAMMPS, Code: "fix 1 all nve"}, thermo},
		{"csv-rows", nil, csv},
	}
}

// BenchmarkProfiles is the cost of one printed line through a monitor with a software
// profile: the profile's parser (tables, QE progress lines, LAMMPS thermo rows and its
// rules), the samples it emits through the numeric detectors, and the language and
// non-finite scans.
func BenchmarkProfiles(b *testing.B) {
	for _, bm := range profileStreams(b) {
		b.Run(bm.name, func(b *testing.B) {
			m := warmMonitor(b, bm.cfg, bm.obs)
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				m.Observe(bm.obs[i%len(bm.obs)])
				i++
			}
			b.StopTimer()
			if v := m.Verdict(); v.State != protocol.Normal {
				b.Fatalf("the healthy stream raised %+v", v)
			}
		})
	}
}

// TestProfileAllocations: reading a profile's lines of series that exist allocates nothing,
// and costs well under the 5 µs per line budget.
func TestProfileAllocations(t *testing.T) {
	for _, bm := range profileStreams(t) {
		m := warmMonitor(t, bm.cfg, bm.obs)
		i := 0
		allocs := testing.AllocsPerRun(len(bm.obs), func() {
			m.Observe(bm.obs[i%len(bm.obs)])
			i++
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per line, want 0", bm.name, allocs)
		}
		if v := m.Verdict(); v.State != protocol.Normal {
			t.Errorf("%s: the healthy stream raised %+v", bm.name, v)
		}
	}
}
