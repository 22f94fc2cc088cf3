// Package perception watches a running operation and says, while it runs, when it goes
// wrong — so that a diverging simulation, a loop spitting NaNs, an unstable controller, a
// stuck iteration or a violated requirement is stopped at once instead of burning minutes
// until it ends or times out.
//
// A Monitor consumes the Observations a kernel streams for one operation — stdout and stderr
// lines, telemetry samples, resource samples, kernel events — and judges them with small
// deterministic detectors, in microseconds per observation and without allocating on the
// steady path. It is pure: no I/O, no goroutines, no clock of its own (every time comes from
// an Observation or from Tick), so a recorded stream replays to the same verdicts.
//
// # Verdicts
//
// A Verdict has a state — Normal, Warning or Error —, the detector that decided it, a message,
// evidence (at most five short items: the offending lines or samples), a severity in [0, 1]
// (Warning 0.3–0.6, Error 0.7–1) and a suggested action: continue for Normal, annotate for
// Warning, interrupt for Error. The overall verdict is the worst any detector reports.
// Observe and Tick return a verdict only when the overall verdict changes (its state or its
// detector), never per line. Most findings are events and stay for the rest of the operation
// (a warning printed once is still relevant); two are conditions that clear — resource
// pressure, and a busy silence when output resumes. An Error is latched: the operation is
// being interrupted, and the verdict no longer changes (later evidence from the same detector
// is still added, up to five items).
//
// # Detectors
//
//   - language: what Octave, Python, numpy, scipy and the Fortran integrators print when
//     something fails — Octave `error:` and `warning:` (a singular matrix is an Error, a
//     nearly singular one a Warning), Python tracebacks, numpy RuntimeWarnings (overflow,
//     invalid value, divide by zero: Warning), ODE integrators giving up (step size too small,
//     excess work, repeated convergence failures: Error), iterative solvers stopping short
//     (not making good progress, failed to converge: Warning).
//   - nonfinite: NaN or ±Inf in a telemetry sample, or printed as a number (`x = NaN`, a
//     matrix row with Inf): Error. Prose that merely mentions NaN does not count.
//   - divergence: a series growing exponentially (three decades over the 16-sample window,
//     with consistent, non-slowing steps): Warning once it is 10³ times its initial scale,
//     Error at 10¹⁰ times, or at once when it reaches 1e100.
//   - oscillation: a series whose swings grow steadily by 1.2× or more, three times in a row,
//     to twice anything seen before: Error (an unstable loop). Damped, steady, building-up
//     and noisy series are Normal.
//   - stagnation: no output or telemetry for 10 s (or past the declared Expectation.Silence)
//     while the process burns CPU: Warning, Error at 30 s (or twice the declared silence);
//     telemetry that keeps coming but in which nothing changes for 50 samples and 1 s: Error.
//   - resources: resident memory at 80% of the limit: Warning, 95%: Error; output at 80% of
//     its limit: Warning.
//   - constraint: a watch expression given with the operation is violated: Error.
//
// Each detector's doc comment explains its thresholds and why; Thresholds tunes them.
//
// # Watch expressions
//
// `labmate exec --watch EXPR` (repeatable) states what must hold while the code runs. EXPR
// is about one telemetry series: samples logged with the kernel helper (Octave
// `labmate_log('x', x)`, Python `labmate.log("x", x)`) or parsed from printed `x = value`
// lines. The grammar:
//
//	x < 1e6                 comparison with a number: < <= > >= == !=
//	overshoot_pct <= 5
//	finite(x)               no NaN or Inf
//	temperature in [15, 27] inside a closed interval
//	residual decreasing     monotone, judged with tolerance (below)
//	energy increasing
//
// Names start with a letter or "_" and continue with letters, digits, "_" or "."; numbers are
// decimal with optional sign and exponent. A comparison, interval or finite constraint is
// violated by a single sample (for a vector sample: by any element). A monotone constraint is
// violated when the series moves the wrong way three times in a row by more than a small
// tolerance (10⁻⁶ of the values plus 10⁻⁹ of the largest magnitude reached), so roundoff
// and an occasional noisy step do not trip it; for a vector it follows the largest |element|.
// A malformed expression is rejected with its problem and column:
//
//	watch "x <": expected a number after "<" at column 4
//	watch "x ~ 3": expected a comparison (< <= > >= == !=), "in", "decreasing" or "increasing" after "x", found "~" at column 3
//
// # Hot-Fix
//
// Each operation runs under a Hot-Fix policy (protocol.Hotfix): off observes only; on_error,
// the default, interrupts on an Error verdict; on_warning on a Warning or an Error. Interrupts
// applies the policy. On an interrupt the kernel keeps its workspace, the operation fails with
// reason interrupted, and the verdict goes with it as evidence for the agent's repair.
//
// # Known limits
//
//   - Silence is judged only with resource samples (to tell busy from waiting), and only after
//     10 s by default: a silent hang is stopped at the earliest after 30 s unless the
//     operation declares a shorter Thresholds.SilenceError.
//   - Memory is judged only against a known limit (Resource.MemoryLimit or
//     Thresholds.MemoryLimit); a single huge allocation fails before any sample shows it.
//   - A printed table with legitimate missing values (NaN cells) is reported as non-finite.
//   - A search that prints only its best-so-far value looks frozen while it still explores.
//   - A growing oscillation is caught at its eighth swing, about seven half-periods after it
//     starts: the price of not mistaking noise for instability.
//
// # Escalation
//
// Some windows are ambiguous by design — exponential growth that may still saturate, a nearly
// singular matrix, a solver that stopped short. An Escalator hands such Warning verdicts (see
// Ambiguous), with the Monitor's recent Window, to a Judge (an LLM, plugged in by the agent),
// at most once per interval. With no Judge nothing is escalated.
package perception
