package perception

import (
	"slices"
	"strconv"
	"strings"
)

// Role is what a telemetry series is for: what a scientist watching the stream expects it to
// do. The numeric detectors judge a series against its role and the whole run, not only
// against the shape of its last few numbers.
type Role uint8

// Roles.
const (
	// RoleUnknown: nothing is known about the series; only shape-based rules apply, with the
	// highest bars (a printed result may grow, settle or wander as it likes).
	RoleUnknown Role = iota
	// RoleResidual should fall toward a tolerance: a nonlinear or linear solver's residual
	// (`||F||`, `|r|`, `res`, `residual`), an update norm (`|dx|`), Quantum ESPRESSO's
	// estimated scf accuracy. Growth is judged with a low bar, and a residual that stops
	// improving on its best while it bounces far above it has stalled.
	RoleResidual
	// RoleLoss should fall, but noisily and with no tolerance to reach: a training loss, a
	// cost, an objective. Sustained growth is judged with a low bar; plateaus are normal.
	RoleLoss
	// RoleConserved should stay put: the relative energy error of an integrator (`dE/E0`),
	// the total energy under a conservative (NVE, symplectic, Hamiltonian) integrator. It is
	// judged by its relative drift.
	RoleConserved
	// RoleControlled tracks a setpoint the code declares: LAMMPS' thermostat target (`fix …
	// nvt temp 300 300 0.1`). It is judged by a sustained distance from that setpoint.
	RoleControlled
	// RolePositive is a physical quantity that cannot be negative: an absolute temperature.
	RolePositive
	// RoleProbability lies in [0, 1]: a probability, an acceptance rate, a fraction.
	RoleProbability
	// RoleFinite must stay finite: a log-likelihood, a log-probability, an ELBO.
	RoleFinite
	// RoleNonNegative is an amount that cannot be negative: a population, a stock, a mass, a
	// concentration, a density, a height of liquid.
	RoleNonNegative
	// RoleBounded is the norm of a simulation's state (`max|u|`, `||u||`, `|x|`): a stable
	// scheme keeps it bounded, so sustained exponential growth of three decades is an
	// instability.
	RoleBounded
)

var roleNames = [...]string{"unknown", "residual", "loss", "conserved quantity", "controlled quantity", "positive quantity", "probability", "finite quantity", "non-negative amount", "bounded state norm"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// roleInfo is a series' role with the evidence for it.
type roleInfo struct {
	role     Role
	why      string  // why the role was assigned, for the verdict
	relative bool    // conserved: the series is already a relative error (dE/E0)
	linear   bool    // conserved: a linear invariant (mass, charge, probability), which a consistent scheme keeps to rounding
	zero     bool    // conserved: the error of a balance, which stays at zero (an absolute imbalance)
	tol      float64 // residual: the tolerance it should reach (0: unknown)
}

// describe names the role and its evidence: `residual (its name "||F||" is the norm of …)`.
func (ri *roleInfo) describe() string {
	if ri.why == "" {
		return ri.role.String()
	}
	return ri.role.String() + " (" + ri.why + ")"
}

// runContext is what a Monitor knows about the run beyond the stream: from the cell's code.
type runContext struct {
	dynamics     string // the code integrates a mechanical system: orbit, oscillator, pendulum…
	conservative bool   // the code names a conservative integrator (verlet, leapfrog, symplectic, NVE, Hamiltonian)
	dissipative  bool   // the code names damping, friction, a thermostat or forcing
	annealing    bool   // the code anneals (cooling schedule): acceptance falls to 0 by design
	conservation bool   // the code says it conserves something (mass, charge, probability)
	sampler      bool   // the code samples a Markov chain (Metropolis, MCMC, Gibbs, HMC)
	openLoop     bool   // the code holds an open-ended loop (hasOpenLoop)
	integrator   string
}

// conservativeWords and dissipativeWords are looked up in the lowercased code.
var (
	conservativeWords = []string{"verlet", "leapfrog", "leap-frog", "leap_frog", "symplectic", "hamiltonian", "nve", "energy conserv", "conserves energy", "conserved energy"}
	dissipativeWords  = []string{"damp", "friction", "drag", "dissipat", "viscous", "viscosity", "langevin", "thermostat", "forcing", "forced", "driven", "nvt", "npt",
		"decay", "relax", "resist", "absorb", "brake", "source term"}
	dynamicsWords = []string{"orbit", "kepler", "planet", "oscillat", "pendulum", "morse", "spring", "molecular dynamics", "n-body", "nbody", "hamilton", "trajectory", "anharmonic"}
)

// readContext scans the cell's code once, at New.
func readContext(code string) runContext {
	if code == "" {
		return runContext{}
	}
	lc := strings.ToLower(code)
	var c runContext
	for _, w := range conservativeWords {
		if strings.Contains(lc, w) {
			c.conservative, c.integrator = true, w
			break
		}
	}
	for _, w := range dissipativeWords {
		if strings.Contains(lc, w) {
			c.dissipative = true
			break
		}
	}
	for _, w := range dynamicsWords {
		if strings.Contains(lc, w) {
			c.dynamics = w
			if w == "oscillat" {
				c.dynamics = "oscillator"
			}
			break
		}
	}
	for _, w := range []string{"anneal", "cooling", "quench", "temperature schedule", "t_schedule"} {
		c.annealing = c.annealing || strings.Contains(lc, w)
	}
	for _, w := range []string{"conserv", "mass balance", "normalis", "normaliz"} {
		c.conservation = c.conservation || strings.Contains(lc, w)
	}
	for _, w := range []string{"not conserv", "non-conserv", "nonconserv", "no longer conserv", "isn't conserv", "is not conserv"} {
		c.conservation = c.conservation && !strings.Contains(lc, w)
	}
	for _, w := range []string{"metropolis", "mcmc", "markov chain", "hastings", "gibbs", "hamiltonian monte carlo", "hmc", "emcee"} {
		c.sampler = c.sampler || strings.Contains(lc, w)
	}
	c.sampler = c.sampler && !c.annealing
	if !c.conservative && strings.Contains(lc, "euler") && !c.dissipative {
		c.integrator = "euler"
	}
	c.openLoop = hasOpenLoop(lc)
	return c
}

// normName lowercases a series name and strips norm bars and unit suffixes in brackets:
// "||F||" → "f" (norm), "T[K]" → "t" (unit "k"), "E_tot" → "e_tot".
func normName(name string) (base string, norm bool, unit string) {
	s := strings.ToLower(strings.TrimSpace(name))
	if strings.HasPrefix(s, "|") {
		if j := strings.LastIndexByte(s, '|'); j > 0 {
			s = s[:j+1] // drop a subscript: ||F||_2, |r|_inf
		}
		t := strings.Trim(s, "|")
		if t != "" && len(s)-len(t) >= 2 {
			s, norm = t, true
		}
	}
	for _, br := range [][2]string{{"[", "]"}, {"(", ")"}} {
		if i := strings.LastIndex(s, br[0]); i > 0 && strings.HasSuffix(s, br[1]) {
			u := s[i+1 : len(s)-1]
			// a known unit, or any unit after a blank (`E [J/m]`); `f(x)` and `c_msd[4]` are names
			if in1(u, "k", "kelvin", "c", "degc", "ev", "j", "kj", "kj/mol", "kcal/mol", "ry", "ha", "s", "ps", "fs", "m", "kg", "pa", "bar", "atm", "au", "nm", "a", "%", "1") ||
				s[i-1] == ' ' && isUnit(u) {
				unit, s = u, s[:i]
			}
		}
	}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "norm(") && strings.HasSuffix(s, ")") {
		s, norm = s[5:len(s)-1], true
	}
	return s, norm, unit
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Name lists for roles (lowercased, norm bars and bracketed units stripped).
var (
	residualNames = []string{"res", "resid", "residual", "residue", "rnorm", "resnorm", "res_norm", "resnrm", "norm_res", "residual_norm",
		"fnorm", "normf", "norm_f", "f_norm", "r_norm", "normr", "norm_r", "relres", "rel_res", "relative_residual", "res_rel",
		"dxnorm", "dx_norm", "norm_dx", "step_norm", "update_norm", "scf_accuracy", "drho", "scf_error",
		// an optimiser's gradient norm (first-order optimality), which should fall toward its tolerance
		// (not a training run's grad_norm, whose noise is its normal state)
		"gnorm", "norm_g", "g_norm", "gradnorm", "norm_grad", "gradient_norm", "norm_gradient", "first-order_optimality", "firstorderopt", "optimality", "kkt", "kkt_residual",
		"rnrm", "res_l2", "l2_res", "res_inf", "linf_res", "res_max", "max_res", "defect", "ferr", "rel_norm", "max|r|", "max|f|", "max|du|", "max|dx|",
		"max_change", "maxchange", "max_diff", "maxdiff", "max_delta", "max_update", "max_du", "max_dx", "delta_x", "delta_u", "dx_max", "du_max"}
	// normedResiduals are what a norm `|…|` / `||…||` of is a residual: F(x), r, the update.
	normedResiduals = []string{"f", "r", "res", "resid", "residual", "f(x)", "fx", "dx", "delta", "step", "update", "b-ax", "ax-b", "rhs", "g(x)",
		"g", "grad", "gradient", "grad f", "grad(f)", "gradf", "df", "nabla f", "∇f", "pg"}
	lossNames = []string{"loss", "cost", "objective", "obj", "nll", "mse", "rmse", "chi2", "chisq", "chi^2", "misfit",
		"cross_entropy", "crossentropy", "xent", "bce", "neg_log_likelihood", "negative_log_likelihood", "neg_loglik", "nll_loss",
		"chi2/dof", "chi2/ndf", "chi2_red", "redchi2", "reduced_chi2", "chi2_reduced", "chisq_red", "chi^2/dof", "chi2r", "rchi2",
		"kl", "kld", "kl_div", "kl_divergence", "recon", "reconstruction", "mae", "sse", "huber", "perplexity", "ppl", "neg_elbo", "-elbo"}
	lossAffixes = []string{"train", "training", "val", "valid", "validation", "test", "batch", "total", "avg", "mean", "running", "epoch", "data"}
	// relativeDrifts are already relative errors of a conserved quantity.
	relativeDrifts = []string{"de/e0", "de/e", "de/e_0", "d_e/e0", "dh/h0", "dh/h", "de_rel", "rel_de", "dee0", "de_e0", "delta_e/e0", "(e-e0)/e0",
		"(e-e0)/|e0|", "|de/e0|", "rel_energy_error", "rel_energy_err", "relative_energy_error", "energy_rel_error", "energy_relerr", "rel_energy_drift",
		"energy_drift_rel", "rel_drift", "relative_drift", "e_err_rel", "rel_e_err"}
	// totalEnergies are conserved under a conservative integrator.
	totalEnergies = []string{"e_tot", "etot", "e_total", "etotal", "total_energy", "totalenergy", "toteng", "energy", "hamiltonian", "energy_tot",
		"energy_total", "e_sys", "h_tot", "en", "ener", "total_e", "tot_energy", "e_mech", "emech", "mech_energy", "mechanical_energy"}
	// kineticNames and potentialNames: a sum of one of each (KE+PE, E_kin+E_pot) is a total energy.
	kineticNames    = []string{"ke", "ekin", "e_kin", "kin", "kinetic", "k", "t", "ek", "e_k", "kineng", "kinetic_energy"}
	potentialNames  = []string{"pe", "epot", "e_pot", "pot", "potential", "u", "v", "ep", "e_p", "poteng", "potential_energy", "e_pair"}
	conservedTotals = []string{"total_mass", "mass_total", "m_tot", "mtot", "total_charge", "charge_total", "q_tot", "qtot", "total_particles", "n_total",
		"norm_psi", "total_probability", "sum_p", "sum(p)", "prob_sum", "psum",
		"sum_prob", "prob_total", "p_tot", "ptot", "p_sum", "total_prob", "sum(prob)", "sum(rho)", "sum_rho", "mass_sum", "sum_mass", "m_total", "mtotal",
		"n_tot", "ntot", "total_number", "sum(w)", "sum_w", "weight_sum", "sum_weights", "total_weight", "sum(psi^2)", "norm(psi)", "total_n", "sum(n)",
		"total_solute", "total_amount", "p_total", "probsum", "sum_probs", "sumprob", "total_p", "norm_p", "sum(pi)", "sum_pi"}
	// balanceErrors are the error of a conservation balance, which stays at zero (to rounding).
	balanceErrors = []string{"imbalance", "balance_error", "balance_err", "mass_error", "mass_err", "mass_defect", "conservation_error",
		"conservation_err", "cons_err", "charge_error", "prob_error", "norm_error", "sum_error", "closure_error", "budget_error", "residual_mass",
		"mass_imbalance", "energy_balance_error", "mass_balance", "mass_balance_error"}
	// conservedAmounts are amounts a code that says it conserves them keeps constant.
	conservedAmounts = []string{"mass", "total", "charge", "sum", "probability", "total_sum"}
	finiteNames      = []string{"logl", "loglik", "log_lik", "loglike", "log_like", "loglikelihood", "log_likelihood", "log-likelihood", "lnl", "ln_l", "lnlike",
		"logp", "log_p", "logprob", "log_prob", "log_post", "logpost", "log_posterior", "logposterior", "lp", "lp__", "elbo", "log_evidence",
		"logz", "log_z", "ll", "loglik_chain", "log_lik_total", "log_marginal", "lml", "mll", "log_joint", "logpdf", "log_density", "logdensity",
		"log_weight", "logw", "log_w", "log_evidence_estimate"}
	// acceptanceNames are a sampler's acceptance rate (a probability that should not collapse).
	acceptanceNames  = []string{"p_accept", "pacc", "p_acc", "acceptance", "acceptance_rate", "accept_rate", "acc_rate", "accept_ratio", "acceptance_ratio", "acc_ratio", "accrate", "accept_frac", "acceptance_fraction", "acc_frac"}
	probabilityNames = []string{"prob", "probability", "p_accept", "pacc", "p_acc", "acceptance", "acceptance_rate", "accept_rate", "acc_rate", "accept_ratio",
		"acceptance_ratio", "frac", "fraction", "survival", "survival_prob", "p_survive", "p_success", "success_rate", "occupancy", "occupation"}
	amountNames = []string{"population", "pop", "stock", "inventory", "biomass", "prey", "predator", "predators", "density", "mass", "amount",
		"concentration", "conc", "height", "water_level", "volume", "susceptible", "infected", "recovered", "infectious", "exposed",
		"n_particles", "particles", "count", "moles", "mol", "substrate", "product", "reactant", "cells", "bacteria", "fish", "stock_level"}
	// stateNames are state variables whose norm a stable scheme keeps bounded; stateNorms are
	// such norms written as one word.
	stateNames = []string{"u", "x", "y", "v", "psi", "phi", "q", "state", "sol", "solution", "field", "e_field", "amplitude", "w", "z"}
	stateNorms = []string{"max|u|", "max_u", "umax", "u_max", "maxabs_u", "max_abs_u", "norm_u", "unorm", "u_norm", "max|x|", "xmax", "norm_x",
		"max(abs(u))", "max|psi|", "max_amplitude", "amplitude_max"}
	kelvinNames = []string{"t_k", "temp_k", "temperature_k", "tk", "kelvin", "t_kelvin"}
)

// nameRole is the role a series' name (and the run's context) gives it.
func nameRole(name string, ctx *runContext, p *profile) roleInfo {
	base, norm, unit := normName(name)
	if isEnergySum(base) {
		base = "energy" // KE+PE is the total energy
	}
	if isRelativeNorm(base) {
		base, norm = "r", true // ||r||/||b||, |r|/|r0|: a relative residual
	}
	if i := strings.LastIndexAny(base, "/."); i > 0 && i < len(base)-1 && !isRelativeDrift(base) && !strings.HasPrefix(base, "chi") {
		// a metric's path: train/loss, val.loss, metrics/rnorm
		if last := base[i+1:]; slices.Contains(lossNames, last) || isAffixed(last, "loss", lossAffixes) || slices.Contains(residualNames, last) {
			base = last
		}
	}
	in := func(list []string) bool {
		for _, s := range list {
			if s == base {
				return true
			}
		}
		return false
	}
	q := strconv.Quote(name)
	switch {
	case p.qe && base == "scf_accuracy":
		return roleInfo{role: RoleResidual, why: "Quantum ESPRESSO's estimated scf accuracy, which must fall below conv_thr"}
	case norm && in(normedResiduals):
		return roleInfo{role: RoleResidual, why: "its name " + q + " is the norm of a residual or update, which should fall toward a tolerance"}
	case in(residualNames) || strings.Contains(base, "residual"):
		return roleInfo{role: RoleResidual, why: "its name " + q + " says residual, which should fall toward a tolerance"}
	case in(lossNames) || isAffixed(base, "loss", lossAffixes):
		return roleInfo{role: RoleLoss, why: "its name " + q + " says loss, which training should lower"}
	case in(relativeDrifts) || isRelativeDrift(base):
		return roleInfo{role: RoleConserved, relative: true, why: "its name " + q + " is the relative error of a conserved quantity, which should stay near 0"}
	case isConservedRatio(base) && (ctx.conservation || ctx.conservative && !ctx.dissipative):
		return roleInfo{role: RoleConserved, linear: isLinearRatio(base), why: "its name " + q + " is a quantity over its initial value, which should stay 1"}
	case unit == "%" && in1(base, "sum", "total", "sum_p", "sum(p)", "p_sum", "total_p", "sum_prob", "norm"):
		return roleInfo{role: RoleConserved, linear: true, why: "its name " + q + " is a total in percent, which should stay 100%"}
	case in(balanceErrors) || isAffixed(base, "imbalance", []string{"mass", "charge", "energy", "prob", "probability", "total", "species", "water", "heat"}):
		return roleInfo{role: RoleConserved, zero: true, why: "its name " + q + " is the error of a conservation balance, which should stay at zero"}
	case in(conservedTotals):
		return roleInfo{role: RoleConserved, linear: true, why: "its name " + q + " is a conserved total"}
	case ctx.conservation && in(conservedAmounts):
		return roleInfo{role: RoleConserved, linear: true, why: "its name " + q + " is an amount the code says it conserves"}
	case in(finiteNames) || strings.Contains(base, "loglik") || strings.Contains(base, "log_lik") || strings.Contains(base, "likelihood"):
		return roleInfo{role: RoleFinite, why: "its name " + q + " is a log-likelihood, which must stay finite"}
	case in(probabilityNames) || strings.HasPrefix(base, "p(") && !isFunctionValue(base) || strings.HasPrefix(base, "prob_") || strings.HasSuffix(base, "_prob") || isProbability(base):
		return roleInfo{role: RoleProbability, why: "its name " + q + " is a probability or fraction, which lies in [0, 1]"}
	case in(amountNames) || isAmount(base):
		return roleInfo{role: RoleNonNegative, why: "its name " + q + " is an amount, which cannot be negative"}
	case in(kelvinNames) || unit == "k" || unit == "kelvin":
		return roleInfo{role: RolePositive, why: "its name " + q + " is an absolute temperature, which is positive"}
	case norm && in(stateNames) || in(stateNorms):
		return roleInfo{role: RoleBounded, why: "its name " + q + " is the norm of a simulation's state, which a stable scheme keeps bounded"}
	case p.lammps && name == "Temp":
		return roleInfo{role: RolePositive, why: "LAMMPS' Temp is an absolute temperature, which is positive"}
	case !p.lammps && !p.qe && ctx.conservative && !ctx.dissipative && (in(totalEnergies) || isUnitSuffixed(base, totalEnergies)):
		return roleInfo{role: RoleConserved, why: "its name " + q + " is the total energy and the code uses a conservative integrator (" + ctx.integrator + ")"}
	case !p.lammps && !p.qe && ctx.dynamics != "" && !ctx.dissipative && (in(totalEnergies) || base == "e" || isUnitSuffixed(base, totalEnergies)):
		return roleInfo{role: RoleConserved, why: "its name " + q + " is the total energy of a " + ctx.dynamics + " with no damping, forcing or thermostat in the code"}
	}
	return roleInfo{}
}

// isConservedRatio: a quantity over its initial value, E/E0, H/H0, M/M0, N/N_0, sum/sum0 —
// conserved when the code says so (it conserves, or integrates with a conservative scheme
// and no damping): an energy over its start also measures amplification (transient growth)
// and decay.
func isConservedRatio(base string) bool {
	num, den, ok := strings.Cut(base, "/")
	if !ok || num == "" {
		return false
	}
	if den != num+"0" && den != num+"_0" && den != num+"(0)" && den != num+"_init" && den != num+"_initial" {
		return false
	}
	return slices.Contains(totalEnergies, num) || in1(num, "e", "h", "m", "n", "q", "mass", "charge", "sum", "total", "norm", "p", "prob", "w")
}

// isLinearRatio: a ratio of a linear invariant (mass, charge, number, probability).
func isLinearRatio(base string) bool {
	num, _, _ := strings.Cut(base, "/")
	return in1(num, "m", "n", "q", "mass", "charge", "sum", "total", "norm", "p", "prob", "w")
}

// isFunctionValue: p(x), P(X), p(t) — a function of one variable's value, not a probability.
func isFunctionValue(base string) bool {
	open := strings.IndexByte(base, '(')
	return open > 0 && strings.HasSuffix(base, ")") && len(base)-open == 3 && base[open+1] >= 'a' && base[open+1] <= 'z'
}

// isAffixed: base is word joined with one of affixes by "_", "-" or "/", or run together:
// train_loss, loss_val, val-loss, trainloss.
func isAffixed(base, word string, affixes []string) bool {
	for _, a := range affixes {
		for _, j := range []string{"_", "-", "/", ""} {
			if base == a+j+word || j != "" && base == word+j+a {
				return true
			}
		}
	}
	return false
}

// isEnergySum: a sum of a kinetic and a potential energy — KE+PE, E_kin+E_pot, K+U.
func isEnergySum(base string) bool {
	a, b, ok := strings.Cut(base, "+")
	if !ok || strings.Contains(b, "+") {
		return false
	}
	return slices.Contains(kineticNames, a) && slices.Contains(potentialNames, b) || slices.Contains(potentialNames, a) && slices.Contains(kineticNames, b)
}

// isRelativeNorm: a residual's norm relative to the right-hand side's or its start's —
// ||r||/||b||, |r|/|r0|, ||F||/||F0||.
func isRelativeNorm(base string) bool {
	num, den, ok := strings.Cut(base, "/")
	if !ok || !strings.HasPrefix(num, "|") && !strings.HasSuffix(num, "|") {
		return false
	}
	n, d := strings.Trim(num, "|"), strings.Trim(den, "|")
	return slices.Contains(normedResiduals, n) && (d == "b" || d == "rhs" || d == n+"0" || d == n+"_0" || d == "f0" || d == "r0")
}

// isUnitSuffixed: base is one of names with a unit suffix: energy_j, e_ev, etot_kj.
func isUnitSuffixed(base string, names []string) bool {
	i := strings.LastIndexByte(base, '_')
	if i <= 0 {
		return false
	}
	switch base[i+1:] {
	case "j", "ev", "kj", "kcal", "ry", "ha", "hartree", "erg", "si":
	default:
		return false
	}
	for _, n := range names {
		if n == base[:i] {
			return true
		}
	}
	return false
}

// isRelativeDrift recognises dX/X0 forms of an energy or Hamiltonian: "de/e0", "dh/h_0",
// "|e-e0|/|e0|".
func isRelativeDrift(base string) bool {
	num, den, ok := strings.Cut(base, "/")
	if !ok {
		return false
	}
	num, den = strings.Trim(num, "|()"), strings.Trim(den, "|()")
	for _, q := range []string{"e", "h", "energy", "etot", "e_tot"} {
		if (num == "d"+q || num == "delta_"+q || num == q+"-"+q+"0" || num == q+"-"+q+"_0") && (den == q+"0" || den == q+"_0" || den == q) {
			return true
		}
	}
	return false
}

// isAmount: a concentration or population named with a species: conc_A, c_A is not (LAMMPS
// computes are c_*), A_conc, pop_1, N_prey.
func isAmount(base string) bool {
	for _, p := range []string{"conc_", "concentration_", "pop_", "population_", "mass_", "density_", "stock_", "n_"} {
		if strings.HasPrefix(base, p) && len(base) > len(p) && !strings.Contains(base[len(p):], "err") {
			return p != "n_" || in1(base[2:], "prey", "predator", "cells", "infected", "susceptible", "particles", "atoms", "molecules")
		}
	}
	for _, s := range []string{"_conc", "_concentration", "_population", "_mass", "_density", "_stock"} {
		if strings.HasSuffix(base, s) && len(base) > len(s) {
			return true
		}
	}
	return false
}

func in1(s string, list ...string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// isProbability: the smallest or largest entry of a probability vector, or one of its
// entries: min(p), p_min, pmin, p0, p_3, p[3].
func isProbability(base string) bool {
	if in1(base, "min(p)", "max(p)", "p_min", "pmin", "min_p", "minp", "p_max", "pmax", "max_p", "min_prob", "prob_min", "minprob") {
		return true
	}
	if strings.HasPrefix(base, "p[") && strings.HasSuffix(base, "]") {
		return true
	}
	if rest, ok := strings.CutPrefix(base, "p_"); ok && rest != "" {
		// p_trap, p_free, p_accept, p_3 — but not a pressure (p_in, p_out, p_gas…) or a setpoint
		return !in1(rest, "in", "out", "inlet", "outlet", "gas", "atm", "bar", "pa", "kpa", "mpa", "psi", "sat", "vap", "vapor", "partial", "tank",
			"set", "sp", "ref", "total", "tot", "max", "mean", "avg", "ext", "int", "0", "init", "wall", "x", "y", "z", "norm")
	}
	rest, ok := strings.CutPrefix(base, "p")
	return ok && isDigits(rest)
}
