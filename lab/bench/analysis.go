package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// ErrAnalysis is wrapped by the analysis instrument's errors.
var ErrAnalysis = errors.New("bench: analysis")

// AnalyzerOptions configure an analysis instrument.
type AnalyzerOptions struct {
	// Noise is the relative standard deviation of a peak's area (injection and integration);
	// 0: none.
	Noise float64
	// Seed seeds the noise.
	Seed uint64
}

// DefaultAnalyzerOptions are the options of a nil *AnalyzerOptions: a peak-area precision of
// 0.5 % RSD, of the order of an HPLC's injection repeatability.
var DefaultAnalyzerOptions = AnalyzerOptions{Noise: 0.005}

// Analyzer is an HPLC- or GC-style analysis twin with a calibrated method: it injects a
// sample of a well and reports a peak for each analyte of the method, of area
// ResponseFactor × concentration (mM) × (1 + noise). The chemist's yield comes from the
// peaks (Chromatogram.YieldVsStandard, YieldVsLimiting). An Analyzer is safe for concurrent
// use.
type Analyzer struct {
	rf       map[string]float64
	analytes []string
	o        AnalyzerOptions
	mu       sync.Mutex
	src      *rand.PCG // rng's source, copied by a deck's Clone
	rng      *rand.Rand
}

// NewAnalyzer makes an analysis instrument whose method is calibrated for the species of
// responseFactors (peak area per mM of each); nil o: DefaultAnalyzerOptions.
func NewAnalyzer(responseFactors map[string]float64, o *AnalyzerOptions) (*Analyzer, error) {
	opt := DefaultAnalyzerOptions
	if o != nil {
		opt = *o
	}
	if math.IsNaN(opt.Noise) || math.IsInf(opt.Noise, 0) || opt.Noise < 0 {
		return nil, fmt.Errorf("%w: noise %g must be finite and not negative", ErrAnalysis, opt.Noise)
	}
	if len(responseFactors) == 0 {
		return nil, fmt.Errorf("%w: the method is calibrated for no species", ErrAnalysis)
	}
	a := &Analyzer{rf: maps.Clone(responseFactors), analytes: slices.Sorted(maps.Keys(responseFactors)), o: opt,
		src: rand.NewPCG(opt.Seed, 0xbf58476d1ce4e5b9)}
	a.rng = rand.New(a.src)
	for _, sp := range a.analytes {
		if f := a.rf[sp]; !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: response factor %g of %q must be positive", ErrAnalysis, f, sp)
		}
	}
	return a, nil
}

// Chromatogram is the result of one analysis.
type Chromatogram struct {
	Well string `json:"well"`
	// Peaks has one peak per analyte of the method, in name order; an analyte the sample
	// lacks has area 0.
	Peaks []Peak `json:"peaks"`
	// Undetected are the species of the sample the method is not calibrated for.
	Undetected []string `json:"undetected,omitempty"`
}

// Peak is one analyte's peak and the method's response factor for it.
type Peak struct {
	Species        string  `json:"species"`
	Area           float64 `json:"area"`
	ResponseFactor float64 `json:"response_factor"` // area per mM
}

// Analyze injects a sample of the contents c of the named well.
func (a *Analyzer) Analyze(ctx context.Context, well string, c *Contents) (*Chromatogram, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !(c.Volume > 0) {
		return nil, fmt.Errorf("%w: well %s holds %g µL: nothing to inject", ErrAnalysis, well, c.Volume)
	}
	ch := &Chromatogram{Well: well, Peaks: make([]Peak, len(a.analytes))}
	for _, sp := range c.Names() {
		if _, ok := a.rf[sp]; !ok && c.Species[sp] > 0 {
			ch.Undetected = append(ch.Undetected, sp)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, sp := range a.analytes {
		area := a.rf[sp] * c.Concentration(sp) * 1000 // M to mM
		if area > 0 && a.o.Noise > 0 {
			area = max(0, area*(1+a.o.Noise*a.rng.NormFloat64()))
		}
		ch.Peaks[i] = Peak{Species: sp, Area: area, ResponseFactor: a.rf[sp]}
	}
	return ch, nil
}

// Peak returns the peak of species, false if the method is not calibrated for it.
func (ch *Chromatogram) Peak(species string) (Peak, bool) {
	for _, p := range ch.Peaks {
		if p.Species == species {
			return p, true
		}
	}
	return Peak{}, false
}

// amount is the calibrated concentration of species in the sample, in mM.
func (ch *Chromatogram) amount(species string) (float64, error) {
	p, ok := ch.Peak(species)
	if !ok {
		return 0, fmt.Errorf("%w: well %s: the method is not calibrated for %q", ErrAnalysis, ch.Well, species)
	}
	return p.Area / p.ResponseFactor, nil
}

// YieldVsStandard is the yield of product in percent against an internal standard: the
// product's amount from its peak and the standard's (standardUmol of it in the well), over the
// amount of the limiting reagent charged to the well, chargedUmol.
func (ch *Chromatogram) YieldVsStandard(product, standard string, standardUmol, chargedUmol float64) (float64, error) {
	if !(standardUmol > 0) || !(chargedUmol > 0) {
		return 0, fmt.Errorf("%w: well %s: the standard's amount %g µmol and the limiting reagent's %g µmol must be positive", ErrAnalysis, ch.Well, standardUmol, chargedUmol)
	}
	p, err := ch.amount(product)
	if err != nil {
		return 0, err
	}
	s, err := ch.amount(standard)
	if err != nil {
		return 0, err
	}
	if s == 0 {
		return 0, fmt.Errorf("%w: well %s: no peak of the internal standard %q", ErrAnalysis, ch.Well, standard)
	}
	return 100 * p / s * standardUmol / chargedUmol, nil
}

// YieldVsLimiting is the yield of product in percent against the limiting reagent left: the
// product's amount over the product's and the limiting reagent's together (for a reaction
// whose limiting reagent goes only to the product, 1:1).
func (ch *Chromatogram) YieldVsLimiting(product, limiting string) (float64, error) {
	p, err := ch.amount(product)
	if err != nil {
		return 0, err
	}
	l, err := ch.amount(limiting)
	if err != nil {
		return 0, err
	}
	if p+l == 0 {
		return 0, fmt.Errorf("%w: well %s: no peak of %q or %q", ErrAnalysis, ch.Well, product, limiting)
	}
	return 100 * p / (p + l), nil
}
