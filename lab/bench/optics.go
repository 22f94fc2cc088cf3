package bench

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
)

// ErrSpectrum is wrapped by the errors of a spectrum that cannot be used.
var ErrSpectrum = errors.New("bench: spectrum")

// Spectrum is a species' molar absorptivity ε(λ) in M⁻¹ cm⁻¹, in one of two forms: a band
// model (Bands, a sum of Gaussians in wavelength scaled so that ε(LambdaMax) = EpsilonMax, the
// published maximum) or a tabulated spectrum (Points, [nm, ε] pairs in increasing wavelength,
// linearly interpolated and unknown outside their range). spectra/README.md says where the
// embedded spectra come from.
type Spectrum struct {
	Species    string       `json:"species"` // the name the species has in Contents
	Label      string       `json:"label,omitempty"`
	Solvent    string       `json:"solvent,omitempty"`
	LambdaMax  float64      `json:"lambda_max_nm,omitempty"`
	EpsilonMax float64      `json:"epsilon_max,omitempty"`
	Bands      []Band       `json:"bands,omitempty"`
	Points     [][2]float64 `json:"points,omitempty"`
	scale      float64      // EpsilonMax over the bands' sum at LambdaMax
}

// Band is one Gaussian absorption band of a band model: its centre and full width at half
// maximum in nm, and its height relative to the model's other bands.
type Band struct {
	Center float64 `json:"center_nm"`
	FWHM   float64 `json:"fwhm_nm"`
	Height float64 `json:"height"`
}

// Epsilon is ε at wavelength nm in M⁻¹ cm⁻¹; ok is false outside a tabulated spectrum's range.
func (s *Spectrum) Epsilon(nm float64) (eps float64, ok bool) {
	if s.Bands != nil {
		return s.scale * s.bandSum(nm), true
	}
	p := s.Points
	if nm < p[0][0] || nm > p[len(p)-1][0] {
		return 0, false
	}
	i := sort.Search(len(p), func(i int) bool { return p[i][0] >= nm })
	if p[i][0] == nm {
		return p[i][1], true
	}
	a, b := p[i-1], p[i]
	return a[1] + (b[1]-a[1])*(nm-a[0])/(b[0]-a[0]), true
}

// Range is the wavelength range over which Epsilon is known: all of it for a band model.
func (s *Spectrum) Range() (lo, hi float64) {
	if s.Bands != nil {
		return 0, math.Inf(1)
	}
	return s.Points[0][0], s.Points[len(s.Points)-1][0]
}

func (s *Spectrum) bandSum(nm float64) float64 {
	var sum float64
	for _, b := range s.Bands {
		d := (nm - b.Center) / b.FWHM
		sum += b.Height * math.Exp(-4*math.Ln2*d*d)
	}
	return sum
}

// check validates s (from is the file or the caller, for the error) and sets its scale.
func (s *Spectrum) check(from string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %s: %s", ErrSpectrum, from, fmt.Sprintf(format, a...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case s.Species == "":
		return bad("no species")
	case (s.Bands == nil) == (s.Points == nil):
		return bad("species %q: give either bands or points", s.Species)
	}
	if s.Points != nil {
		if len(s.Points) < 2 {
			return bad("species %q: %d points; a tabulated spectrum needs at least 2", s.Species, len(s.Points))
		}
		for i, p := range s.Points {
			switch {
			case !finite(p[0]) || p[0] <= 0 || (i > 0 && p[0] <= s.Points[i-1][0]):
				return bad("species %q: points[%d]: wavelength %g nm (wavelengths must be positive and increasing)", s.Species, i, p[0])
			case !finite(p[1]) || p[1] < 0:
				return bad("species %q: points[%d]: epsilon %g must be finite and not negative", s.Species, i, p[1])
			}
		}
		return nil
	}
	if !finite(s.LambdaMax) || s.LambdaMax <= 0 || !finite(s.EpsilonMax) || s.EpsilonMax <= 0 {
		return bad("species %q: lambda_max_nm %g and epsilon_max %g must be positive", s.Species, s.LambdaMax, s.EpsilonMax)
	}
	for i, b := range s.Bands {
		if !finite(b.Center) || b.Center <= 0 || !finite(b.FWHM) || b.FWHM <= 0 || !finite(b.Height) || b.Height <= 0 {
			return bad("species %q: bands[%d]: center_nm %g, fwhm_nm %g and height %g must be positive", s.Species, i, b.Center, b.FWHM, b.Height)
		}
	}
	at := s.bandSum(s.LambdaMax)
	if at < 1e-6 {
		return bad("species %q: the bands do not reach lambda_max_nm %g", s.Species, s.LambdaMax)
	}
	s.scale = s.EpsilonMax / at
	return nil
}

// ParseSpectrum decodes and checks a spectrum in JSON (the format of spectra/*.json); file
// names it in errors.
func ParseSpectrum(b []byte, file string) (*Spectrum, error) {
	s := new(Spectrum)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrSpectrum, file, err)
	}
	if err := s.check(file); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadSpectrum reads a user's spectrum from a JSON file.
func ReadSpectrum(file string) (*Spectrum, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpectrum, err)
	}
	return ParseSpectrum(b, filepath.Base(file))
}

//go:embed spectra/*.json
var spectraFS embed.FS

// DefaultSpectra returns the embedded spectra: six food dyes and the Suzuki screen's product.
func DefaultSpectra() []*Spectrum {
	names, err := spectraFS.ReadDir("spectra")
	if err != nil {
		panic(err) // the embedded directory exists
	}
	var out []*Spectrum
	for _, e := range names {
		b, err := spectraFS.ReadFile(path.Join("spectra", e.Name()))
		if err != nil {
			panic(err)
		}
		s, err := ParseSpectrum(b, e.Name())
		if err != nil {
			panic(err) // the tests parse every embedded spectrum
		}
		out = append(out, s)
	}
	return out
}

// Library is a set of spectra by species; it does not change once made.
type Library struct {
	spectra map[string]*Spectrum
}

// NewLibrary makes a library of copies of spectra, checking each; two spectra of one species
// are an error.
func NewLibrary(spectra ...*Spectrum) (*Library, error) {
	l := &Library{spectra: make(map[string]*Spectrum, len(spectra))}
	for i, s := range spectra {
		c := *s
		c.Bands, c.Points = slices.Clone(s.Bands), slices.Clone(s.Points)
		if err := c.check(fmt.Sprintf("library entry %d", i)); err != nil {
			return nil, err
		}
		if _, dup := l.spectra[c.Species]; dup {
			return nil, fmt.Errorf("%w library: two spectra for species %q", ErrSpectrum, c.Species)
		}
		l.spectra[c.Species] = &c
	}
	return l, nil
}

// Spectrum returns the spectrum of species, the library's own: do not change it.
func (l *Library) Spectrum(species string) (*Spectrum, bool) {
	s, ok := l.spectra[species]
	return s, ok
}

// Species lists the library's species in name order.
func (l *Library) Species() []string {
	out := make([]string, 0, len(l.spectra))
	for k := range l.spectra {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
