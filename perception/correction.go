package perception

import (
	"fmt"
	"strconv"
	"strings"
)

// Corrections. Like custodian's error handlers (a signature plus a correction), a fault
// verdict carries the fix the code's own documentation gives for it, when there is one, in
// Verdict.Correction: the agent's repair reads it, and `labmate exec` prints it with the
// verdict. The corrections are chosen from what the cell's input declares:
//
//   - Quantum ESPRESSO, an SCF that sloshes, diverges, stalls or does not converge: lower
//     mixing_beta (pw.x's documentation: "reduce mixing_beta" when the SCF does not converge;
//     half the declared value, at most 0.3), local-TF mixing for an elongated or
//     inhomogeneous cell, smearing for a metal run with fixed occupations, more bands, more
//     iterations when the accuracy was still falling; "charge is wrong" → smearing; "S matrix
//     not positive definite" / cholesky → check the positions, or diagonalization = 'cg'.
//   - LAMMPS, lost atoms, an exploding temperature or energy, NVE drift: a smaller timestep
//     (the declared one halved at least; metals 1–2 fs, Lennard-Jones 0.005 τ) and a
//     neighbor list checked every step; a thermostat whose Tdamp is shorter than 100
//     timesteps (the fix nvt documentation's rule of thumb) → raise it; a temperature far
//     from its thermostat's target → check the thermostat's group, Tdamp and units.
//   - Energy drift of a conserved quantity: with explicit Euler, a symplectic integrator
//     (velocity Verlet, leapfrog) or a much smaller step; otherwise a smaller step.
//   - A loss that diverges: a lower learning rate; a residual that diverges or stalls:
//     damping or a line search; a time-stepping scheme that blows up: a step below its
//     stability limit.

// qeInput is what a Quantum ESPRESSO input declares (read from the cell's code, and from
// pw.x's own summary of it on stdout).
type qeInput struct {
	convThr     float64 // conv_thr (Ry), default 1e-6
	maxstep     int     // electron_maxstep, default 100
	beta        float64 // mixing_beta, default 0.7
	mode        string  // mixing_mode
	occupations string
	nbnd        bool // nbnd is set
	elongated   bool // celldm(3) or the c/a ratio is 2 or more
}

// readQEInput reads the namelist values from the cell's code.
func readQEInput(code string) qeInput {
	q := qeInput{convThr: 1e-6, maxstep: 100, beta: 0.7, mode: "plain", occupations: "fixed"}
	for line := range strings.Lines(code) {
		for _, part := range strings.Split(line, ",") {
			k, v, ok := strings.Cut(part, "=")
			if !ok {
				continue
			}
			k = strings.ToLower(strings.TrimSpace(k))
			v = strings.Trim(strings.TrimSpace(v), "'\"")
			switch k {
			case "conv_thr":
				if x, ok := fortranNumber(v); ok && x > 0 {
					q.convThr = x
				}
			case "electron_maxstep":
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					q.maxstep = n
				}
			case "mixing_beta":
				if x, ok := fortranNumber(v); ok && x > 0 {
					q.beta = x
				}
			case "mixing_mode":
				q.mode = strings.ToLower(v)
			case "occupations":
				q.occupations = strings.ToLower(v)
			case "nbnd":
				q.nbnd = true
			case "celldm(3)":
				if x, ok := fortranNumber(v); ok && x >= 2 {
					q.elongated = true
				}
			case "c":
				if x, ok := fortranNumber(v); ok && x > 0 {
					q.elongated = q.elongated || x >= 10 // Å: a long cell
				}
			}
		}
	}
	return q
}

// qeSummary reads pw.x's summary of its input: "convergence threshold = 1.0E-08",
// "mixing beta = 0.7000".
func (q *qeInput) qeSummary(t string) {
	switch {
	case strings.HasPrefix(t, "convergence threshold"):
		if v, ok := firstNumber(t[strings.IndexByte(t, '=')+1:]); ok && v > 0 {
			q.convThr = v
		}
	case strings.HasPrefix(t, "mixing beta"):
		if v, ok := firstNumber(t[strings.IndexByte(t, '=')+1:]); ok && v > 0 {
			q.beta = v
		}
	}
}

// fortranNumber parses 1.0d-8, 1e-8, 0.3.
func fortranNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t!/"); i > 0 {
		s = s[:i]
	}
	if !isNumberToken(s) {
		return 0, false
	}
	return parseNumber(s), true
}

// scfCorrection is the fix for an SCF that does not converge.
func (q *qeInput) scfCorrection(stillFalling bool) string {
	var fix []string
	if q.beta > 0.1 {
		fix = append(fix, fmt.Sprintf("lower mixing_beta (now %s; try %s)", num(q.beta), num(min(0.3, q.beta/2))))
	}
	if q.mode == "plain" && q.elongated {
		fix = append(fix, "use mixing_mode = 'local-TF' for the elongated cell (charge sloshing)")
	} else if q.mode == "plain" {
		fix = append(fix, "try mixing_mode = 'local-TF' (charge sloshing in inhomogeneous or long cells)")
	}
	if !strings.HasPrefix(q.occupations, "smear") {
		fix = append(fix, "for a metal, add smearing (occupations = 'smearing', smearing = 'mv', degauss = 0.02)")
	} else if !q.nbnd {
		fix = append(fix, "add empty bands (nbnd)")
	}
	if stillFalling {
		fix = append(fix, fmt.Sprintf("raise electron_maxstep (now %d)", q.maxstep))
	}
	return strings.Join(fix, "; ")
}

// lammpsThermostat is the thermostat a LAMMPS input declares: `fix ID GROUP nvt temp Tstart
// Tstop Tdamp`, npt, langevin, temp/berendsen, temp/csvr, temp/rescale.
type lammpsThermostat struct {
	ok           bool
	id, group    string
	style        string
	tstart, tdmp float64
	tstop        float64
	runN         float64 // the length of the first run after it (0: unknown)
}

// describe says what the thermostat declares, for a role's evidence.
func (th *lammpsThermostat) describe() string {
	s := fmt.Sprintf("LAMMPS fix %s %s holds Temp at %s", th.id, th.style, num(th.tstart))
	if th.tstop != th.tstart {
		s += " → " + num(th.tstop)
	}
	return s
}

// thermostatStyles take Tstart Tstop (Tdamp) right after the style, or after "temp".
var thermostatStyles = []string{"langevin", "temp/berendsen", "temp/csvr", "temp/csld", "temp/rescale", "nvt", "npt", "nvt/sllod", "nvt/asphere", "nvt/sphere", "npt/asphere", "npt/sphere", "nvt/body", "npt/body"}

// thermostat reads a `fix` line's thermostat; ok is false for other fixes, and for targets
// the input computes (variables).
func parseThermostat(f []string) (lammpsThermostat, bool) {
	if len(f) < 4 || f[0] != "fix" {
		return lammpsThermostat{}, false
	}
	style := f[3]
	known := false
	for _, s := range thermostatStyles {
		known = known || s == style
	}
	if !known {
		return lammpsThermostat{}, false
	}
	args := f[4:]
	if strings.HasPrefix(style, "nvt") || strings.HasPrefix(style, "npt") {
		i := 0
		for i < len(args) && args[i] != "temp" {
			i++
		}
		if i == len(args) {
			return lammpsThermostat{}, false
		}
		args = args[i+1:]
	} else if style == "temp/rescale" && len(args) > 0 {
		args = args[1:] // N
	}
	if len(args) < 2 {
		return lammpsThermostat{}, false
	}
	th := lammpsThermostat{id: f[1], group: f[2], style: style}
	var ok1, ok2 bool
	th.tstart, ok1 = fortranNumber(args[0])
	th.tstop, ok2 = fortranNumber(args[1])
	if !ok1 || !ok2 || th.tstart <= 0 || th.tstop <= 0 {
		return lammpsThermostat{}, false
	}
	if style != "temp/rescale" && len(args) >= 3 {
		th.tdmp, _ = fortranNumber(args[2])
	}
	th.ok = true
	return th, true
}

// lammpsDefaultStep is the default timestep of each unit style.
var lammpsDefaultStep = map[string]float64{"lj": 0.005, "real": 1, "metal": 0.001, "si": 1e-8, "cgs": 1e-8, "electron": 0.001, "micro": 2, "nano": 0.00045}

// dt is the declared timestep, in the units' time.
func (l *lammps) dt() float64 {
	if l.timestep > 0 {
		return l.timestep
	}
	if d, ok := lammpsDefaultStep[l.units]; ok {
		return d
	}
	return lammpsDefaultStep["lj"]
}

// tdampSteps is the thermostat's damping time in timesteps (0: none).
func (l *lammps) tdampSteps() float64 {
	if !l.thermo.ok || l.thermo.tdmp <= 0 {
		return 0
	}
	return l.thermo.tdmp / l.dt()
}

// stepCorrection is the fix for an MD integration that blew up or drifts.
func (l *lammps) stepCorrection() string {
	fix := fmt.Sprintf("reduce the timestep (now %s", num(l.dt()))
	if l.units != "" {
		fix += " in " + l.units + " units"
	}
	fix += "; halve it at least — metals take 1–2 fs, Lennard-Jones 0.005 τ) and check neighbor lists every step (neigh_modify every 1 delay 0 check yes)"
	if n := l.tdampSteps(); n > 0 && n < 100 {
		fix += fmt.Sprintf("; the thermostat's Tdamp is %s timesteps: LAMMPS recommends about 100 timesteps, raise it to %s", num(n), num(100*l.dt()))
	}
	return fix
}

// corrected adds to f the correction its fault on sr calls for, if one is known.
func (m *Monitor) corrected(sr *series, d detector, f finding) finding {
	if f.state != "Error" || f.correction != "" {
		return f
	}
	switch {
	case m.prof.lammps && d != detProfile && d != detLanguage:
		f.correction = m.lmp.stepCorrection()
	case d == detDrift:
		if m.ctx.integrator == "euler" || !m.ctx.conservative {
			f.correction = "explicit Euler and other non-symplectic schemes do not conserve energy: use a symplectic integrator (velocity Verlet, leapfrog) or a much smaller step"
		} else {
			f.correction = "reduce the time step (a symplectic scheme's energy error shrinks as dt²)"
		}
	case d == detStall:
		f.correction = "the iteration does not converge: add damping or a line search, check the Jacobian, or start from a better initial guess"
	case d == detDivergence && sr != nil && sr.role.role == RoleLoss:
		f.correction = "lower the learning rate (by 10× or more), or normalise the inputs"
	case d == detDivergence && sr != nil && sr.role.role == RoleResidual:
		f.correction = "damp the iteration (a line search or a smaller step), or start closer to the solution"
	case d == detDivergence:
		f.correction = "if this is a time-stepping scheme, reduce the step below its stability limit (explicit schemes: CFL r ≤ 0.5, h·|λ| < 2), or use an implicit method"
	case d == detNonFinite && sr != nil && sr.role.role == RoleFinite:
		f.correction = "compute the log-likelihood in log space (logsumexp, log1p) so that it cannot underflow to -inf"
	}
	return f
}
