package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

// ErrReader is wrapped by the plate reader's errors.
var ErrReader = errors.New("bench: plate reader")

// The plate reader's wavelength range in nm.
const (
	MinWavelength = 350.0
	MaxWavelength = 800.0
)

// DefaultCeiling is the absorbance at which the reader saturates unless told otherwise: 4.0 OD,
// the top of a typical microplate reader's measuring range.
const DefaultCeiling = 4.0

// ReaderOptions configure a plate reader.
type ReaderOptions struct {
	// Baseline is the absorbance every well reads on top of its contents' (the plate, the
	// blank); 0 is a blank-corrected reading.
	Baseline float64
	// Noise is the standard deviation of the Gaussian noise of every reading in OD; 0: none.
	Noise float64
	// Ceiling is the saturation: a reading at or above it reads Ceiling and is flagged
	// saturated. 0: DefaultCeiling.
	Ceiling float64
	// Seed seeds the noise: two readers with the same seed and options read alike.
	Seed uint64
}

// DefaultReaderOptions are the options of a nil *ReaderOptions: a noise of 3 mOD, of the
// order of a plate reader's precision, blank-corrected, saturating at DefaultCeiling.
var DefaultReaderOptions = ReaderOptions{Noise: 0.003, Ceiling: DefaultCeiling}

// Reader is an absorbance plate reader: it reads every well of a plate at the wavelengths it
// is asked for, from the Beer–Lambert law A = Σ ε_i(λ)·c_i·l over the well's species, with l
// the height of the liquid (a microplate is read vertically, through the liquid, from the top
// or the bottom alike), plus the baseline and the noise, clipped at the ceiling.
//
// A species without a spectrum in the reader's library reads as transparent, as a real reader
// shows nothing of a species with no band in its range: the Reading warns of it, naming the
// species and the wells. A Reader is safe for concurrent use.
type Reader struct {
	lib *Library
	o   ReaderOptions
	mu  sync.Mutex
	src *rand.PCG // rng's source, copied by a deck's Clone
	rng *rand.Rand
}

// NewReader makes a plate reader that knows the spectra of lib; nil o: DefaultReaderOptions.
func NewReader(lib *Library, o *ReaderOptions) (*Reader, error) {
	opt := DefaultReaderOptions
	if o != nil {
		opt = *o
	}
	if opt.Ceiling == 0 {
		opt.Ceiling = DefaultCeiling
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"baseline", opt.Baseline}, {"noise", opt.Noise}, {"ceiling", opt.Ceiling}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return nil, fmt.Errorf("%w: %s %g OD must be finite and not negative", ErrReader, f.name, f.v)
		}
	}
	if opt.Baseline >= opt.Ceiling {
		return nil, fmt.Errorf("%w: baseline %g OD is at or above the ceiling %g OD", ErrReader, opt.Baseline, opt.Ceiling)
	}
	r := &Reader{lib: lib, o: opt, src: rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15)}
	r.rng = rand.New(r.src)
	return r, nil
}

// Reading is what one read of a plate measured.
type Reading struct {
	Labware     string        `json:"labware"` // the labware's load name
	Wavelengths []float64     `json:"wavelengths_nm"`
	Wells       []WellReading `json:"wells"` // every well of the labware, in its ordering
	Warnings    []string      `json:"warnings,omitempty"`
}

// WellReading is one well's absorbance at each wavelength of the reading.
type WellReading struct {
	Well      string    `json:"well"`
	Path      float64   `json:"path_cm"` // the optical path, the liquid's height
	OD        []float64 `json:"od"`
	Saturated []bool    `json:"saturated"`
}

// Well returns the reading of the named well, nil if the plate has no such well.
func (r *Reading) Well(name string) *WellReading {
	for i := range r.Wells {
		if r.Wells[i].Well == name {
			return &r.Wells[i]
		}
	}
	return nil
}

// Wavelengths lists a scan's wavelengths from `from` to `to` nm inclusive, every step nm.
func Wavelengths(from, to, step float64) ([]float64, error) {
	if !(step > 0) || !(from <= to) || math.IsInf(to-from, 0) {
		return nil, fmt.Errorf("%w: scan from %g to %g nm every %g nm: need from ≤ to and a positive step", ErrReader, from, to, step)
	}
	n := int(math.Floor((to-from)/step+1e-9)) + 1
	out := make([]float64, n)
	for i := range out {
		out[i] = from + float64(i)*step
	}
	return out, nil
}

// Read reads every well of lw at each of the wavelengths, with the contents of the wells
// given by name (a well that wells does not name, or that holds no liquid, reads the
// baseline). A single-wavelength read is a list of one.
func (r *Reader) Read(ctx context.Context, lw *Labware, wells map[string]*Contents, wavelengths []float64) (*Reading, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := lw.Parameters.LoadName
	if len(wavelengths) == 0 {
		return nil, fmt.Errorf("%w: no wavelength to read", ErrReader)
	}
	for _, nm := range wavelengths {
		if !(nm >= MinWavelength && nm <= MaxWavelength) {
			return nil, fmt.Errorf("%w: wavelength %g nm is outside %g–%g nm", ErrReader, nm, MinWavelength, MaxWavelength)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(wells)) {
		if lw.Wells[id] == nil {
			return nil, fmt.Errorf("%w: labware %s has no well %s", ErrReader, name, id)
		}
	}
	// The species present, and the wells each is in, in plate order.
	where := map[string][]string{}
	for _, col := range lw.Ordering {
		for _, id := range col {
			c := wells[id]
			if c == nil {
				continue
			}
			switch capacity := lw.Wells[id].TotalLiquidVolume; {
			case math.IsNaN(c.Volume) || c.Volume < 0:
				return nil, fmt.Errorf("%w: labware %s, well %s: volume %g µL", ErrReader, name, id, c.Volume)
			case c.Volume > capacity:
				return nil, fmt.Errorf("%w: labware %s, well %s holds %g µL, over its %g µL capacity", ErrReader, name, id, c.Volume, capacity)
			}
			if c.Volume == 0 {
				continue
			}
			for _, sp := range c.Names() {
				switch n := c.Species[sp]; {
				case math.IsNaN(n) || n < 0:
					return nil, fmt.Errorf("%w: labware %s, well %s: species %q: %g µmol", ErrReader, name, id, sp, n)
				case n > 0:
					where[sp] = append(where[sp], id)
				}
			}
		}
	}
	// ε of every species present at every wavelength.
	eps := map[string][]float64{}
	var warnings []string
	for _, sp := range slices.Sorted(maps.Keys(where)) {
		s, ok := r.lib.Spectrum(sp)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("species %q has no spectrum: read as transparent (%s)", sp, wellList(where[sp])))
			continue
		}
		e := make([]float64, len(wavelengths))
		for k, nm := range wavelengths {
			v, ok := s.Epsilon(nm)
			if !ok {
				lo, hi := s.Range()
				return nil, fmt.Errorf("%w: the spectrum of %q covers %g–%g nm, not %g nm", ErrReader, sp, lo, hi, nm)
			}
			e[k] = v
		}
		eps[sp] = e
	}

	out := &Reading{Labware: name, Wavelengths: slices.Clone(wavelengths), Warnings: warnings}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, col := range lw.Ordering {
		for _, id := range col {
			wr := WellReading{Well: id, OD: make([]float64, len(wavelengths)), Saturated: make([]bool, len(wavelengths))}
			// The absorbing species' ε and concentration, in name order (the same sum every time).
			var absorbers []absorber
			if c := wells[id]; c != nil && c.Volume > 0 {
				wr.Path = c.Volume / lw.Wells[id].Area() / 10 // µL = mm³, over mm², in cm
				for _, sp := range c.Names() {
					if e, ok := eps[sp]; ok && c.Species[sp] != 0 {
						absorbers = append(absorbers, absorber{e, c.Species[sp] / c.Volume})
					}
				}
			}
			for k := range wavelengths {
				a := r.o.Baseline
				for _, ab := range absorbers {
					a += ab.eps[k] * ab.conc * wr.Path
				}
				if r.o.Noise > 0 {
					a += r.o.Noise * r.rng.NormFloat64()
				}
				if a >= r.o.Ceiling {
					a, wr.Saturated[k] = r.o.Ceiling, true
				}
				wr.OD[k] = a
			}
			out.Wells = append(out.Wells, wr)
		}
	}
	return out, nil
}

// absorber is one species of a well: its ε at each wavelength read, and its concentration (M).
type absorber struct {
	eps  []float64
	conc float64
}

// wellList names wells in an error or a warning: all of them up to eight.
func wellList(ids []string) string {
	if len(ids) == 1 {
		return "well " + ids[0]
	}
	if len(ids) <= 8 {
		return "wells " + strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%d wells: %s and %d more", len(ids), strings.Join(ids[:8], ", "), len(ids)-8)
}
