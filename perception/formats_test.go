package perception

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

// TestParseSamplesFormats: the spellings and formats real codes print their progress in —
// Fortran's D exponent, units in brackets or glued to the number, logging prefixes with
// timestamps and levels, tqdm's and Keras' progress lines, dashes between prose pairs,
// sums and ratios of quantities as names.
func TestParseSamplesFormats(t *testing.T) {
	type pair struct {
		Name  string
		Value float64
	}
	for _, c := range []struct {
		line string
		want []pair
	}{
		// Fortran
		{"     E = -1.234567D+02", []pair{{"E", -123.4567}}},
		{"iter   3  res= 1.25D-05", []pair{{"res", 1.25e-5}}},
		{" it     4  rnorm   2.5d-03  ferr  1.0D-01", []pair{{"it", 4}, {"rnorm", 2.5e-3}, {"ferr", 0.1}}},
		// units in brackets after the name, or glued to the number
		{"E [eV] = -12.5", []pair{{"E [eV]", -12.5}}},
		{"T (K): 300.0, P [bar] = 1.01", []pair{{"T (K)", 300}, {"P [bar]", 1.01}}},
		{"time [s] = 0.5  x = 2", []pair{{"x", 2}}},
		{"temperature: 300 K", []pair{{"temperature", 300}}},
		{"T = 300K  gap = 1.2eV  eff = 12%", []pair{{"T", 300}, {"gap", 1.2}, {"eff", 12}}},
		{"Etot: -5.25 Ry, conv: 3.2e-7 Ry", []pair{{"Etot", -5.25}, {"conv", 3.2e-7}}},
		// logging prefixes
		{"2026-12-05 10:00:01,123 INFO it=3 res=1.5e-3", []pair{{"it", 3}, {"res", 1.5e-3}}},
		{"2026-12-05 10:00:01,123 - INFO - epoch 3 - loss 0.25", []pair{{"epoch", 3}, {"loss", 0.25}}},
		{"INFO:root:epoch 3 loss 0.25", []pair{{"epoch", 3}, {"loss", 0.25}}},
		{"INFO:__main__:rnorm=1e-4", []pair{{"rnorm", 1e-4}}},
		{"[INFO] step 5 chi2 12.5", []pair{{"step", 5}, {"chi2", 12.5}}},
		{"[12:00:01] WARNING grad_norm: 3.2", []pair{{"grad_norm", 3.2}}},
		{"2026-12-05T10:00:01.5Z INFO loss: 0.31", []pair{{"loss", 0.31}}},
		// progress bars
		{" 45%|████      | 45/100 [00:02<00:03, 15.2it/s, loss=0.3]", []pair{{"loss", 0.3}}},
		{"32/32 [==============================] - 1s 5ms/step - loss: 0.6931 - accuracy: 0.5000", []pair{{"loss", 0.6931}, {"accuracy", 0.5}}},
		{"Epoch 3/100 - loss 0.25 - acc 0.9", []pair{{"Epoch", 3}, {"loss", 0.25}, {"acc", 0.9}}},
		// names
		{"KE+PE = 3.25", []pair{{"KE+PE", 3.25}}},
		{"step 10 E_kin+E_pot: -1.5", []pair{{"E_kin+E_pot", -1.5}}},
		{"train/loss=0.3 val/loss=0.4", []pair{{"train/loss", 0.3}, {"val/loss", 0.4}}},
		{"||r||/||b|| = 1e-6", []pair{{"||r||/||b||", 1e-6}}},
		{"chi2/dof = 1.05  elbo = -1234.5  nll=0.69  temp_K = 300", []pair{{"chi2/dof", 1.05}, {"elbo", -1234.5}, {"nll", 0.69}, {"temp_K", 300}}},
		// not values
		{"ratio = 3/4", nil},
		{"date = 2026-12-05", nil},
		{"version = 3.11.2", nil},
		{"2026-12-05 10:00:01,123 INFO starting the solver", nil},
		{"ERROR: Lost atoms: original 500 current 331", nil},
	} {
		var got []pair
		for _, s := range ParseSamples(c.line) {
			got = append(got, pair{s.Name, s.Value})
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("ParseSamples(%q) (-want +got):\n%s", c.line, d)
		}
	}
}

// TestTableFormats: tables as codes print them — CSV headers with units, Fortran numbers in
// an aligned table whose header is printed once.
func TestTableFormats(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		want  string // the samples of the last line, name=value
	}{
		{"CSV with units", []string{"time [s],T [K],E (eV)", "0.1,300,-1.5", "0.2,301,-1.4"}, "T [K]=301 E (eV)=-1.4"},
		{"Fortran table", []string{"   iter        x             res", "      1   1.0000D+00   2.5000D-03", "      2   1.5000D+00   1.2500D-04"}, "iter=2 x=1.5 res=0.000125"},
		{"scipy trust-constr", []string{"| niter |f evals|CG iter|  obj func   |tr radius |   opt    |  c viol  |", "|-------|-------|-------|-------------|----------|----------|----------|",
			"|   1   |   1   |   0   | +1.0000e+00 | 1.00e+00 | 1.00e+00 | 0.00e+00 |", "|   2   |   2   |   1   | +5.0000e-01 | 7.00e+00 | 5.00e-01 | 0.00e+00 |"},
			"niter=2 f evals=2 CG iter=1 obj func=0.5 tr radius=7 opt=0.5 c viol=0"},
		{"scipy least_squares", []string{"   Iteration     Total nfev        Cost      Cost reduction    Step norm     Optimality   ",
			"       0              1         4.4350e+00                                    7.28e+00    ",
			"       1              2         1.6364e-01      4.27e+00       2.36e+00       2.85e-01    "},
			"Iteration=1 Total nfev=2 Cost=0.16364 Cost reduction=4.27 Step norm=2.36 Optimality=0.285"},
		{"bars between names without blanks", []string{"iter|loss|acc", "1|0.5|0.9", "2|0.4|0.91"}, "iter=2 loss=0.4 acc=0.91"},
		{"units as words of a header", []string{"  step       t [s]          E [J/m]         E/E0      max|u| [m]", "     1     0.01000     5.000000e-01   1.0000e+00    1.000000e-02"},
			"step=1 E [J/m]=0.5 E/E0=1 max|u| [m]=0.01"},
		{"units under the header", []string{"   Step      Time      Temp     E_tot", "             (ps)       (K)      (eV)", "      0     0.000    300.00   -1234.5", "     10     0.010    301.00   -1234.4"}, "Step=10 Temp=301 E_tot=-1234.4"},
		{"header once, rows after a note", []string{"step  Etot  T_K", "1  -5.0  300", "note: rescaled", "2  -5.1  299"}, "step=2 Etot=-5.1 T_K=299"},
	} {
		m := newMonitor(t, nil)
		for i, l := range c.lines {
			m.Observe(stdout(float64(i)*0.1, l))
		}
		var got []string
		for _, s := range m.Parsed() {
			got = append(got, fmt.Sprintf("%s=%g", s.Name, s.Value))
		}
		if g := strings.Join(got, " "); !strings.HasPrefix(g, c.want) {
			t.Errorf("%s: parsed %q, want %q first", c.name, g, c.want)
		}
	}
}

// TestRoleSpellings: the names real codes give their residuals, losses, conserved totals,
// temperatures and log-likelihoods.
func TestRoleSpellings(t *testing.T) {
	symplectic := readContext("# velocity Verlet (symplectic)")
	conserving := readContext("# finite-volume scheme: conserves mass")
	for _, c := range []struct {
		name string
		ctx  runContext
		want Role
	}{
		{"rnorm", runContext{}, RoleResidual},
		{"||r||/||b||", runContext{}, RoleResidual},
		{"|r|/|r0|", runContext{}, RoleResidual},
		{"max|du|", runContext{}, RoleResidual},
		{"max_change", runContext{}, RoleResidual},
		{"res_inf", runContext{}, RoleResidual},
		{"metrics/rnorm", runContext{}, RoleResidual},
		{"train/loss", runContext{}, RoleLoss},
		{"val-loss", runContext{}, RoleLoss},
		{"val.loss", runContext{}, RoleLoss},
		{"chi2", runContext{}, RoleLoss},
		{"chi2/dof", runContext{}, RoleLoss},
		{"nll", runContext{}, RoleLoss},
		{"cross_entropy", runContext{}, RoleLoss},
		{"elbo", runContext{}, RoleFinite},
		{"log_marginal", runContext{}, RoleFinite},
		{"temp_K", runContext{}, RolePositive},
		{"T [K]", runContext{}, RolePositive},
		{"T (K)", runContext{}, RolePositive},
		{"Etot", symplectic, RoleConserved},
		{"E_tot [eV]", symplectic, RoleConserved},
		{"KE+PE", symplectic, RoleConserved},
		{"E_kin+E_pot", symplectic, RoleConserved},
		{"KE+PE", runContext{}, RoleUnknown},
		{"sum_prob", runContext{}, RoleConserved},
		{"sum(p)", runContext{}, RoleConserved},
		{"mass", conserving, RoleConserved},
		{"mass", runContext{}, RoleNonNegative},
		{"grad_norm", runContext{}, RoleUnknown},
		{"E/N", runContext{}, RoleUnknown},
	} {
		if got := nameRole(c.name, &c.ctx, &profile{}); got.role != c.want {
			t.Errorf("role of %q = %v (%s), want %v", c.name, got.role, got.why, c.want)
		}
	}
	if ri := nameRole("sum_prob", &runContext{}, &profile{}); !ri.linear {
		t.Errorf("sum_prob is not a linear invariant")
	}
}

// lines turns printf-style rows into stdout observations dt seconds apart.
func lines(dt float64, n int, row func(i int) string) []*protocol.Observation {
	out := make([]*protocol.Observation, n)
	for i := range n {
		out[i] = stdout(float64(i)*dt, row(i))
	}
	return out
}

// firstError is the index and detector of the first Error m emits on obs (-1, "" for none).
func firstError(t *testing.T, cfg *Config, obs []*protocol.Observation) (int, string, string) {
	t.Helper()
	m := newMonitor(t, cfg)
	for i, o := range obs {
		if v := m.Observe(o); v != nil && v.State == protocol.Error {
			return i, v.Detector, v.Message
		}
	}
	return -1, "", ""
}

// TestRoleFaults: faults judged against a series' role and the code — a Newton iteration
// cycling between two points, a residual stagnating at a constant level, a Markov chain
// repeating one state, a probability sum drifting off 1, a loss that stopped learning — and
// the healthy look-alikes that stay Normal.
func TestRoleFaults(t *testing.T) {
	// a loss converging onto ln 2 (a dead network) and printed to 6 digits
	deadNet := func(i int) string {
		l := math.Log(2) + 0.26*math.Pow(0.8, float64(i))
		return fmt.Sprintf("epoch %3d  loss = %.6f  acc = 0.500", i+1, l)
	}
	// a loss on a plateau that it leaves by creeping in its last digit, faster and faster
	plateau := func(i int) string {
		l := 3.125 - 1e-6*math.Pow(1.06, float64(i))
		return fmt.Sprintf("iter %5d   loss = %.6e", 50*(i+1), l)
	}
	// a loss converged to its floor, five decades down, printed again
	floor := func(i int) string {
		return fmt.Sprintf("epoch %d loss = %.6e", i, math.Max(2.7*math.Pow(0.5, float64(i)), 1.1e-5))
	}
	// GMRES(4) stagnating: |r| drops, then sits within 1e-5 of one level, printed to four
	// digits (a flat residual printed with more digits is indistinguishable from a plateau
	// before a drop, which is healthy)
	gmres := func(i int) string {
		r := math.Max(math.Pow(0.3, float64(i)), 1.5e-2*(1+1e-5*math.Sin(float64(i))))
		return fmt.Sprintf("cycle %d  |r| = %.4e", i, r)
	}
	// Newton on x^3 - 2x + 2 from 0: 0, 1, 0, 1, …
	cycle := func(i int) string {
		x, f := 0.0, 2.0
		if i%2 == 1 {
			x, f = 1, 1
		}
		return fmt.Sprintf("iter %d  x = %.10f  |f| = %.3e", i, x, f)
	}
	// a Metropolis chain whose proposals are all rejected after step 20, with a running
	// acceptance that creeps down
	chain := func(i int) string {
		th := 1.0 + 0.1*math.Sin(float64(i)*1.7)
		if i > 20 {
			th = 1.0 + 0.1*math.Sin(20*1.7)
		}
		acc := 0.3 * math.Min(float64(i), 20) / float64(i+1)
		return fmt.Sprintf("step %d  theta = %.5f  logp = %.4f  acc_rate = %.4f", i, th, -th*th, acc)
	}
	healthyChain := func(i int) string {
		th := 1.0 + 0.1*math.Sin(float64(i)*1.7)
		if i%3 == 1 { // rejected now and then: the state repeats once
			th = 1.0 + 0.1*math.Sin(float64(i-1)*1.7)
		}
		return fmt.Sprintf("step %d  theta = %.5f  logp = %.4f  acc_rate = 0.3", i, th, -th*th)
	}
	// a master equation whose generator leaks: the probability sum falls 1e-4 a step
	leak := func(i int) string {
		return fmt.Sprintf("t = %.2f  p0 = 0.5  sum_p = %.6f", 0.1*float64(i), 1-1e-4*float64(i))
	}
	tight := func(i int) string {
		return fmt.Sprintf("t = %.2f  sum_p = %.12f", 0.1*float64(i), 1+1e-13*math.Sin(float64(i)))
	}
	metropolis := &Config{Code: "# random-walk Metropolis sampler\nimport numpy as np"}
	for _, c := range []struct {
		name   string
		cfg    *Config
		obs    []*protocol.Observation
		want   string // the first Error's detector, "" for none
		before int    // … within this many observations
	}{
		{"a loss that stopped learning", nil, lines(0.1, 100, deadNet), DetectorStall, 75},
		{"a loss on a plateau before a drop", nil, lines(0.1, 100, plateau), "", 0},
		{"a loss at its floor, printed again", nil, lines(0.1, 50, floor), "", 0},
		{"restarted GMRES stagnating", nil, lines(0.1, 100, gmres), DetectorStall, 25},
		{"Newton cycling between two points", nil, lines(0.05, 100, cycle), DetectorStall, 30},
		{"an iterate cycling, no role", nil, lines(0.05, 100, func(i int) string { return strings.Replace(cycle(i), "|f|", "f", 1) }), DetectorStagnation, 30},
		{"Newton cycling, printed with a clock that moves", nil, lines(0.05, 100, func(i int) string { return cycle(i) + fmt.Sprintf("  elapsed = %.4f", 0.0137*float64(i*i)) }), DetectorStall, 30},
		{"a Metropolis chain repeating one state", metropolis, lines(0.1, 100, chain), DetectorStall, 65},
		{"a healthy Metropolis chain", metropolis, lines(0.1, 300, healthyChain), "", 0},
		{"the same repeats without a sampler", nil, lines(0.1, 100, chain), "", 0},
		{"an adapted step size that stays put in a healthy chain", metropolis, lines(0.1, 200, func(i int) string {
			return healthyChain(i) + fmt.Sprintf("  step_size = %.4f", 0.5+0.3/float64(min(i, 20)+1))
		}), "", 0},
		{"a probability sum drifting off 1", nil, lines(0.1, 100, leak), DetectorDrift, 40},
		{"a probability sum kept to rounding", nil, lines(0.1, 300, tight), "", 0},
	} {
		i, det, msg := firstError(t, c.cfg, c.obs)
		if det != c.want || c.want != "" && i >= c.before {
			t.Errorf("%s: first Error at %d by %q (%s), want %q before %d", c.name, i, det, msg, c.want, c.before)
		}
	}
}

// TestStderrPairs: Python's logging writes to stderr; its pairs are read like printed ones.
func TestStderrPairs(t *testing.T) {
	var obs []*protocol.Observation
	for i := range 40 {
		obs = append(obs, stderr(float64(i)*0.1, fmt.Sprintf("2026-12-05 10:00:%02d,123 INFO it=%d res=%.3e", i, i, 1e-3*math.Pow(2, float64(i)))))
	}
	i, det, msg := firstError(t, nil, obs)
	if det != DetectorDivergence || i > 20 {
		t.Errorf("first Error at %d by %q (%s), want a divergence within 20 lines", i, det, msg)
	}
}

// TestLAMMPSVariables: a thermostat's target written with LAMMPS variables — set in the
// script, or on the command line, which overrides an index variable — is the setpoint.
func TestLAMMPSVariables(t *testing.T) {
	for _, c := range []struct {
		code string
		want float64 // the target read; 0: none
	}{
		{"variable T equal 300\nfix 1 all nvt temp ${T} ${T} 0.1", 300},
		{"variable T index 500\nfix 1 all nvt temp $T $T 0.1\nlmp -in in.md -var T 300", 300},
		{"cat > in.md <<EOF\nvariable Tt equal 1.5\nfix 1 all langevin ${Tt} ${Tt} 0.5 48279\nEOF\nmpirun -np 2 lmp_mpi -in in.md", 1.5},
		{"variable T equal v_a*2\nfix 1 all nvt temp ${T} ${T} 0.1", 0},
	} {
		m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: c.code})
		got := 0.0
		if m.lmp.thermo.ok {
			got = m.lmp.thermo.tstart
		}
		if got != c.want {
			t.Errorf("%q: target %v, want %v", c.code, got, c.want)
		}
	}
}

// TestConservationSpellings: how codes print what must be conserved — a quantity over its
// initial value (E/E0), a total in percent (sum [%] of occupancies), the error of a balance
// (imbalance [kg]), a sum of energies in a Fortran table — each judged by its drift, and a
// function value P(X) that is no probability.
func TestConservationSpellings(t *testing.T) {
	for _, c := range []struct {
		name string
		want Role
	}{
		{"sum [%]", RoleConserved},
		{"imbalance [kg]", RoleConserved}, {"imbalance [%]", RoleConserved}, {"mass_error", RoleConserved},
		{"P(X)", RoleUnknown}, {"p(accept)", RoleProbability}, {"E [J/m]", RoleUnknown}, {"E/N", RoleUnknown},
	} {
		if got := nameRole(c.name, &runContext{}, &profile{}); got.role != c.want {
			t.Errorf("role of %q = %v (%s), want %v", c.name, got.role, got.why, c.want)
		}
	}
	for _, c := range []struct {
		name, code string
		want       Role
	}{
		{"E/E0", "% the energy is conserved by the PDE", RoleConserved},
		{"M/M0", "# finite volumes: conserves mass", RoleConserved},
		{"H/H0", "# leapfrog", RoleConserved},
		{"E/E0", "% energy amplification of a disturbance, which then decays", RoleUnknown},
		{"E/E0", "% a damped oscillator: energy is not conserved", RoleUnknown},
	} {
		ctx := readContext(c.code)
		if got := nameRole(c.name, &ctx, &profile{}); got.role != c.want {
			t.Errorf("role of %q in %q = %v (%s), want %v", c.name, c.code, got.role, got.why, c.want)
		}
	}
	// a wave equation's energy over its start: within 2% in a first run, then growing ×1.25 a line
	energyRatio := func(i int) string {
		r := 1 - 0.02*float64(min(i, 30))/30
		if i >= 36 {
			r = math.Pow(1.25, float64(i-35))
		}
		return fmt.Sprintf("%6d  %10.5f  %15.6e  %11.4e  %14.6e", i, 0.01*float64(i), 0.5*r, r, 0.01)
	}
	stable := func(i int) string {
		return fmt.Sprintf("%6d  %10.5f  %15.6e  %11.4e  %14.6e", i, 0.01*float64(i), 0.5, 1-0.02*math.Sin(float64(i)/5), 0.01)
	}
	header := "  step       t [s]          E [J/m]         E/E0      max|u| [m]"
	// occupancies in percent whose sum climbs from 100 once the channel opens
	occupancy := func(i int) string {
		sum := 100.0
		if i > 20 {
			sum = 100 * math.Pow(1.01, float64(i-20))
		}
		return fmt.Sprintf("%9.2f %8.1f %10.3f %10.3f %10.3f %10.3f %10.3f", 0.25*float64(i), -10.0, sum/4, sum/4, sum/4, sum/4, sum)
	}
	occHeader := "   t [ms]   V [mV]     C1 [%]     C2 [%]      O [%]      I [%]    sum [%]"
	// a mass balance printed as key [unit]=value fields: exact, then leaking
	balance := func(i int) string {
		imb := 0.0
		if i > 20 {
			imb = -0.0004 * float64(i-20) * float64(i-20)
		}
		return fmt.Sprintf("t=%5.2f h | M_in [kg]=%8.4f | imbalance [kg]=%+.4f", 0.25*float64(i), 0.5*float64(i), imb)
	}
	roundoff := func(i int) string {
		return fmt.Sprintf("t=%5.2f h | M [kg]=%8.4f | imbalance [kg]=%+.3e", 0.25*float64(i), 10.0, 1e-15*math.Sin(float64(i*i)))
	}
	// KE+PE of a chain under a broken Verlet, in a Fortran D table
	d := func(v float64) string { return strings.Replace(fmt.Sprintf("% .5e", v), "e", "D", 1) }
	chain := func(i int) string {
		e := 3.87
		if i > 25 {
			e = 3.87 * (1 + 0.004*float64(i-25))
		}
		return fmt.Sprintf("%8d %s %s %s %s", 50*i, d(0.5*float64(i)), d(e/2), d(e/2), d(e))
	}
	withHeader := func(h string, obs []*protocol.Observation) []*protocol.Observation {
		return append([]*protocol.Observation{stdout(0, h)}, obs...)
	}
	verlet := &Config{Code: "# velocity Verlet\n"}
	conserved := &Config{Code: "% the energy is conserved by the PDE\n"}
	for _, c := range []struct {
		name   string
		cfg    *Config
		obs    []*protocol.Observation
		want   string
		before int
	}{
		{"E/E0 growing after a conserved run", conserved, withHeader(header, lines(0.05, 120, energyRatio)), DetectorDrift, 60},
		{"E/E0 within 2%", conserved, withHeader(header, lines(0.05, 200, stable)), "", 0},
		{"a probability sum in percent climbing", nil, withHeader(occHeader, lines(0.05, 80, occupancy)), DetectorDrift, 45},
		{"a mass balance leaking", nil, lines(0.1, 80, balance), DetectorDrift, 40},
		{"a mass balance at rounding", nil, lines(0.1, 200, roundoff), "", 0},
		{"KE+PE climbing in a Fortran table", verlet, withHeader("    STEP        TIME              KE              PE           KE+PE", lines(0.05, 100, chain)), DetectorDrift, 60},
	} {
		i, det, msg := firstError(t, c.cfg, c.obs)
		if det != c.want || c.want != "" && i >= c.before {
			t.Errorf("%s: first Error at %d by %q (%s), want %q before %d", c.name, i, det, msg, c.want, c.before)
		}
	}
}

// TestProgressBarRedraws: a tqdm bar redrawn with carriage returns is read redraw by redraw:
// its postfix gives samples, and a loss turning NaN in one redraw is a fault.
func TestProgressBarRedraws(t *testing.T) {
	bar := func(i int, loss string) string {
		return fmt.Sprintf("\r%3d%%|%-10s| %d/100 [00:%02d<00:05, 15.2it/s, loss=%s]", i, strings.Repeat("█", i/10), i, i/15, loss)
	}
	line := ""
	for i := 1; i <= 40; i++ {
		line += bar(i, fmt.Sprintf("%.3f", 1/float64(i)))
	}
	m := newMonitor(t, nil)
	m.Observe(stderr(0, line))
	if got := len(m.Parsed()); got != 40 {
		t.Errorf("a line of 40 redraws gave %d samples, want 40", got)
	}
	if v := m.Verdict(); v.State != protocol.Normal {
		t.Fatalf("healthy bar: %s/%s (%s)", v.State, v.Detector, v.Message)
	}
	m.Observe(stderr(1, bar(41, "0.024")+bar(42, "nan")+bar(43, "nan")))
	if v := m.Verdict(); v.State != protocol.Error || v.Detector != DetectorNonFinite {
		t.Errorf("loss=nan in a redraw: %s/%s (%s), want a non-finite Error", v.State, v.Detector, v.Message)
	}
}
