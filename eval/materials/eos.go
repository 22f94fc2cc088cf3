package materials

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Fit is a third-order Birch–Murnaghan equation of state fitted to a scan.
type Fit struct {
	A0  float64 `json:"a0"`  // Å
	V0  float64 `json:"v0"`  // Å³ per atom
	E0  float64 `json:"e0"`  // eV per atom
	B0  float64 `json:"b0"`  // GPa
	B0p float64 `json:"b0p"` // dB/dP at V0
	RMS float64 `json:"rms"` // eV per atom: the residual of the fit
}

// ErrFit means the points do not determine an equation of state.
var ErrFit = errors.New("materials: equation-of-state fit")

// FitBM fits E(V) = c0 + c1 x + c2 x² + c3 x³ with x = V^(-2/3), which is the third-order
// Birch–Murnaghan form exactly, by linear least squares, to volumes v (Å³/atom) and energies e
// (eV/atom), and derives V0 (dE/dV = 0, the minimum nearest the data), B0 = V d²E/dV² and B0'.
// The lattice constant of structure follows from V0.
func FitBM(structure string, v, e []float64) (*Fit, error) {
	n := len(v)
	if n != len(e) || n < 5 {
		return nil, fmt.Errorf("%w: %d volumes and %d energies; at least 5 points are needed", ErrFit, len(v), len(e))
	}
	if _, ok := atomsPerCube[structure]; !ok {
		return nil, fmt.Errorf("%w: unknown structure %q", ErrFit, structure)
	}
	// Centre and scale x for a well-conditioned design matrix.
	xs := make([]float64, n)
	var mean float64
	for i, vi := range v {
		if !(vi > 0) || math.IsInf(vi, 0) || math.IsNaN(e[i]) || math.IsInf(e[i], 0) {
			return nil, fmt.Errorf("%w: point %d: volume %g, energy %g", ErrFit, i+1, vi, e[i])
		}
		xs[i] = math.Pow(vi, -2.0/3)
		mean += xs[i] / float64(n)
	}
	var spread float64
	for _, x := range xs {
		spread = math.Max(spread, math.Abs(x-mean))
	}
	if spread == 0 {
		return nil, fmt.Errorf("%w: all volumes are equal", ErrFit)
	}
	a := mat.NewDense(n, 4, nil)
	b := mat.NewVecDense(n, e)
	for i, x := range xs {
		u := (x - mean) / spread
		a.Set(i, 0, 1)
		a.Set(i, 1, u)
		a.Set(i, 2, u*u)
		a.Set(i, 3, u*u*u)
	}
	var qr mat.QR
	qr.Factorize(a)
	var c mat.VecDense
	if err := qr.SolveVecTo(&c, false, b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFit, err)
	}
	// E(u) = c0 + c1 u + c2 u² + c3 u³ with u = (x - mean)/spread.
	c0, c1, c2, c3 := c.AtVec(0), c.AtVec(1), c.AtVec(2), c.AtVec(3)
	eu := func(u float64) float64 { return c0 + u*(c1+u*(c2+u*c3)) }
	d1 := func(u float64) float64 { return c1 + u*(2*c2+3*c3*u) }
	d2 := func(u float64) float64 { return 2*c2 + 6*c3*u }
	// The minimum: d1 = 0 with d2 > 0, nearest the data (u = 0).
	var roots []float64
	if math.Abs(c3) < 1e-14*math.Max(math.Abs(c2), math.Abs(c1)) {
		if c2 != 0 {
			roots = []float64{-c1 / (2 * c2)}
		}
	} else if disc := 4*c2*c2 - 12*c3*c1; disc >= 0 {
		s := math.Sqrt(disc)
		roots = []float64{(-2*c2 + s) / (6 * c3), (-2*c2 - s) / (6 * c3)}
	}
	u0, found := 0.0, false
	for _, r := range roots {
		if d2(r) > 0 && (!found || math.Abs(r) < math.Abs(u0)) {
			u0, found = r, true
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: the fitted curve has no minimum (the energies do not rise on both sides)", ErrFit)
	}
	x0 := mean + u0*spread
	if !(x0 > 0) {
		return nil, fmt.Errorf("%w: the minimum lies at a non-physical volume", ErrFit)
	}
	v0 := math.Pow(x0, -1.5)
	// Derivatives with respect to x, then V: dx/dV = -2/3 V^(-5/3), d²x/dV² = 10/9 V^(-8/3),
	// d³x/dV³ = -80/27 V^(-11/3); dE/dx = 0 at V0.
	ex1 := d1(u0) / spread
	ex2 := d2(u0) / (spread * spread)
	ex3 := 6 * c3 / (spread * spread * spread)
	xv := -2.0 / 3 * math.Pow(v0, -5.0/3)
	xvv := 10.0 / 9 * math.Pow(v0, -8.0/3)
	xvvv := -80.0 / 27 * math.Pow(v0, -11.0/3)
	evv := ex2*xv*xv + ex1*xvv
	evvv := ex3*xv*xv*xv + 3*ex2*xv*xvv + ex1*xvvv
	f := &Fit{
		V0:  v0,
		E0:  eu(u0),
		B0:  v0 * evv * evPerA3InGPa,
		B0p: -(evv + v0*evvv) / evv,
		A0:  math.Cbrt(v0 * float64(atomsPerCube[structure])),
	}
	var ss float64
	for i, x := range xs {
		r := e[i] - eu((x-mean)/spread)
		ss += r * r
	}
	f.RMS = math.Sqrt(ss / float64(n))
	return f, nil
}

// BirchMurnaghan is the third-order Birch–Murnaghan energy (eV/atom) at volume v (Å³/atom) for
// e0 (eV/atom), v0 (Å³/atom), b0 (GPa) and b0p.
func BirchMurnaghan(v, e0, v0, b0, b0p float64) float64 {
	eta := math.Pow(v0/v, 2.0/3) - 1
	return e0 + 9*v0*(b0/evPerA3InGPa)/16*(eta*eta*eta*b0p+eta*eta*(6-4*(eta+1)))
}
