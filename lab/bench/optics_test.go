package bench_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/labmate/labmate/lab/bench"
)

// The published values the embedded dye spectra stand on (spectra/README.md): λmax, the
// specific absorbance E(1 %, 1 cm) and the molar mass of the sodium salt; ε = E·M/10.
var publishedDyes = []struct {
	species   string
	lambdaMax float64
	e1pct     float64
	molarMass float64
}{
	{"tartrazine", 426, 530, 534.36},
	{"sunset yellow FCF", 480, 555, 452.37},
	{"allura red AC", 504, 540, 496.42},
	{"erythrosine", 526, 1100, 879.92},
	{"brilliant blue FCF", 630, 1630, 792.85},
	{"indigo carmine", 610, 480, 466.36},
}

func TestDefaultSpectraMatchPublishedValues(t *testing.T) {
	lib, err := bench.NewLibrary(bench.DefaultSpectra()...)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(lib.Species()); n != 7 {
		t.Fatalf("%d embedded spectra (%v), want the six dyes and the product", n, lib.Species())
	}
	for _, d := range publishedDyes {
		s, ok := lib.Spectrum(d.species)
		if !ok {
			t.Errorf("no spectrum of %s", d.species)
			continue
		}
		if want := math.Round(d.e1pct * d.molarMass / 10); s.EpsilonMax != want || s.LambdaMax != d.lambdaMax {
			t.Errorf("%s: file says ε %g at %g nm; the sources give %g at %g nm", d.species, s.EpsilonMax, s.LambdaMax, want, d.lambdaMax)
		}
		if e, _ := s.Epsilon(d.lambdaMax); math.Abs(e-s.EpsilonMax) > 1e-9*s.EpsilonMax {
			t.Errorf("%s: ε(%g nm) = %g, want %g", d.species, d.lambdaMax, e, s.EpsilonMax)
		}
		// The model's maximum over the reader's range is at the published λmax.
		peak, top := 0.0, 0.0
		for nm := bench.MinWavelength; nm <= bench.MaxWavelength; nm += 0.1 {
			if e, _ := s.Epsilon(nm); e > top {
				peak, top = nm, e
			}
		}
		if math.Abs(peak-d.lambdaMax) > 1 || top > 1.01*s.EpsilonMax {
			t.Errorf("%s: the model peaks at %.1f nm (ε %.0f), want %g nm (ε %g)", d.species, peak, top, d.lambdaMax, s.EpsilonMax)
		}
	}
	// The Suzuki product: a UV band, colourless in the visible.
	const product = "C1=C(C2=C(C)C=CC3N(C4OCCCC4)N=CC2=3)C=CC2=NC=CC=C12"
	s, ok := lib.Spectrum(product)
	if !ok {
		t.Fatal("no spectrum of the Suzuki product")
	}
	if e, _ := s.Epsilon(350); e < 0.5*s.EpsilonMax {
		t.Errorf("product: ε(350 nm) = %g, want its UV band to show at the reader's edge", e)
	}
	for nm := 420.0; nm <= bench.MaxWavelength; nm++ {
		if e, _ := s.Epsilon(nm); e > 1e-3*s.EpsilonMax {
			t.Fatalf("product: ε(%g nm) = %g: not colourless in the visible", nm, e)
		}
	}
}

func TestTabulatedSpectrum(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(file, []byte(`{"species": "mine", "points": [[400, 100], [500, 300], [600, 0]]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := bench.ReadSpectrum(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		nm, eps float64
		ok      bool
	}{{400, 100, true}, {450, 200, true}, {500, 300, true}, {575, 75, true}, {600, 0, true}, {399, 0, false}, {601, 0, false}} {
		if e, ok := s.Epsilon(c.nm); ok != c.ok || math.Abs(e-c.eps) > 1e-9 {
			t.Errorf("ε(%g) = %g, %v; want %g, %v", c.nm, e, ok, c.eps, c.ok)
		}
	}
	if lo, hi := s.Range(); lo != 400 || hi != 600 {
		t.Errorf("range %g–%g, want 400–600", lo, hi)
	}
}

func TestSpectrumErrors(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"points": [[400, 1], [500, 2]]}`, "bench: spectrum x.json: no species"},
		{`{"species": "a"}`, `bench: spectrum x.json: species "a": give either bands or points`},
		{`{"species": "a", "points": [[400, 1]]}`, `bench: spectrum x.json: species "a": 1 points; a tabulated spectrum needs at least 2`},
		{`{"species": "a", "points": [[400, 1], [400, 2]]}`, `bench: spectrum x.json: species "a": points[1]: wavelength 400 nm (wavelengths must be positive and increasing)`},
		{`{"species": "a", "points": [[400, 1], [500, -2]]}`, `bench: spectrum x.json: species "a": points[1]: epsilon -2 must be finite and not negative`},
		{`{"species": "a", "bands": [{"center_nm": 500, "fwhm_nm": 50, "height": 1}]}`, `bench: spectrum x.json: species "a": lambda_max_nm 0 and epsilon_max 0 must be positive`},
		{`{"species": "a", "lambda_max_nm": 500, "epsilon_max": 1000, "bands": [{"center_nm": 500, "fwhm_nm": -50, "height": 1}]}`, `bench: spectrum x.json: species "a": bands[0]: center_nm 500, fwhm_nm -50 and height 1 must be positive`},
		{`{"species": "a", "lambda_max_nm": 800, "epsilon_max": 1000, "bands": [{"center_nm": 400, "fwhm_nm": 20, "height": 1}]}`, `bench: spectrum x.json: species "a": the bands do not reach lambda_max_nm 800`},
		{`{"species": 3}`, `bench: spectrum x.json: json: cannot unmarshal number into Go struct field Spectrum.species of type string`},
	} {
		_, err := bench.ParseSpectrum([]byte(c.json), "x.json")
		if err == nil || err.Error() != c.want || !errors.Is(err, bench.ErrSpectrum) {
			t.Errorf("%s:\n got %v\nwant %s", c.json, err, c.want)
		}
	}
	dup := bench.DefaultSpectra()
	if _, err := bench.NewLibrary(append(dup, dup[0])...); err == nil || err.Error() != `bench: spectrum library: two spectra for species "`+dup[0].Species+`"` {
		t.Errorf("duplicate species: %v", err)
	}
}
