// Package perception watches a running operation and says, while it runs, when it goes
// wrong — so that a diverging simulation, a loop spitting NaNs, an unstable controller, a
// stuck iteration, an SCF that sloshes, an MD run that explodes or a violated requirement is
// stopped at once instead of burning minutes until it ends or times out.
//
// A Monitor consumes the Observations a kernel or a job streams for one operation — stdout and
// stderr lines, lines of followed files, telemetry samples, resource samples, kernel events — and
// judges them with small deterministic detectors, in microseconds per observation and without
// allocating on the steady path. It is pure: no I/O, no goroutines, no clock of its own (every
// time comes from an Observation or from Tick), so a recorded stream replays to the same
// verdicts.
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
// # Software profiles
//
// What a run prints depends on the software, so the Monitor reads it through a Profile
// (Config.Profile; ProfileFor picks one from the cell's kernel and code, `labmate exec
// --profile` declares one). Perception is the one place a printed line becomes telemetry:
// kernels and schedulers send lines, and as telemetry only what code logs through the
// kernel's helper (labmate_log, a structured side channel). Every profile reads `name = value`
// pairs and prose pairs (`epoch 8 | loss nan`; ParseSamples) of stdout, stderr (where Python's
// logging and tqdm write) and followed files, after a logging prefix (`2026-12-05
// 10:00:01,123 INFO`, `INFO:root:`, `[INFO]`), and tables with a header — aligned columns,
// CSV (with units in the header: `T [K]`), pipe-separated, pandas frames, LAMMPS' thermo
// table — of stdout and followed files as telemetry, one series per column. On top of that:
//
//   - ProfileQE (Quantum ESPRESSO's pw.x, chosen for a cell that runs pw.x): scf_iteration,
//     scf_accuracy, total_energy, total_force and pressure as series; error blocks,
//     "convergence NOT achieved", "S matrix not positive definite", charge mismatches and an
//     SCF that diverges, sloshes or stalls as faults — stalled: 15 iterations without a 20%
//     improvement on its best while the accuracy is over 100 times conv_thr (see qe).
//   - ProfileLAMMPS (lmp): every thermo column of `one` and `multi` styles; ERROR lines, lost
//     and out-of-range atoms, an exploding temperature or energy, energy drift when the
//     code declares `fix … nve`, and a thermostatted temperature far from its target (see
//     lammps).
//   - ProfileOctave, ProfilePython, ProfileShell, ProfileGeneric: the common rules only.
//
// Parsed() hands the samples a profile read from a line to the caller, which streams them.
//
// # Adding a code
//
// A code's profile is one file of this package (qe.go, lammps.go; code_test.go holds a
// complete small one). Its init function calls registerCode with the profile's name, the
// aliases --profile accepts, runs — whether a word of a cell's or a job's code starts it
// (`vasp_std`), so that ProfileFor chooses it — and a reader, made for each operation, whose
// line method reads every line of the run: progress becomes telemetry through m.emit (the
// Monitor judges each sample with every detector, and hands it on through Parsed), fault
// signatures become findings through m.raise(detProfile, …) with the line as evidence and,
// like custodian's handlers, the documented fix as the correction; its sample method adds
// rules on the samples of any source. Nothing else changes: the CLI, the request's profile
// field, jobs and cells all go through ParseProfile and ProfileFor. What is shared with the
// detectors beyond that — a role for a code's series, a correction for a generic detector's
// verdict (Quantum ESPRESSO's scf_accuracy and conv_thr, LAMMPS' thermostat) — is an addition
// to roles.go or correction.go, not a requirement.
//
// Names are read as scientists print them: `||F||`, `|r|`, `dE/E0`, `||r||/||b||`, `KE+PE`,
// `train/loss`, `c_msd[4]` and `f(x)` are series names (in `name = value` pairs, prose pairs
// and table headers), with a unit in brackets after them (`E [eV] = …`, `T (K): …`); and a
// value is a number in any spelling — Fortran's `1.5D+02`, a unit glued to it (`300K`,
// `1.2eV`, `12%`), a count in prose (`epoch 3/100`) — non-finite ones included: nan, NaN,
// -nan, inf, -Inf, Infinity, the Microsoft runtime's 1.#INF, 1.#IND and 1.#QNAN, and
// Fortran's overflow `********` in a numeric field (+Inf). A progress bar redrawn with
// carriage returns (tqdm) is read redraw by redraw, and rows of bare numbers whose first
// column counts up are a table without a header, named by the code's print statement
// (`print(it, res, du)`, `printf('%d %e\n', k, err)`) or col1, col2, ….
//
// # Roles
//
// A number is judged by what it is for. Each series gets a Role when it first appears, with
// the evidence for it, which every verdict about the series carries (Verdict.Role):
//
//   - residual — should fall toward a tolerance: names such as res, residual, rnorm, ferr,
//     max_change, and the norms `||F||`, `|r|`, `|dx|`, `max|du|`, relative ones
//     (`||r||/||b||`); an optimiser's gradient norm (`||g||`, `|grad|`, gnorm,
//     first-order optimality; not a training run's grad_norm, which is noisy by nature);
//     Quantum ESPRESSO's scf_accuracy, whose tolerance is the
//     input's conv_thr (read from the cell's input and from pw.x's summary).
//   - loss — should fall, noisily and with no tolerance: loss, train_loss, val/loss, cost,
//     objective, nll, mse, chi2, chi2/dof, cross_entropy, kl; and a series declared with
//     `--watch 'x decreasing'`.
//   - conserved quantity — should stay put: a relative error of an invariant (`dE/E0`,
//     rel_energy_error); a total energy (E_tot, Etot, energy, E, hamiltonian) when the code
//     names a conservative integrator (Verlet, leapfrog, symplectic, NVE, Hamiltonian) or
//     mechanical dynamics (an orbit, an oscillator, a pendulum, a Morse potential) and no
//     damping, friction, thermostat, decay or forcing (also spelt as a sum: KE+PE,
//     E_kin+E_pot); LAMMPS' TotEng under `fix nve` alone; and linear invariants, which any
//     consistent scheme keeps to rounding: total mass or charge, sum(p), sum_prob, and mass,
//     charge, a total or a sum in a code that says it conserves them; a quantity over its
//     start (E/E0, M/M0) when the code says it is conserved or integrates conservatively;
//     a total in percent (`sum [%]`); and the error of a balance (imbalance, mass_error),
//     which stays at zero.
//   - controlled quantity — tracks a setpoint the code declares: LAMMPS' Temp under a
//     thermostat on all atoms (`fix … nvt/npt temp Tstart Tstop Tdamp`, langevin,
//     temp/berendsen, temp/csvr, temp/rescale), the target ramping from Tstart to Tstop along
//     the run; and a process value printed on one line with its reference (`temperature=…
//     setpoint=…`, `T_reactor=… T_reactor_set=…`, a table with y and ref columns).
//   - positive quantity (an absolute temperature: T[K], T_K, LAMMPS' Temp), non-negative
//     amount (population, stock, mass, concentration, conc_A, prey), probability (prob,
//     acceptance_rate, fraction, min(p), p_min, p3: [0, 1]), finite quantity (a
//     log-likelihood: logL, loglik, lnL, log_prob, logZ, elbo, log_marginal).
//   - bounded state norm — the norm of a simulation's state (`max|u|`, `||u||`, `|x|`,
//     umax): a stable scheme keeps it bounded.
//   - unknown — everything else (`|x|`, `err`, `abs_err`, a PID's error, a printed result):
//     only the shape rules apply, with their highest bars.
//
// The role lowers or raises the bars of the detectors below and adds the role rules (stall,
// drift, setpoint, range). A declared bound (`--watch 'N < 1e20'`) turns growth off.
//
// # Corrections
//
// Like custodian's per-code error handlers, a fault verdict carries the fix the code's
// documentation gives, when one is known, in Verdict.Correction — the agent's repair reads it
// and `labmate exec` prints it after the verdict ("suggested fix: …"). Quantum ESPRESSO's SCF
// that sloshes, diverges, stalls or does not converge: lower mixing_beta (half the declared
// value, at most 0.3), local-TF mixing, smearing for a metal with fixed occupations, empty
// bands, more iterations when it was still converging; "charge is wrong": smearing; an
// overlap matrix not positive definite: check the positions, or diagonalization = 'cg'.
// LAMMPS' lost atoms, exploding temperature or energy, NVE drift: a smaller timestep (the
// declared one halved at least) and neighbor lists checked every step, and a thermostat
// Tdamp shorter than 100 timesteps raised; a temperature far from its thermostat's target:
// check the thermostat's group, Tdamp and units. A conserved energy drifting under explicit
// Euler: a symplectic integrator or a much smaller step. A loss diverging: a lower learning
// rate; a residual diverging or stalling: damping or a line search; a time-stepping scheme
// blowing up: a step below its stability limit. See correction.go.
//
// # Detectors
//
//   - language: what Octave, Python, numpy, scipy and the Fortran integrators print when
//     something fails — Octave `error:` and `warning:` (a singular matrix is an Error, a
//     nearly singular one a Warning), Python tracebacks, numpy RuntimeWarnings (overflow,
//     invalid value, divide by zero: Warning), ODE integrators giving up (step size too small,
//     excess work, repeated convergence failures: Error), iterative solvers stopping short
//     (not making good progress, failed to converge: Warning).
//   - profile: the software profile's fault signatures (above).
//   - nonfinite, in context: a series with a role (above) that had finite values and turns
//     NaN or ±Inf is an Error at once (a log-likelihood underflowing to -inf); a series of
//     unknown role turning NaN is a Warning, and an Error when the next sample is NaN too;
//     ±Inf is often a value (an infinite gain margin, a search's initial best): a Warning,
//     and an Error when it stays infinite for three samples in a row; a series non-finite
//     from its first sample is a printed result and Normal, and one that returns to the
//     non-finite value it started with starts over (a profile scan for the next data set).
//     Unnamed printed numbers (a matrix row): NaN on three
//     lines over a second is an Error, once a Warning. Prose that merely mentions NaN does
//     not count.
//   - divergence: sustained exponential growth at any rate — log|x| climbing along a straight
//     line, with consistent, non-slowing steps, over the last 8, 16, 32 or 64 samples or the
//     whole run thinned to 32 points, by three decades (two for a residual or a loss): a
//     residual or a loss is an Error once it is 100 times its best, a bounded state norm once
//     it is 1000 times its first value over 24 samples or more; any other series is a
//     Warning once it is 10³ times its initial scale and an Error at 10¹⁰ times. No absolute
//     bound by default (divergence_bound sets one). A --watch bound on the series (`N <
//     1e20`, `N in [0, 1e20]`) replaces it: growth below the bound was declared.
//   - stall (residuals): over the last 25 samples at most a fifth were new bests, the best
//     improved less than twofold, the residual turned back at least every fourth step and its
//     median is 1.5 times its best or more — it wanders instead of converging: Error. So is a
//     residual that fell less than two decades from its largest value and then went 40
//     samples (and as many as it took to get there) without a new best 10% below it, bouncing
//     around above it (a subgradient method at a kink), and one that repeats its value 13
//     times in a row (restarted GMRES stagnating at the printed precision) or cycles through
//     two to four values as long (Newton flipping between two points). A residual at its rounding floor (eight decades
//     below its largest value), a plateau at its best and a slow but steady residual stay
//     Normal. A loss (losses: judged in samples) still above half its largest value, settled onto a
//     value with shrinking steps and then repeats it 12 times in a row has stopped learning
//     (dead units, vanishing gradients): Error; a loss creeping off a plateau in its last
//     digit, and one repeating its floor, stay Normal. In a code that samples a Markov chain
//     (Metropolis, MCMC, Gibbs, HMC), two series of the chain (a parameter and its
//     log-density) that moved and then repeat their exact values 40 times in a row are a
//     chain that rejects every proposal: Error.
//   - drift (conserved quantities): relative drift of 5% or more (|dE/E0|, or |E − E₀|/|E₀|;
//     0.1% for a linear invariant: mass, charge, a probability sum) for 10 samples in a row, from the 20th sample, and 1.5 times the largest drift of the
//     first half of the run — secular, not the bounded error of a symplectic scheme: Error.
//   - setpoint (controlled quantities): LAMMPS' Temp more than 50% from its thermostat's
//     target for 15 thermo rows in a row spanning five Tdamp (5 rows, with no Tdamp to wait
//     for, when it is below a thousandth of the target: atoms at rest, which only Langevin
//     could heat, within a Tdamp): Error. A process value printed with its
//     reference whose gap has not closed for 20 samples after the setpoint last changed,
//     staying above 20% of the step and 10% of the setpoint all along (an actuator at its
//     limit, a missing integral term): Error. A loop still settling, a noisy process held at
//     its setpoint and a slow, steady approach stay Normal.
//   - collapse (acceptance rates: acc_rate, acceptance, p_accept…): a sampler's acceptance
//     that was 10% or more and then stays at 5% or less for 10 samples in a row, averaging
//     1% or less — a frozen chain: Error. An annealing schedule (the code says anneal,
//     cooling, quench) is not judged.
//   - range: an absolute temperature below zero, a probability (that started in [0, 1])
//     outside [0, 1], two samples in a row: Error.
//   - oscillation: a series whose swings grow steadily by 1.2× or more, three times in a row,
//     to twice anything seen before: Error (an unstable loop). Damped, steady, building-up
//     and noisy series are Normal.
//   - stagnation: no output, telemetry or followed-file line for 10 s (or Cadence = 3 times
//     the longest gap the run already had, or past the declared Expectation.Silence) while the
//     process burns CPU: Warning, Error at 30 s (or twice the stretched limit). A run that
//     reported at a regular pace (10 outputs over 2 s or more) and falls silent for 8 times
//     its average gap and 3 times its longest (at least 4 s; 8 s for Quantum ESPRESSO and
//     LAMMPS, which have quiet phases) has stopped reporting: an Error, busy (a loop that no
//     longer prints) or idle (blocked, waiting on something that does not come). A declared silence turns that off, and a run that
//     announced a long computation after a line or a burst has no cadence. Telemetry that
//     keeps coming but in which nothing changes for 40 samples and 1 s — repeating values, or
//     cycling through two to four values (Newton flipping between two points) — : Error; an integrator
//     whose step collapsed 10⁴-fold to 10⁻⁵ of t for a second and 20 samples (it crawls): Error.
//     A batch job (Expectation.Batch) is the other way round: its CPU time rising is progress,
//     like its output and its followed files growing, and only a job that does none of these
//     is silent — Warning after 5 min, Error after 15 min, or a quarter and a half of its
//     declared wall time.
//   - resources: resident memory at 80% of the limit: Warning, 95%: Error; output at 80% of
//     its limit: Warning.
//   - constraint: a watch expression given with the operation is violated: Error.
//
// Each detector's doc comment explains its thresholds and why. Thresholds tunes them for one
// run, and turns single detectors off (Thresholds.Off) without turning perception off;
// Thresholds.Set and ParseThresholds read the `KEY=VALUE` settings of `labmate exec
// --perception` and of the request's `perception` object (silence=2m, scf_stall=30,
// residual_stall=40, drift_tolerance=0.1, divergence=off, stall=off).
//
// # Watch expressions
//
// `labmate exec --watch EXPR` (repeatable) states what must hold while the code runs. EXPR
// is about one telemetry series: samples logged with the kernel helper (Octave
// `labmate_log('x', x)`, Python `labmate.log("x", x)`), parsed from printed `x = value`
// lines, or a column of a printed table. The grammar:
//
//	x < 1e6                 comparison with a number: < <= > >= == !=
//	overshoot_pct <= 5
//	finite(x)               no NaN or Inf
//	temperature in [15, 27] inside a closed interval
//	residual decreasing     monotone, judged with tolerance (below)
//	energy increasing
//
// Names start with a letter or "_" and continue with letters, digits, "_" or "." (or are a
// punctuated quantity's name: `||F|| < 1e-3`, `dE/E0 < 0.01`); numbers are
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
// reason interrupted, and the verdict goes with it as evidence for the agent's repair — also
// when the cell finished before the interrupt took hold (package operation).
//
// # Known limits
//
//   - Silence is judged only with resource samples (to tell busy from waiting). A busy silence
//     is measured in CPU time, so on a machine that gives the run a tenth of a core a hang is
//     caught ten times later (and a quiet computation is never stopped for being slow). A run
//     with no cadence — one line, then a silent loop — is judged after 4 s (2 s of CPU, or
//     runnable throughout) when
//     its code holds an open-ended loop (while, do … until) and its memory stays flat; a
//     healthy quiet while loop that keeps its memory flat (a simulation that accumulates only
//     a few numbers) and runs longer than that must declare its silence. Without such a loop
//     the run is judged only after 10 s and stopped after 30 s: it looks like a quiet
//     computation that forgot to declare its silence.
//   - A progress bar redrawn with carriage returns is read at each redraw, but a redraw is
//     complete (and read) only when the next one, or a newline, starts.
//   - A residual that stagnates with noise below its printed resolution's last digit but not
//     exactly (0.1% over 40 samples) is not judged: it cannot be told from a plateau before a
//     drop. A loss that settles far above zero and repeats itself is judged as stopped
//     learning only while it is above half its largest value.
//   - Rows of bare numbers without a header are a table only when their first column counts
//     up, from their third row; their columns take the names of the code's print statement
//     (`print(it, res)`) only when it prints the values bare, else col1, col2, … with no
//     role. Rows with placeholders or flags in their cells (IPOPT's `-` and `1.00e+00f`)
//     end a table.
//   - Memory is judged only against a known limit (Resource.MemoryLimit or
//     Thresholds.MemoryLimit); a single huge allocation fails before any sample shows it.
//   - A printed table with legitimate missing values (NaN cells in a column that had
//     numbers) is reported as non-finite.
//   - A sweep whose NaN result repeats right after a finite one (a crossover frequency that
//     exists for one design and not for the next two) looks like a series turning NaN.
//   - A line of as many words as a table's columns, printed right before a row, is read as a
//     new header.
//   - LAMMPS writes its screen output and log through C stdio: through a pipe they arrive in
//     4 KiB blocks unless the input says `thermo_modify flush yes` (or the command runs under
//     `stdbuf -oL`); perception sees each block when it arrives.
//   - The NVE drift rule knows the ensemble only from the cell's code and echoed input; an
//     input file written elsewhere leaves it off.
//   - A search that prints only its best-so-far value looks frozen while it still explores.
//   - A growing oscillation is caught at its eighth swing, about seven half-periods after it
//     starts: the price of not mistaking noise for instability.
//   - Roles come from names, the profile and the code's declarations: a residual printed as
//     `err` or `x`, or a total energy without a word about the integrator, has no role, and
//     slow growth of a series of unknown role is an Error only ten decades above its start.
//   - A thermostat target written with variables (`fix 1 all nvt temp ${T} ${T} 0.1`) is read
//     when the variable is a number (`variable T equal 300`, `lmp -var T 300`), not when it is
//     an expression; a controller's reference is paired with its process value only when both are
//     printed on one line, and a ramping setpoint is not judged.
//
// # Escalation
//
// Some windows are ambiguous by design — exponential growth that may still saturate, a nearly
// singular matrix, a solver that stopped short. An Escalator hands such Warning verdicts (see
// Ambiguous), with the Monitor's recent Window, to a Judge (an LLM, plugged in by the agent),
// at most once per interval. With no Judge nothing is escalated.
package perception
