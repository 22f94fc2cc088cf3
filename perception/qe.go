package perception

import (
	"fmt"
	"strings"

	"github.com/labmate/labmate/protocol"
)

func init() {
	registerCode(&code{
		name:    ProfileQE,
		aliases: []string{"pw.x", "pw", "espresso", "quantum-espresso", "quantum_espresso"},
		runs:    func(w string) bool { return w == "pw.x" },
		reader:  func(*Monitor, *Config) reader { return qeReader{} },
	})
}

// qeReader reads pw.x's output; its state is the stream's (stream.qe) and the Monitor's
// (qeIn: the input's conv_thr and mixing_beta, which roles and corrections read too).
type qeReader struct{}

func (qeReader) line(m *Monitor, st *stream, kind protocol.ObservationKind, line string) {
	m.qeLine(st, kind, line)
}
func (qeReader) sample(*Monitor, *series, *protocol.Sample) {}

// qe reads Quantum ESPRESSO's pw.x output (version 6.x and 7.x): the texts below are its own
// format strings.
//
// Telemetry, one sample per line (the pairs every profile reads add `energy` from every
// `total energy = … Ry` line, `ecut` and `beta` from the iteration header):
//
//	iteration #  3     ecut=    12.00 Ry     beta= 0.70      scf_iteration = 3
//	estimated scf accuracy    <       0.00009279 Ry          scf_accuracy = 9.279e-05
//	!    total energy              =     -15.61435403 Ry     total_energy = -15.61435403
//	Total force =     0.000123     Total SCF correction = …  total_force = 0.000123
//	total   stress  (Ry/bohr**3)   (kbar)     P=       47.47 pressure = 47.47
//
// Faults:
//
//   - an error block — a line of %, ` Error in routine NAME (N):`, the message, a line of % —
//     is an Error with the routine and the message as evidence (QE stops right after it;
//     the verdict says why). Blocks with `Message from routine` are informational.
//   - `convergence NOT achieved after N iterations` (the SCF gave up), `S matrix not positive
//     definite` and `problems computing cholesky` (the overlap matrix of the basis is
//     singular: atoms too close, a bad pseudopotential, a broken cell), `charge is wrong`
//     → Error.
//   - `WARNING: integrated charge … expected …`, `starting and expected charges differ`,
//     `imaginary charge`, and `negative rho` or `negative starting charge` of 0.1 electrons or
//     more → Warning: the density is suspect, and whether the run is still usable is a judge's
//     call. (Small negative densities are routine with ultrasoft and PAW pseudopotentials.)
//   - a relaxation (or dynamics) driven by noise: for forceNoiseSteps (3) ionic steps in a row,
//     `Total SCF correction` half of `Total force` or more (pw.x's own warning, "SCF correction
//     compared to forces is large", comes at a tenth), with the force not halving over them →
//     Error: the forces are the SCF's error, and BFGS wanders, resets its history and runs
//     out of steps. A sound relaxation's SCF error is a small part of its forces, and pw.x
//     tightens conv_thr as they fall.
//   - an SCF that diverges or stalls: within one SCF cycle (the iteration counter restarting
//     at 1 starts a new one), the estimated scf accuracy reaching ScfRise (1e4) times the
//     best it reached, from the third iteration on, or staying ScfSlosh (20) times above that
//     best for ScfSloshRun (4) iterations in a row, or ScfStall (12) iterations without a new
//     best while the accuracy is still ten times worse than that best → Error. A converging
//     SCF improves on its best every few iterations even when its start is noisy (single rises
//     of 10–100× are common, and it falls back below them at the next iteration or so); charge
//     sloshing with a mixing_beta too high bounces from 1e-6 back up and stays up, wandering
//     higher until 10–100 Ry, until electron_maxstep.
type qe struct {
	inBlock  bool   // between two lines of %
	blockErr bool   // the block is an error
	routine  string // its routine, until the message line is read
	errLine  string // the "Error in routine" line

	cycle    bool // an SCF cycle is running (iteration 1 seen, no end yet)
	iter     int  // the last iteration number
	n        int  // accuracies seen in this cycle
	best     float64
	bestAt   int
	above    int  // consecutive accuracies ScfSlosh times the best or more
	reported bool // the SCF rule fired in this cycle
	sig      float64
	sigAt    int // the last accuracy 20% below the best before it (a real improvement)

	relax qeRelax // across SCF cycles: the ionic steps' forces
}

// qeRelax follows the forces of a relaxation's (or dynamics') ionic steps: the last steps'
// total forces in a row whose SCF correction is half the force or more.
type qeRelax struct {
	noisy    []float64
	reported bool
}

// forceNoise is the share of the total force its SCF correction may reach before the force is
// noise, and forceNoiseSteps how many ionic steps in a row, without the force halving, make
// the relaxation one that follows noise.
const (
	forceNoise      = 0.5
	forceNoiseSteps = 3
)

// qeForce judges an ionic step's total force and its SCF correction.
func (m *Monitor) qeForce(q *qe, force, scf float64, kind protocol.ObservationKind, line string) {
	r := &q.relax
	if r.reported || force <= 0 {
		return
	}
	if scf < forceNoise*force {
		r.noisy = r.noisy[:0]
		return
	}
	r.noisy = append(r.noisy, force)
	if n := len(r.noisy); n < forceNoiseSteps || force < 0.5*r.noisy[n-forceNoiseSteps] {
		return
	}
	r.reported = true
	m.raise(detProfile, finding{state: protocol.Error,
		message:  fmt.Sprintf("Quantum ESPRESSO: the forces are noise: for %d ionic steps in a row the SCF correction was half the total force or more, and the force is not falling (%s now): the ions follow the SCF error, not the energy surface", len(r.noisy), num(force)),
		evidence: string(kind) + ": " + line, severity: 0.9,
		correction: "tighten the SCF: conv_thr 1e-8 or lower (and leave upscale at its default, so pw.x may tighten it further as the forces fall)"})
}

// qeLine reads one line; samples go to emit, faults to report.
func (m *Monitor) qeLine(st *stream, kind protocol.ObservationKind, line string) {
	q := &st.qe
	t := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(t, "%%%%%%%%%%") {
		if q.inBlock && q.blockErr && q.routine != "" { // an error block without a message
			m.qeError(q, "", kind, line)
		}
		q.inBlock, q.blockErr, q.routine = !q.inBlock, false, ""
		return
	}
	if q.inBlock {
		switch {
		case strings.HasPrefix(t, "Error in routine"):
			q.blockErr = true
			q.routine = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(t, "Error in routine")), ":")
			q.errLine = line
		case q.blockErr && t != "":
			if q.routine != "" {
				m.qeError(q, t, kind, line)
			} else {
				m.raise(detProfile, finding{state: protocol.Error, evidence: string(kind) + ": " + line, severity: 1})
			}
		}
		return
	}
	switch {
	case strings.HasPrefix(t, "convergence threshold"), strings.HasPrefix(t, "mixing beta"):
		m.qeIn.qeSummary(t)
	case strings.HasPrefix(t, "iteration #"):
		n, ok := firstNumber(t[len("iteration #"):])
		if !ok {
			return
		}
		if n <= 1 || int(n) < q.iter || !q.cycle {
			*q = qe{cycle: true, relax: q.relax}
		}
		q.iter = int(n)
		m.emit(st, "scf_iteration", n)
	case strings.HasPrefix(t, "estimated scf accuracy"):
		i := strings.IndexByte(t, '<')
		if i < 0 || !q.cycle {
			return // the converged value repeated after the cycle's end
		}
		v, ok := firstNumber(t[i+1:])
		if !ok {
			return
		}
		m.emit(st, "scf_accuracy", v)
		m.qeAccuracy(q, v, kind, line)
	case strings.HasPrefix(t, "End of self-consistent calculation"), strings.HasPrefix(t, "convergence has been achieved"),
		strings.HasPrefix(t, "End of band structure calculation"):
		q.cycle = false
	case strings.HasPrefix(t, "!"):
		if i := strings.IndexByte(t, '='); i >= 0 && strings.Contains(t[:i], "total energy") {
			if v, ok := firstNumber(t[i+1:]); ok {
				m.emit(st, "total_energy", v)
			}
		}
	case strings.HasPrefix(t, "Total force ="):
		if v, ok := firstNumber(t[len("Total force ="):]); ok {
			m.emit(st, "total_force", v)
			if i := strings.Index(t, "Total SCF correction ="); i >= 0 {
				if c, ok := firstNumber(t[i+len("Total SCF correction ="):]); ok {
					m.qeForce(q, v, c, kind, line)
				}
			}
		}
	case strings.HasPrefix(t, "total   stress"):
		if i := strings.Index(t, "P="); i >= 0 {
			if v, ok := firstNumber(t[i+2:]); ok {
				m.emit(st, "pressure", v)
			}
		}
	case strings.Contains(t, "convergence NOT achieved"):
		q.cycle = false
		m.raise(detProfile, finding{state: protocol.Error, message: "Quantum ESPRESSO: SCF convergence NOT achieved", evidence: string(kind) + ": " + line, severity: 1,
			correction: m.qeIn.scfCorrection(q.n > 0 && q.n-q.bestAt <= 1)})
	case strings.Contains(t, "S matrix not positive definite"), strings.Contains(t, "problems computing cholesky"):
		m.raise(detProfile, finding{state: protocol.Error, message: "Quantum ESPRESSO: overlap matrix not positive definite (atoms too close, or a bad basis)", evidence: string(kind) + ": " + line, severity: 1,
			correction: "check the atomic positions and the cell for atoms too close; or use diagonalization = 'cg'"})
	case strings.Contains(t, "charge is wrong"):
		m.raise(detProfile, finding{state: protocol.Error, message: "Quantum ESPRESSO: charge is wrong", evidence: string(kind) + ": " + line, severity: 1,
			correction: "a metal needs smearing: occupations = 'smearing', smearing = 'mv', degauss = 0.02"})
	case strings.HasPrefix(t, "WARNING: integrated charge"), strings.Contains(t, "starting and expected charges differ"), strings.Contains(t, "imaginary charge"):
		m.raise(detProfile, finding{state: protocol.Warning, message: "Quantum ESPRESSO: charge mismatch", evidence: string(kind) + ": " + line, severity: 0.5})
	case strings.HasPrefix(t, "negative rho"), strings.HasPrefix(t, "Check: negative starting charge"), strings.HasPrefix(t, "Check: negative core charge"):
		i := strings.LastIndexByte(t, ':')
		if v, ok := firstNumber(t[i+1:]); ok && abs(v) >= 0.1 {
			m.raise(detProfile, finding{state: protocol.Warning, message: "Quantum ESPRESSO: negative charge density", evidence: string(kind) + ": " + line, severity: 0.5})
		}
	}
}

// qeError reports an error block: its routine and its message.
func (m *Monitor) qeError(q *qe, msg string, kind protocol.ObservationKind, line string) {
	text := "Quantum ESPRESSO: error in routine " + q.routine
	if msg != "" {
		text += ": " + msg
	}
	fix := ""
	switch {
	case strings.Contains(msg, "charge is wrong"):
		text += " (a metal needs smearing, or the electron count is wrong)"
		fix = "a metal needs smearing: occupations = 'smearing', smearing = 'mv', degauss = 0.02"
	case strings.Contains(msg, "cholesky"), strings.Contains(msg, "S matrix"):
		fix = "check the atomic positions and the cell for atoms too close; or use diagonalization = 'cg'"
	}
	m.raise(detProfile, finding{state: protocol.Error, message: text, evidence: string(kind) + ": " + q.errLine, severity: 1, correction: fix})
	if msg != "" {
		m.raise(detProfile, finding{state: protocol.Error, evidence: string(kind) + ": " + line, severity: 1})
	}
	q.routine = ""
}

// qeAccuracy applies the SCF rule to one estimated scf accuracy.
func (m *Monitor) qeAccuracy(q *qe, v float64, kind protocol.ObservationKind, line string) {
	q.n++
	if q.n == 1 || v < q.best {
		q.best, q.bestAt = v, q.n
	}
	if q.n == 1 || v < 0.8*q.sig {
		q.sig, q.sigAt = v, q.n
	}
	if q.reported || q.best <= 0 {
		return
	}
	if v >= m.th.ScfSlosh*q.best {
		q.above++
	} else {
		q.above = 0
	}
	var msg string
	switch {
	case q.n >= 3 && v >= m.th.ScfRise*q.best:
		msg = fmt.Sprintf("Quantum ESPRESSO: SCF diverging: estimated scf accuracy %s Ry is %s× its best (%s Ry at iteration %d)", num(v), num(v/q.best), num(q.best), q.bestAt)
	case q.n >= 3 && q.above >= m.th.ScfSloshRun:
		msg = fmt.Sprintf("Quantum ESPRESSO: SCF sloshing: estimated scf accuracy %s× its best (%s Ry at iteration %d) or more for %d iterations in a row, now %s Ry", num(m.th.ScfSlosh), num(q.best), q.bestAt, q.above, num(v))
	case q.n-q.bestAt >= m.th.ScfStall && v > 10*q.best:
		msg = fmt.Sprintf("Quantum ESPRESSO: SCF not converging: no improvement on %s Ry (iteration %d) in %d iterations, now %s Ry", num(q.best), q.bestAt, q.n-q.bestAt, num(v))
	case q.n-q.sigAt >= m.th.ScfStallLong && v > 100*m.qeIn.convThr:
		msg = fmt.Sprintf("Quantum ESPRESSO: SCF stalled: the estimated scf accuracy has not improved by 20%% on %s Ry (iteration %d) in %d iterations, now %s Ry, %s× conv_thr (%s Ry)",
			num(q.sig), q.sigAt, q.n-q.sigAt, num(v), num(v/m.qeIn.convThr), num(m.qeIn.convThr))
	default:
		return
	}
	q.reported = true
	m.raise(detProfile, finding{state: protocol.Error, message: msg, evidence: string(kind) + ": " + strings.TrimSpace(line), severity: 0.9,
		role:       "scf_accuracy (printed): residual, Quantum ESPRESSO's estimated scf accuracy, which must fall below conv_thr = " + num(m.qeIn.convThr) + " Ry",
		correction: m.qeIn.scfCorrection(false)})
}

// firstNumber parses the first number token of s (blank-separated), skipping words.
func firstNumber(s string) (float64, bool) {
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '=' || s[i] == ',' || s[i] == '(') {
			i++
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != ',' && s[j] != ')' && s[j] != ':' {
			j++
		}
		if j > i && isNumberToken(s[i:j]) {
			return parseNumber(s[i:j]), true
		}
		i = j + 1
	}
	return 0, false
}
