package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/labmate/labmate/lab/bench"
)

// insPlate is a 96-well flat-bottom plate with the geometry of Opentrons'
// corning_96_wellplate_360ul_flat: circular wells 6.86 mm across, 10.67 mm deep, 360 µL.
func insPlate(t testing.TB) *bench.Labware {
	t.Helper()
	wells := map[string]any{}
	var ordering [][]string
	for col := 1; col <= 12; col++ {
		var ids []string
		for row := range 8 {
			id := fmt.Sprintf("%c%d", 'A'+row, col)
			ids = append(ids, id)
			wells[id] = map[string]any{"depth": 10.67, "totalLiquidVolume": 360, "shape": "circular", "diameter": 6.86,
				"x": 14.38 + 9*float64(col-1), "y": 74.24 - 9*float64(row), "z": 3.55}
		}
		ordering = append(ordering, ids)
	}
	b, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "ordering": ordering, "wells": wells,
		"metadata":   map[string]any{"displayName": "Corning 96 Well Plate 360 µL Flat", "displayCategory": "wellPlate", "displayVolumeUnits": "µL"},
		"dimensions": map[string]any{"xDimension": 127.76, "yDimension": 85.47, "zDimension": 14.22},
		"parameters": map[string]any{"format": "96Standard", "isTiprack": false, "loadName": "corning_96_wellplate_360ul_flat"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lw, err := bench.ParseLabware(b)
	if err != nil {
		t.Fatal(err)
	}
	return lw
}

// insLibrary is the library of the embedded spectra.
var insLibrary = sync.OnceValues(func() (*bench.Library, error) { return bench.NewLibrary(bench.DefaultSpectra()...) })

func insReader(t testing.TB, o *bench.ReaderOptions) *bench.Reader {
	t.Helper()
	lib, err := insLibrary()
	if err != nil {
		t.Fatal(err)
	}
	r, err := bench.NewReader(lib, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func insEpsilon(t testing.TB, species string, nm float64) float64 {
	t.Helper()
	lib, err := insLibrary()
	if err != nil {
		t.Fatal(err)
	}
	s, ok := lib.Spectrum(species)
	if !ok {
		t.Fatalf("no spectrum of %s", species)
	}
	e, _ := s.Epsilon(nm)
	return e
}

// insPath is the optical path of vol µL in a well of the plate, in cm.
func insPath(lw *bench.Labware, vol float64) float64 { return vol / lw.Wells["A1"].Area() / 10 }

func TestAbsorbanceLinearInConcentration(t *testing.T) {
	lw := insPlate(t)
	r := insReader(t, &bench.ReaderOptions{Noise: 0.002, Seed: 1})
	const vol, nm = 200.0, 426.0
	l := insPath(lw, vol)
	eps := insEpsilon(t, "tartrazine", nm)
	// A two-fold dilution series from 0.5 mM down, in column 1 and 2: A from about 7.7 OD down.
	wells := map[string]*bench.Contents{}
	conc := map[string]float64{}
	c := 0.5e-3
	for _, id := range []string{"A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1", "A2", "B2", "C2", "D2"} {
		wells[id] = &bench.Contents{Volume: vol, Species: map[string]float64{"tartrazine": c * vol}} // M × µL = µmol
		conc[id] = c
		c /= 2
	}
	rd, err := r.Read(context.Background(), lw, wells, []float64{nm})
	if err != nil {
		t.Fatal(err)
	}
	var xs, ys []float64
	for id, c := range conc {
		w := rd.Well(id)
		truth := eps * c * l
		if truth >= bench.DefaultCeiling+0.01 {
			if !w.Saturated[0] || w.OD[0] != bench.DefaultCeiling {
				t.Errorf("%s: true A %.3f reads %.4f, saturated %v; want %g, saturated", id, truth, w.OD[0], w.Saturated[0], bench.DefaultCeiling)
			}
			continue
		}
		if truth < bench.DefaultCeiling-0.01 && w.Saturated[0] {
			t.Errorf("%s: true A %.3f flagged saturated", id, truth)
		}
		xs, ys = append(xs, c), append(ys, w.OD[0])
	}
	if len(xs) < 8 {
		t.Fatalf("only %d points below saturation", len(xs))
	}
	slope, intercept, r2 := linearFit(xs, ys)
	if r2 < 0.9999 || math.Abs(slope-eps*l) > 0.005*eps*l || math.Abs(intercept) > 0.005 {
		t.Errorf("fit A = %.1f·c %+.4f (r² %.6f); want slope ε·l = %.1f through 0, r² > 0.9999", slope, intercept, r2, eps*l)
	}
	if w := rd.Well("H12"); w.Path != 0 || math.Abs(w.OD[0]) > 0.01 || w.Saturated[0] {
		t.Errorf("an empty well reads %+v, want the baseline 0 within the noise", w)
	}
}

func linearFit(xs, ys []float64) (slope, intercept, r2 float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy, syy float64
	for i := range xs {
		sx, sy, sxx, sxy, syy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i], syy+ys[i]*ys[i]
	}
	slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	intercept = (sy - slope*sx) / n
	r := (n*sxy - sx*sy) / math.Sqrt((n*sxx-sx*sx)*(n*syy-sy*sy))
	return slope, intercept, r * r
}

func TestReaderNoiseIsSeededGaussian(t *testing.T) {
	lw := insPlate(t)
	opt := &bench.ReaderOptions{Baseline: 0.05, Noise: 0.01, Seed: 7}
	wl, _ := bench.Wavelengths(400, 700, 30) // 11 wavelengths: 1056 readings of empty wells
	read := func(o *bench.ReaderOptions) *bench.Reading {
		rd, err := insReader(t, o).Read(context.Background(), lw, nil, wl)
		if err != nil {
			t.Fatal(err)
		}
		return rd
	}
	a := read(opt)
	var sum, sq float64
	n := 0
	for _, w := range a.Wells {
		for _, v := range w.OD {
			sum, sq, n = sum+v, sq+v*v, n+1
		}
	}
	mean := sum / float64(n)
	sd := math.Sqrt((sq - float64(n)*mean*mean) / float64(n-1))
	if n != 96*11 || math.Abs(mean-0.05) > 3*0.01/math.Sqrt(float64(n)) || math.Abs(sd-0.01) > 0.1*0.01 {
		t.Errorf("%d readings of empty wells: mean %.5f, sd %.5f; want the baseline 0.05 and σ 0.01", n, mean, sd)
	}
	b := read(opt)
	other := *opt
	other.Seed = 8
	c := read(&other)
	if a.Wells[5].OD[3] != b.Wells[5].OD[3] || a.Wells[95].OD[10] != b.Wells[95].OD[10] {
		t.Error("the same seed read differently")
	}
	if a.Wells[5].OD[3] == c.Wells[5].OD[3] {
		t.Error("another seed read the same")
	}
	quiet := read(&bench.ReaderOptions{Baseline: 0.05})
	if quiet.Wells[0].OD[0] != 0.05 {
		t.Errorf("without noise an empty well reads %g, want the baseline 0.05", quiet.Wells[0].OD[0])
	}
}

var insDyes = []string{"tartrazine", "sunset yellow FCF", "allura red AC", "erythrosine", "brilliant blue FCF", "indigo carmine"}

// TestUnmixDyes reads mixtures of three dyes over 350–800 nm and unmixes them by least
// squares against all six dye spectra: the three come back at their concentrations and the
// other three near zero.
func TestUnmixDyes(t *testing.T) {
	lw := insPlate(t)
	r := insReader(t, &bench.ReaderOptions{Noise: 0.003, Seed: 3})
	wl, err := bench.Wavelengths(350, 800, 1)
	if err != nil {
		t.Fatal(err)
	}
	const vol = 250.0
	l := insPath(lw, vol)
	mixes := []map[string]float64{ // M
		{"tartrazine": 20e-6, "allura red AC": 15e-6, "brilliant blue FCF": 4e-6},
		{"sunset yellow FCF": 20e-6, "allura red AC": 20e-6, "erythrosine": 5e-6},
		{"indigo carmine": 30e-6, "brilliant blue FCF": 3e-6, "tartrazine": 10e-6},
	}
	wells := map[string]*bench.Contents{}
	for i, m := range mixes {
		c := &bench.Contents{Volume: vol, Species: map[string]float64{}}
		for sp, conc := range m {
			c.Species[sp] = conc * vol
		}
		wells[fmt.Sprintf("A%d", i+1)] = c
	}
	rd, err := r.Read(context.Background(), lw, wells, wl)
	if err != nil {
		t.Fatal(err)
	}
	design := mat.NewDense(len(wl), len(insDyes), nil)
	for j, d := range insDyes {
		for k, nm := range wl {
			design.Set(k, j, insEpsilon(t, d, nm)*l)
		}
	}
	for i, m := range mixes {
		var x mat.VecDense
		if err := x.SolveVec(design, mat.NewVecDense(len(wl), rd.Well(fmt.Sprintf("A%d", i+1)).OD)); err != nil {
			t.Fatal(err)
		}
		for j, d := range insDyes {
			got, want := x.AtVec(j), m[d]
			if want > 0 && math.Abs(got-want) > 0.03*want || want == 0 && math.Abs(got) > 0.3e-6 {
				t.Errorf("mixture %d: %s unmixed at %.3g M, want %.3g M", i+1, d, got, want)
			}
		}
	}
}

func TestReaderWarnsOfSpeciesWithoutSpectrum(t *testing.T) {
	lw := insPlate(t)
	r := insReader(t, &bench.ReaderOptions{})
	wells := map[string]*bench.Contents{
		"A1": {Volume: 100, Species: map[string]float64{"NaOH": 5, "tartrazine": 0.002}},
		"B1": {Volume: 100, Species: map[string]float64{"NaOH": 5}},
	}
	rd, err := r.Read(context.Background(), lw, wells, []float64{426})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Warnings) != 1 || rd.Warnings[0] != `species "NaOH" has no spectrum: read as transparent (wells A1, B1)` {
		t.Errorf("warnings %q", rd.Warnings)
	}
	want := insEpsilon(t, "tartrazine", 426) * 0.002 / 100 * insPath(lw, 100)
	if a := rd.Well("A1").OD[0]; math.Abs(a-want) > 1e-12 || rd.Well("B1").OD[0] != 0 {
		t.Errorf("A1 %g (want %g), B1 %g (want 0)", a, want, rd.Well("B1").OD[0])
	}
}

func TestReaderErrors(t *testing.T) {
	lw := insPlate(t)
	short, _ := bench.NewLibrary(&bench.Spectrum{Species: "mine", Points: [][2]float64{{400, 1}, {700, 2}}})
	tab, _ := bench.NewReader(short, nil)
	r := insReader(t, nil)
	ok := map[string]*bench.Contents{"A1": {Volume: 100}}
	for _, c := range []struct {
		name  string
		r     *bench.Reader
		wells map[string]*bench.Contents
		wl    []float64
		want  string
	}{
		{"wavelength", r, ok, []float64{500, 900}, "bench: plate reader: wavelength 900 nm is outside 350–800 nm"},
		{"no wavelength", r, ok, nil, "bench: plate reader: no wavelength to read"},
		{"unknown well", r, map[string]*bench.Contents{"Z9": {Volume: 10}, "A1": {}}, []float64{500}, "bench: plate reader: labware corning_96_wellplate_360ul_flat has no well Z9"},
		{"capacity", r, map[string]*bench.Contents{"B3": {Volume: 400}}, []float64{500}, "bench: plate reader: labware corning_96_wellplate_360ul_flat, well B3 holds 400 µL, over its 360 µL capacity"},
		{"volume", r, map[string]*bench.Contents{"B3": {Volume: -1}}, []float64{500}, "bench: plate reader: labware corning_96_wellplate_360ul_flat, well B3: volume -1 µL"},
		{"amount", r, map[string]*bench.Contents{"C4": {Volume: 10, Species: map[string]float64{"tartrazine": -0.5}}}, []float64{500}, `bench: plate reader: labware corning_96_wellplate_360ul_flat, well C4: species "tartrazine": -0.5 µmol`},
		{"spectrum range", tab, map[string]*bench.Contents{"A1": {Volume: 10, Species: map[string]float64{"mine": 1}}}, []float64{500, 380}, `bench: plate reader: the spectrum of "mine" covers 400–700 nm, not 380 nm`},
	} {
		_, err := c.r.Read(context.Background(), lw, c.wells, c.wl)
		if err == nil || err.Error() != c.want || !errors.Is(err, bench.ErrReader) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
	if _, err := bench.Wavelengths(800, 350, 1); err == nil || err.Error() != "bench: plate reader: scan from 800 to 350 nm every 1 nm: need from ≤ to and a positive step" {
		t.Errorf("scan: %v", err)
	}
	for _, c := range []struct {
		o    bench.ReaderOptions
		want string
	}{
		{bench.ReaderOptions{Noise: -1}, "bench: plate reader: noise -1 OD must be finite and not negative"},
		{bench.ReaderOptions{Baseline: 5}, "bench: plate reader: baseline 5 OD is at or above the ceiling 4 OD"},
	} {
		if _, err := bench.NewReader(short, &c.o); err == nil || err.Error() != c.want {
			t.Errorf("%+v:\n got %v\nwant %s", c.o, err, c.want)
		}
	}
}

func TestWavelengths(t *testing.T) {
	wl, err := bench.Wavelengths(350, 800, 1)
	if err != nil || len(wl) != 451 || wl[0] != 350 || wl[450] != 800 {
		t.Fatalf("350–800 every 1 nm: %d wavelengths from %v to %v, %v", len(wl), wl[0], wl[len(wl)-1], err)
	}
	if wl, _ := bench.Wavelengths(400, 401, 0.1); len(wl) != 11 || wl[10] != 401 {
		t.Errorf("400–401 every 0.1 nm: %v", wl)
	}
}

// BenchmarkScan96 is a full spectrum scan (350–800 nm every 1 nm) of a 96-well plate of
// three-dye mixtures.
func BenchmarkScan96(b *testing.B) {
	lw := insPlate(b)
	r := insReader(b, nil)
	wl, _ := bench.Wavelengths(350, 800, 1)
	wells := map[string]*bench.Contents{}
	i := 0
	for _, col := range lw.Ordering {
		for _, id := range col {
			wells[id] = &bench.Contents{Volume: 200, Species: map[string]float64{
				insDyes[i%6]: 0.002, insDyes[(i+2)%6]: 0.003, insDyes[(i+4)%6]: 0.001}}
			i++
		}
	}
	for b.Loop() {
		if _, err := r.Read(context.Background(), lw, wells, wl); err != nil {
			b.Fatal(err)
		}
	}
}
