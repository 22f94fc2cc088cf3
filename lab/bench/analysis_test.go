package bench_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/lab/bench"
)

func TestAnalyzePeaks(t *testing.T) {
	a, err := bench.NewAnalyzer(map[string]float64{"P": 2, "L": 0.5, "IS": 1}, &bench.AnalyzerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 0.3 µmol of product, 0.2 of the limiting reagent left (0.5 charged), 0.25 of the
	// standard, in 100 µL: 3, 2 and 2.5 mM.
	c := &bench.Contents{Volume: 100, Species: map[string]float64{"P": 0.3, "L": 0.2, "IS": 0.25, "MeCN": 1900, "gone": 0}}
	ch, err := a.Analyze(context.Background(), "B2", c)
	if err != nil {
		t.Fatal(err)
	}
	want := &bench.Chromatogram{Well: "B2", Peaks: []bench.Peak{
		{Species: "IS", Area: 2.5, ResponseFactor: 1}, {Species: "L", Area: 1, ResponseFactor: 0.5}, {Species: "P", Area: 6, ResponseFactor: 2}},
		Undetected: []string{"MeCN"}}
	if diff := cmp.Diff(want, ch, cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 1e-12 })); diff != "" {
		t.Errorf("chromatogram (-want +got):\n%s", diff)
	}
	vsStd, err := ch.YieldVsStandard("P", "IS", 0.25, 0.5)
	if err != nil || math.Abs(vsStd-60) > 1e-12 {
		t.Errorf("yield against the standard: %v, %v; want 60", vsStd, err)
	}
	vsLim, err := ch.YieldVsLimiting("P", "L")
	if err != nil || math.Abs(vsLim-60) > 1e-12 {
		t.Errorf("yield against the limiting reagent: %v, %v; want 60", vsLim, err)
	}
	empty, err := a.Analyze(context.Background(), "B3", &bench.Contents{Volume: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range empty.Peaks {
		if p.Area != 0 {
			t.Errorf("a blank shows a peak of %s: %g", p.Species, p.Area)
		}
	}
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || err.Error() != want || !errors.Is(err, bench.ErrAnalysis) {
			t.Errorf("%s:\n got %v\nwant %s", name, err, want)
		}
	}
	_, err = empty.YieldVsStandard("P", "IS", 0.25, 0.5)
	check("no standard", err, `bench: analysis: well B3: no peak of the internal standard "IS"`)
	_, err = empty.YieldVsLimiting("P", "L")
	check("no peaks", err, `bench: analysis: well B3: no peak of "P" or "L"`)
	_, err = ch.YieldVsStandard("Q", "IS", 0.25, 0.5)
	check("uncalibrated", err, `bench: analysis: well B2: the method is not calibrated for "Q"`)
	_, err = ch.YieldVsStandard("P", "IS", 0.25, 0)
	check("no charge", err, "bench: analysis: well B2: the standard's amount 0.25 µmol and the limiting reagent's 0 µmol must be positive")
	_, err = a.Analyze(context.Background(), "B4", &bench.Contents{})
	check("empty well", err, "bench: analysis: well B4 holds 0 µL: nothing to inject")
	_, err = bench.NewAnalyzer(map[string]float64{"P": 0}, nil)
	check("response factor", err, `bench: analysis: response factor 0 of "P" must be positive`)
	_, err = bench.NewAnalyzer(nil, nil)
	check("no method", err, "bench: analysis: the method is calibrated for no species")
}

func TestAnalysisNoise(t *testing.T) {
	const rsd = 0.01
	a, err := bench.NewAnalyzer(map[string]float64{"P": 1}, &bench.AnalyzerOptions{Noise: rsd, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	c := &bench.Contents{Volume: 100, Species: map[string]float64{"P": 0.1}} // 1 mM: area 1
	var sum, sq float64
	const n = 2000
	for range n {
		ch, err := a.Analyze(context.Background(), "A1", c)
		if err != nil {
			t.Fatal(err)
		}
		x := ch.Peaks[0].Area
		sum, sq = sum+x, sq+x*x
	}
	mean := sum / n
	sd := math.Sqrt((sq - n*mean*mean) / (n - 1))
	if math.Abs(mean-1) > 3*rsd/math.Sqrt(n) || math.Abs(sd-rsd) > 0.1*rsd {
		t.Errorf("%d injections: mean area %.5f, sd %.5f; want 1 and %g", n, mean, sd, rsd)
	}
}
