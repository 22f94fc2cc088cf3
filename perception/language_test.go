package perception

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

// The lines below were printed by Octave 7.3, Python 3.11 with numpy 1.24 and scipy 1.10 on
// failing (and succeeding) code, or taken verbatim from their sources and binaries.
func TestLanguage(t *testing.T) {
	const (
		out = protocol.ObsStdout
		err = protocol.ObsStderr
		N   = protocol.Normal
		W   = protocol.Warning
		E   = protocol.Error
	)
	tests := []struct {
		kind protocol.ObservationKind
		line string
		want protocol.VerdictState // N: no finding
	}{
		// Octave errors and their context.
		{err, "error: fzero: not a valid initial bracketing", E},
		{err, "error: integrate_adaptive: Solving was not successful.  The iterative integration loop exited at time t = 0.999968", E},
		{err, "error: called from", N},
		{err, "    fzero at line 229 column 5", N},
		{err, "error: 'undefined_thing' undefined", E},
		{out, "error: 1.234e-03", N}, // a program reporting its error estimate
		{out, "error: called from", N},
		// Octave warnings.
		{err, "warning: matrix singular to machine precision", E},
		{err, "warning: matrix singular to machine precision, rcond = 1.24676e-18", W},
		{err, "warning: inverse: matrix singular to machine precision, rcond = 1e-17", W},
		{err, "warning:  Solving was not successful.  The iterative integration loop exited at time t = 0.999968 before the endpoint at tend = 1.500000 was reached.  This may happen if the stepsize becomes too small.  Try to reduce the value of 'InitialStep' and/or 'MaxStep' with the command 'odeset'.", E},
		{err, "warning: called from", N},
		{err, "warning: a custom warning with id", W},
		{err, "warning: function ./sum.m shadows a core library function", N},
		{err, "warning: implicit conversion from numeric to char", N},
		{err, "warning: sqp: QP subproblem failed to converge in 200 iterations", W},
		{out, "warning: matrix singular to machine precision", N}, // only believed on stderr
		// lsode in Octave: its message, as a program prints it, and DLSODE's own output.
		{out, "repeated convergence failures (t = 0.999999; perhaps bad Jacobian supplied or wrong choice of integration method or tolerances)", E},
		{out, " DLSODE-  Warning..internal T (=R1) and H (=R2) are", W},
		{out, "       such that in the machine, T + H = T on the next step  ", N},
		{out, "      In above,  R1 =  0.9999994113824D+00   R2 =  0.4675403580658D-16", N},
		{out, " DLSODE-  Above warning has been issued I1 times.  ", W},
		{out, " DLSODE-  At T (=R1) and step size H (=R2), the    ", E},
		{err, " DLSODE-  At T (=R1) and step size H (=R2), the    ", E},
		// Python tracebacks and exceptions.
		{err, "Traceback (most recent call last):", E},
		{err, `  File "<cell 3>", line 19, in <module>`, N},
		{err, "numpy.linalg.LinAlgError: Singular matrix", E},
		{err, "ZeroDivisionError: float division by zero", E},
		{err, "SyntaxError: invalid syntax", E},
		{err, "RuntimeError: Failed to converge after 50 iterations, value is 2.159514728084078.", E},
		{err, "KeyboardInterrupt", N},
		{err, "labmate: bad telemetry sample: x: value \"a\" is not a number", N},
		{out, "Traceback (most recent call last):", N}, // printed by the program itself
		// numpy RuntimeWarnings.
		{err, "/tmp/perc/a.py:4: RuntimeWarning: overflow encountered in multiply", W},
		{err, "/tmp/perc/a.py:5: RuntimeWarning: invalid value encountered in divide", W},
		{err, "/tmp/perc/a.py:6: RuntimeWarning: divide by zero encountered in divide", W},
		{err, "<cell 2>:7: RuntimeWarning: overflow encountered in exp", W},
		{err, "/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py:3464: RuntimeWarning: Mean of empty slice.", W},
		{err, "  np.array([1e308])*10", N},
		{err, "  warnings.warn(msg, RuntimeWarning)", N},
		// scipy.
		{err, "/usr/lib/python3/dist-packages/scipy/integrate/_odepack_py.py:248: ODEintWarning: Excess work done on this call (perhaps wrong Dfun type). Run with full_output = 1 to get quantitative information.", E},
		{err, "/usr/lib/python3/dist-packages/scipy/integrate/_odepack_py.py:248: ODEintWarning: Illegal input detected (internal error). Run with full_output = 1 to get quantitative information.", E},
		{err, "/usr/lib/python3/dist-packages/scipy/integrate/_odepack_py.py:251: ODEintWarning: Integration successful.", N},
		{err, "/usr/lib/python3/dist-packages/scipy/integrate/_ode.py:1179: UserWarning: dopri5: step size becomes too small", E},
		{err, "/usr/lib/python3/dist-packages/scipy/integrate/_ode.py:1011: UserWarning: vode: Excess work done on this call. (Perhaps wrong MF.)", E},
		{err, "/usr/lib/python3/dist-packages/scipy/integrate/_ode.py:1348: UserWarning: lsoda: Excess work done on this call (perhaps wrong Dfun type).", E},
		{err, "/usr/lib/python3/dist-packages/scipy/optimize/_minpack_py.py:178: RuntimeWarning: The iteration is not making good progress, as measured by the ", W},
		{err, "<cell 1>:3: IntegrationWarning: The maximum number of subdivisions (50) has been achieved.", W},
		{err, "<cell 1>:3: LinAlgWarning: Ill-conditioned matrix (rcond=1.2e-17): result may not be accurate.", W},
		{err, "<cell 1>:3: OptimizeWarning: Covariance of the parameters could not be estimated", W},
		{err, "<cell 1>:3: DeprecationWarning: `np.float` is a deprecated alias", N},
		{err, "<cell 1>:3: FutureWarning: the default will change", N},
		{err, "<cell 1>:3: UserWarning: some plotting backend message", N},
		{out, "Required step size is less than spacing between numbers.", E},
		{out, "-1 Required step size is less than spacing between numbers. 0.9999999", E},
		{out, "The solver successfully reached the end of the integration interval.", N},
		{out, " lsoda--  at start of problem, too much accuracy     ", E},
		{out, "       requested for precision of machine..  see tolsf (=r1) ", N},
		{out, " lsoda--  warning..internal t (=r1) and h (=r2) are", W},
		{out, " lsoda-- a switch to the bdf (stiff) method has occurred     ", N},
		{out, " lsoda--  at t (=r1) and step size h (=r2), the    ", E},
		{out, " DVODE--  At T (=R1) and step size H (=R2), the error", E},
		{out, " EXIT OF DOPRI5 AT X=        0.1000E+01", E},
		{out, " STEP SIZE T0O SMALL, H=  1e-17", E},
		{out, "Optimization terminated successfully.", N},
		{out, "Warning: Maximum number of iterations has been exceeded.", W},
		{out, "Warning: Desired error not necessarily achieved due to precision loss.", W},
		{out, "newton failed to converge after 50 iterations", W},
		{out, "pcg: the algorithm did not converge", W},
		// Ordinary output.
		{out, "t=0.05 x=+0.987650 v=-0.490525 energy=4.997568e+00", N},
		{out, "iter 12  mid = 0.739013671875  width = 2.441406e-04", N},
		{out, "", N},
		{err, "", N},
	}
	var l language
	for _, tt := range tests {
		f, ok := l.line(tt.kind, tt.line)
		got := protocol.Normal
		if ok {
			got = f.state
		}
		if got != tt.want {
			t.Errorf("%s %q: state %s, want %s (%q)", tt.kind, tt.line, got, tt.want, f.message)
		}
		if ok && f.evidence != string(tt.kind)+": "+tt.line {
			t.Errorf("%s %q: evidence %q", tt.kind, tt.line, f.evidence)
		}
	}
}

// TestLanguageStream runs a Python traceback through a Monitor: one verdict, latched, with the
// exception line added to its evidence.
func TestLanguageStream(t *testing.T) {
	m := newMonitor(t, nil)
	obs := []*protocol.Observation{
		stdout(0, "solving"),
		stderr(1, "<cell 1>:4: RuntimeWarning: divide by zero encountered in log"),
		stderr(1.1, "  y = np.log(x)"),
		stderr(2, "Traceback (most recent call last):"),
		stderr(2, `  File "<cell 1>", line 9, in <module>`),
		stderr(2, "    np.linalg.solve(A, b)"),
		stderr(2, "numpy.linalg.LinAlgError: Singular matrix"),
	}
	got := feed(m, obs)
	want := []emitted{{1, protocol.Warning, DetectorLanguage}, {3, protocol.Error, DetectorLanguage}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
	}
	v := m.Verdict()
	wantV := protocol.Verdict{
		State:    protocol.Error,
		Detector: DetectorLanguage,
		Message:  "Python exception (traceback)",
		Evidence: []string{"stderr: Traceback (most recent call last):", "stderr: numpy.linalg.LinAlgError: Singular matrix"},
		Severity: 1,
		Action:   protocol.ActionInterrupt,
	}
	if diff := cmp.Diff(wantV, v); diff != "" {
		t.Errorf("Verdict mismatch (-want +got):\n%s", diff)
	}
}
