// Package materials is labmate's materials benchmark: lattice constants and bulk moduli of cubic
// elements from equation-of-state scans, with Quantum ESPRESSO (plane-wave DFT, the
// pseudopotentials Debian ships) and LAMMPS (embedded-atom potentials), against experiment with
// the Sol27LC criterion (Correct when |a0 - a_exp|/a_exp < 5%).
//
// The benchmark runs the procedure of the eos-lattice-constant skill (examples/skills, a
// SKILL.md that labmate memory imports): for each element it writes the code's input with the
// lattice parameter as a placeholder, runs the skill's eos-scan.sh over seven lattice
// parameters within ±3% of a guess in a shell kernel in the sandbox, fits the third-order
// Birch–Murnaghan equation of state by least squares (the skill's bm_fit.py does the same in
// Python), and rescans once around the fitted a0 when the minimum lies outside the scan.
// Elements run in parallel, one kernel each, one MPI rank and one thread per code.
package materials

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/memory/skillmd"
	"github.com/labmate/labmate/protocol"
)

// SkillName is the skill whose procedure and scripts the benchmark runs.
const SkillName = "eos-lattice-constant"

// Criterion is Sol27LC's: a lattice constant within 5% of experiment is Correct.
const Criterion = 0.05

// Verdicts.
const (
	Correct   = "Correct"
	Incorrect = "Incorrect" // |error| ≥ 5%
	Failed    = "Failed"    // no lattice constant: a run or the fit failed
)

// Options configure Run. Start, Kernel and Skills are required.
type Options struct {
	// Skills is the skill library holding SkillName's scripts (NAME/SKILL.md, NAME/scripts/…;
	// labmate's is examples/skills).
	Skills fs.FS
	// Start starts the shell kernel each scan runs in (shell.Start).
	Start func(context.Context, *kernel.Options) (kernel.Kernel, error)
	// Kernel are the kernel options, with the sandbox; Workspace is set per scan.
	Kernel kernel.Options
	// Dir is where each scan gets its own folder METHOD-ELEMENT; default: a temporary
	// directory, removed at the end.
	Dir string
	// Elements limits the run to these symbols (any method); nil: all of Setups.
	Elements []string
	// Methods limits the run to these methods (QE, LAMMPS); nil: both.
	Methods []string
	// Jobs is how many scans run at once; default: the number of CPUs.
	Jobs int
	// Timeout bounds each scan (default 10 minutes).
	Timeout time.Duration
	// Progress, when set, is called with each result as it is ready (from several goroutines,
	// one call at a time).
	Progress func(*Result)
}

// Point is one scan point, in Å and eV per atom.
type Point struct {
	A      float64  `json:"a"`
	E      float64  `json:"e"`
	Magmom *float64 `json:"magmom,omitempty"` // µB per atom, spin-polarized runs
}

// Result is one element computed by one method.
type Result struct {
	Setup
	Fit       *Fit      `json:"fit,omitempty"`
	Exp       Reference `json:"exp"`
	ErrorPct  float64   `json:"error_pct"` // 100 (a0 - a_exp)/a_exp
	B0ErrPct  float64   `json:"b0_error_pct"`
	Verdict   string    `json:"verdict"`
	Magmom    *float64  `json:"magmom,omitempty"` // µB per atom at the point nearest a0
	Points    []Point   `json:"points"`
	Rescanned bool      `json:"rescanned,omitempty"` // the first window missed the minimum
	WallS     float64   `json:"wall_s"`
	Error     string    `json:"error,omitempty"`
}

// Select returns the setups of the given elements and methods (all when nil), and an error
// naming any element that has none.
func Select(elements, methods []string) ([]Setup, error) {
	var out []Setup
	for _, s := range Setups {
		if (elements == nil || slices.Contains(elements, s.Element)) && (methods == nil || slices.Contains(methods, s.Method)) {
			out = append(out, s)
		}
	}
	var unknown []string
	for _, el := range elements {
		if !slices.ContainsFunc(out, func(s Setup) bool { return s.Element == el }) {
			why := "not a benchmark element"
			for _, m := range []string{QE, LAMMPS} {
				if r, ok := Missing[el+"/"+m]; ok && (methods == nil || slices.Contains(methods, m)) {
					why = r
				}
			}
			unknown = append(unknown, el+" ("+why+")")
		}
	}
	for _, m := range methods {
		if m != QE && m != LAMMPS {
			unknown = append(unknown, "method "+m+" (qe or lammps)")
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("materials: nothing to run for %s; the elements are %s", strings.Join(unknown, ", "), strings.Join(elementList(), " "))
	}
	return out, nil
}

func elementList() []string {
	var els []string
	for _, s := range Setups {
		if !slices.Contains(els, s.Element) {
			els = append(els, s.Element)
		}
	}
	return els
}

// Run scans every selected element with every selected method, Jobs at a time (the most
// expensive first), and returns the results in the order of Setups. A scan that fails is a
// Result with Verdict Failed; the error is for a benchmark that cannot run at all.
func Run(ctx context.Context, opts *Options) ([]*Result, error) {
	if opts == nil || opts.Start == nil || opts.Kernel.Sandbox == nil || opts.Skills == nil {
		return nil, errors.New("materials: Options.Start, Options.Kernel.Sandbox and Options.Skills are required")
	}
	setups, err := Select(opts.Elements, opts.Methods)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "labmate-materials-"); err != nil {
			return nil, fmt.Errorf("materials: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("materials: %w", err)
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	timeout := cmp.Or(opts.Timeout, 10*time.Minute)
	results := make([]*Result, len(setups))
	order := make([]int, len(setups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(setups[b].Cost, setups[a].Cost) })
	next := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(jobs, len(setups)) {
		wg.Go(func() {
			for i := range next {
				r := scan(ctx, opts, &setups[i], filepath.Join(dir, setups[i].Method+"-"+setups[i].Element), timeout)
				results[i] = r
				if opts.Progress != nil {
					mu.Lock()
					opts.Progress(r)
					mu.Unlock()
				}
			}
		})
	}
	for _, i := range order {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return results, err
	}
	return results, nil
}

// scan runs one element's procedure in a fresh shell kernel in dir.
func scan(ctx context.Context, opts *Options, s *Setup, dir string, timeout time.Duration) *Result {
	start := time.Now()
	r := &Result{Setup: *s, Exp: References[s.Element], Verdict: Failed}
	defer func() { r.WallS = time.Since(start).Seconds() }()
	fail := func(err error) *Result {
		r.Error = err.Error()
		return r
	}
	if err := prepare(opts.Skills, s, dir); err != nil {
		return fail(err)
	}
	ko := opts.Kernel
	ko.Workspace = dir
	k, err := opts.Start(ctx, &ko)
	if err != nil {
		return fail(fmt.Errorf("starting the shell kernel: %w", err))
	}
	defer k.Close()
	centre := s.Guess
	for attempt := 0; ; attempt++ {
		points, err := runScan(ctx, k, s, s.ScanPoints(centre), timeout)
		r.Points = append(r.Points, points...)
		if err != nil {
			return fail(err)
		}
		fit, err := fitPoints(s, r.Points)
		if err != nil {
			return fail(err)
		}
		lo, hi := centre*(1-scanHalfWidth), centre*(1+scanHalfWidth)
		if (fit.A0 >= lo && fit.A0 <= hi) || attempt == 1 {
			r.Fit = fit
			break
		}
		// The minimum lies outside the window: scan again around it (the skill's rule).
		r.Rescanned = true
		centre = fit.A0
	}
	r.ErrorPct = 100 * (r.Fit.A0 - r.Exp.A0) / r.Exp.A0
	if r.Exp.B0 > 0 {
		r.B0ErrPct = 100 * (r.Fit.B0 - r.Exp.B0) / r.Exp.B0
	}
	r.Verdict = Incorrect
	if math.Abs(r.ErrorPct) < 100*Criterion {
		r.Verdict = Correct
	}
	best := math.Inf(1)
	for _, p := range r.Points {
		if d := math.Abs(p.A - r.Fit.A0); p.Magmom != nil && d < best {
			best, r.Magmom = d, p.Magmom
		}
	}
	return r
}

// prepare writes the template and the skill's scripts into dir.
func prepare(lib fs.FS, s *Setup, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmpl, err := s.Template()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "template.in"), []byte(tmpl), 0o644); err != nil {
		return err
	}
	return skillmd.CopyScripts(lib, SkillName, dir)
}

// runScan runs eos-scan.sh over points and parses its lines.
func runScan(ctx context.Context, k kernel.Kernel, s *Setup, points []string, timeout time.Duration) ([]Point, error) {
	code := "pw.x"
	if s.Method == LAMMPS {
		code = "lmp"
	}
	cell := &kernel.Cell{Code: "bash eos-scan.sh " + code + " template.in " + strings.Join(points, " "), Timeout: timeout}
	var out, errs []string
	var res *protocol.Result
	for step, err := range k.Exec(ctx, cell) {
		if err != nil {
			return nil, fmt.Errorf("running the scan: %w", err)
		}
		if step.Result != nil {
			res = step.Result
			continue
		}
		switch o := step.Observation; o.Kind {
		case protocol.ObsStdout:
			out = append(out, o.Line)
		case protocol.ObsStderr:
			errs = append(errs, o.Line)
		}
	}
	pts, perr := s.ReadScan(strings.Join(out, "\n"))
	if res == nil || res.Status != protocol.StatusOK {
		why := "no result"
		if res != nil {
			why = string(res.Status)
			if res.Error != "" {
				why += ": " + res.Error
			}
		}
		return pts, fmt.Errorf("the scan failed (%s): %s", why, strings.Join(last(errs, 4), " | "))
	}
	if perr != nil {
		return pts, fmt.Errorf("reading the scan: %w", perr)
	}
	if len(pts) != len(points) {
		return pts, fmt.Errorf("the scan gave %d of %d points: %s", len(pts), len(points), strings.Join(last(errs, 4), " | "))
	}
	return pts, nil
}

func last(s []string, n int) []string { return s[max(0, len(s)-n):] }

func fitPoints(s *Setup, pts []Point) (*Fit, error) {
	v := make([]float64, len(pts))
	e := make([]float64, len(pts))
	for i, p := range pts {
		v[i], e[i] = volumePerAtom(s.Structure, p.A), p.E
	}
	return FitBM(s.Structure, v, e)
}

// ReadScan parses eos-scan.sh output ("A ENERGY [MAGNETIZATION]" lines in the code's units:
// bohr and Ry per cell for pw.x, Å and eV per atom for lmp) into points in Å and eV per atom.
func (s *Setup) ReadScan(text string) ([]Point, error) {
	var pts []Point
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return pts, fmt.Errorf("line %d: %q is not \"A ENERGY\"", n, sc.Text())
		}
		a, err1 := strconv.ParseFloat(f[0], 64)
		e, err2 := strconv.ParseFloat(f[1], 64)
		if err := errors.Join(err1, err2); err != nil {
			return pts, fmt.Errorf("line %d: %w", n, err)
		}
		p := Point{}
		p.A, p.E = s.perAtom(a, e)
		if len(f) > 2 {
			if m, err := strconv.ParseFloat(f[2], 64); err == nil {
				m /= float64(atomsPerPrimitive[s.Structure])
				p.Magmom = &m
			}
		}
		pts = append(pts, p)
	}
	return pts, nil
}
