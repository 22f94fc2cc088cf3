package perception

import (
	"strings"

	"github.com/labmate/labmate/protocol"
)

// language recognises what the interpreters and their numerical libraries print when
// something went wrong. The texts come from Octave 7.3 and scipy 1.10 / numpy 1.24 themselves
// (their sources, their Fortran integrators, and runs of failing code), not from memory.
//
// On stderr (where the interpreters write them):
//
//   - Octave `error: …` → Error. (`error: called from` and the stack lines after it are context.)
//   - Octave `warning: matrix singular to machine precision` → Error: that text, without an
//     rcond, is Octave:singular-matrix — the matrix is exactly singular and the solve returned
//     Inf or garbage. With `, rcond = …` it is Octave:nearly-singular-matrix → Warning: the
//     result may still be usable, and a judge or the agent decides.
//   - Octave `warning: … Solving was not successful …` (ode45/ode23/ode15s gave up before
//     tspan's end) → Error: the trajectory after that point does not exist.
//   - Other Octave warnings → Warning, except a few that say nothing about the numbers
//     (`called from`, shadowed functions, implicit char conversion, graphics and display).
//   - Python `Traceback (most recent call last):` and an exception line
//     (`numpy.linalg.LinAlgError: Singular matrix`, also printed alone for a SyntaxError)
//     → Error. `KeyboardInterrupt` (labmate's own interrupt) is not an error.
//   - Python warnings (`file:line: Category: message`): RuntimeWarning → Warning — overflow,
//     invalid value and divide by zero included. Overflow is deliberately not an Error:
//     `1/(1+np.exp(-x))` overflows harmlessly for very negative x and gives the right 0; when
//     an overflow does poison the results, the non-finite detector sees the inf/nan.
//     ODEintWarning → Error (odeint stopped early: excess work, repeated error-test or
//     convergence failures, …), except "Integration successful." and "Nothing was done",
//     which printmessg=1 prints on success. IntegrationWarning, LinAlgWarning (ill-conditioned
//     matrix), OptimizeWarning and ConvergenceWarning → Warning. Other categories
//     (DeprecationWarning, FutureWarning, plain UserWarning…) are Normal unless their message
//     is one of the solver messages below — scipy's `ode` reports `dopri5: step size becomes
//     too small` and `vode: Excess work done on this call` as UserWarnings.
//
// On stdout and stderr:
//
//   - The Fortran integrators' own messages (odepack `lsoda--`, `DLSODE-` in Octave's lsode,
//     `DVODE--`, `DASPK--`, `DASRT--`, `DASSL--`, dopri's `EXIT OF DOPRI5 AT X=` / `STEP SIZE
//     TOO SMALL`) → Error, except `Warning..internal T (=R1) and H (=R2) are such that … T + H = T`
//     and `Above warning has been issued` → Warning (the step underflowed but "solver will
//     continue anyway"), and lsoda's informational method switches → Normal.
//   - Solver messages as a program prints them (`print(sol.message)`): "Required step size is
//     less than spacing between numbers", "step size becomes too small", "Excess work done on
//     this call", "Repeated error test failures", "Repeated convergence failures", "Solving was
//     not successful", "problem is probably stiff", "larger nsteps is needed" → Error (the
//     integration stopped short); "The iteration is not making good progress", "failed to
//     converge", "did not converge", "Maximum number of iterations/function evaluations has
//     been exceeded", "has reached maxfev", "Desired error not necessarily achieved",
//     "Ill-conditioned matrix", quad's "probably divergent" / "roundoff error is detected" /
//     "maximum number of subdivisions" → Warning (an iterative method stopped without meeting
//     its tolerance; whether the result is still usable is a judgement call).
//
// Octave's `error:`/`warning:` prefixes and Python tracebacks are only believed on stderr:
// a program printing `error: 1.2e-3` to stdout is reporting a number, not failing.
type language struct{}

// languageContext is the stderr line that introduces an Octave stack trace.
const languageContext = "called from"

func (language) line(kind protocol.ObservationKind, line string) (finding, bool) {
	if line == "" {
		return finding{}, false
	}
	if kind == protocol.ObsStderr {
		if st, what, ok := stderrLine(line); ok {
			return languageFinding(kind, st, what, line)
		}
	}
	if st, what, ok := solverLine(line); ok {
		return languageFinding(kind, st, what, line)
	}
	return finding{}, false
}

func languageFinding(kind protocol.ObservationKind, st protocol.VerdictState, what, line string) (finding, bool) {
	if st == protocol.Normal {
		return finding{}, false
	}
	sev := 0.5
	if st == protocol.Error {
		sev = 1
	}
	return finding{state: st, message: what, evidence: string(kind) + ": " + line, severity: sev}, true
}

// stderrLine classifies the interpreters' own error and warning lines.
func stderrLine(line string) (protocol.VerdictState, string, bool) {
	switch {
	case strings.HasPrefix(line, "error: "):
		if strings.HasPrefix(line[len("error: "):], languageContext) {
			return protocol.Normal, "", true
		}
		return protocol.Error, "Octave error", true
	case strings.HasPrefix(line, "warning: "):
		return octaveWarning(line[len("warning: "):])
	case strings.HasPrefix(line, "Traceback (most recent call last)"):
		return protocol.Error, "Python exception (traceback)", true
	}
	if cat, msg, ok := pythonWarning(line); ok {
		return pythonWarningState(cat, msg)
	}
	if pythonException(line) {
		return protocol.Error, "Python exception", true
	}
	return "", "", false
}

// octaveBenign are Octave warnings that say nothing about the computation's numbers.
var octaveBenign = []string{
	languageContext, "shadows a", "implicit conversion from numeric to char",
	"graphics_toolkit", "DISPLAY", "gnuplot", "fltk",
}

func octaveWarning(msg string) (protocol.VerdictState, string, bool) {
	if i := strings.Index(msg, "matrix singular to machine precision"); i >= 0 {
		if strings.Contains(msg[i:], "rcond") {
			return protocol.Warning, "Octave: nearly singular matrix", true
		}
		return protocol.Error, "Octave: singular matrix", true
	}
	if strings.Contains(msg, "Solving was not successful") {
		return protocol.Error, "Octave ODE solver failed", true
	}
	for _, b := range octaveBenign {
		if strings.Contains(msg, b) {
			return protocol.Normal, "", true
		}
	}
	if st, what, ok := solverMessage(msg); ok {
		return st, what, true
	}
	return protocol.Warning, "Octave warning", true
}

// pythonWarning splits a warnings-module line `path:lineno: Category: message`.
func pythonWarning(line string) (category, msg string, ok bool) {
	i := strings.Index(line, "Warning: ")
	if i < 0 {
		return "", "", false
	}
	end := i + len("Warning")
	start := i
	for start > 0 && isIdentByte(line[start-1]) {
		start--
	}
	// The category follows ": " after the line number (`a.py:4: RuntimeWarning: …`).
	if start < 2 || line[start-2:start] != ": " {
		return "", "", false
	}
	return line[start:end], line[end+2:], true
}

func pythonWarningState(cat, msg string) (protocol.VerdictState, string, bool) {
	switch cat {
	case "ODEintWarning":
		if strings.HasPrefix(msg, "Integration successful") || strings.HasPrefix(msg, "Nothing was done") {
			return protocol.Normal, "", true
		}
		return protocol.Error, "odeint failed", true
	case "RuntimeWarning":
		if st, what, ok := solverMessage(msg); ok {
			return st, what, true
		}
		for _, w := range []string{"overflow encountered", "invalid value encountered", "divide by zero encountered"} {
			if strings.HasPrefix(msg, w) {
				return protocol.Warning, "numpy: " + w, true
			}
		}
		return protocol.Warning, "Python RuntimeWarning", true
	case "IntegrationWarning", "LinAlgWarning", "OptimizeWarning", "ConvergenceWarning":
		if st, what, ok := solverMessage(msg); ok {
			return st, what, true
		}
		return protocol.Warning, "Python " + cat, true
	}
	if st, what, ok := solverMessage(msg); ok {
		return st, what, true
	}
	return protocol.Normal, "", true
}

// pythonException reports whether line is the last line of a traceback: a (dotted) class
// name ending in Error or Exception, alone or followed by ": message".
func pythonException(line string) bool {
	i := 0
	for i < len(line) && (isIdentByte(line[i]) || line[i] == '.') {
		i++
	}
	if i == 0 || (i < len(line) && line[i] != ':') {
		return false
	}
	name := line[:i]
	return strings.HasSuffix(name, "Error") || strings.HasSuffix(name, "Exception")
}

// solverLine classifies the Fortran integrators' messages and solver texts on either stream.
func solverLine(line string) (protocol.VerdictState, string, bool) {
	t := strings.TrimLeft(line, " \t")
	for _, p := range fortranPrefixes {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			switch {
			case containsFold(t, "warning..internal"), containsFold(t, "above warning has been issued"):
				return protocol.Warning, "integrator step size underflow (T + H = T)", true
			case containsFold(t, "a switch to the"), containsFold(t, "is sufficient for now"):
				return protocol.Normal, "", true
			}
			return protocol.Error, "integrator failure (" + strings.TrimRight(p, "-") + ")", true
		}
	}
	for _, p := range dopriMessages {
		if strings.Contains(t, p) {
			return protocol.Error, "dopri integrator failure", true
		}
	}
	return solverMessage(line)
}

var fortranPrefixes = []string{"lsoda--", "dlsode-", "dvode--", "zvode--", "daspk--", "dasrt--", "dassl--"}

// dopriMessages are dopri5/dop853's own prints (scipy's binary really says "T0O").
var dopriMessages = []string{"EXIT OF DOPRI5 AT X=", "EXIT OF DOP853 AT X=", "STEP SIZE TOO SMALL", "STEP SIZE T0O SMALL", "THE PROBLEM SEEMS TO BECOME STIFF"}

type solverText struct {
	text  string
	state protocol.VerdictState
	what  string
}

var solverTexts = []solverText{
	{"Required step size is less than spacing between numbers", protocol.Error, "ODE solver: step size too small"},
	{"step size becomes too small", protocol.Error, "ODE solver: step size too small"},
	{"Excess work done on this call", protocol.Error, "ODE solver: excess work"},
	{"epeated error test failures", protocol.Error, "ODE solver: repeated error test failures"},
	{"epeated convergence failures", protocol.Error, "ODE solver: repeated convergence failures"},
	{"Solving was not successful", protocol.Error, "ODE solver failed"},
	{"problem is probably stiff", protocol.Error, "ODE solver stopped: problem is stiff"},
	{"larger nsteps is needed", protocol.Error, "ODE solver: too many steps"},
	{"The iteration is not making good progress", protocol.Warning, "solver not making progress"},
	{"failed to converge", protocol.Warning, "solver failed to converge"},
	{"did not converge", protocol.Warning, "solver did not converge"},
	{"Maximum number of iterations has been exceeded", protocol.Warning, "solver hit its iteration limit"},
	{"Maximum number of function evaluations has been exceeded", protocol.Warning, "solver hit its evaluation limit"},
	{"has reached maxfev", protocol.Warning, "solver hit its evaluation limit"},
	{"Desired error not necessarily achieved", protocol.Warning, "optimizer lost precision"},
	{"Ill-conditioned matrix", protocol.Warning, "ill-conditioned matrix"},
	{"The integral is probably divergent", protocol.Warning, "quadrature: integral probably divergent"},
	{"roundoff error is detected", protocol.Warning, "quadrature: roundoff error"},
	{"maximum number of subdivisions", protocol.Warning, "quadrature: subdivision limit"},
}

func solverMessage(s string) (protocol.VerdictState, string, bool) {
	for _, m := range solverTexts {
		if strings.Contains(s, m.text) {
			return m.state, m.what, true
		}
	}
	return "", "", false
}

func isIdentByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// containsFold reports whether s contains sub (lower-case ASCII) ignoring ASCII case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
