package perception

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/labmate/labmate/protocol"
)

func TestNameRoles(t *testing.T) {
	symplectic := readContext("% velocity Verlet (symplectic)\nE = 0.5*v^2 + 0.5*x^2;")
	damped := readContext("% damped oscillator, velocity verlet\nc = 0.1; % damping")
	generic, lmp, qe := profile{}, profile{lammps: true}, profile{qe: true}
	for _, c := range []struct {
		name string
		ctx  runContext
		p    profile
		want Role
	}{
		{"||F||", runContext{}, generic, RoleResidual},
		{"|r|", runContext{}, generic, RoleResidual},
		{"res", runContext{}, generic, RoleResidual},
		{"residual_norm", runContext{}, generic, RoleResidual},
		{"|dx|", runContext{}, generic, RoleResidual},
		{"scf_accuracy", runContext{}, qe, RoleResidual},
		{"loss", runContext{}, generic, RoleLoss},
		{"train_loss", runContext{}, generic, RoleLoss},
		{"dE/E0", runContext{}, generic, RoleConserved},
		{"rel_energy_error", runContext{}, generic, RoleConserved},
		{"E_tot", symplectic, generic, RoleConserved},
		{"energy", symplectic, generic, RoleConserved},
		{"energy", damped, generic, RoleUnknown},
		{"E_tot", runContext{}, generic, RoleUnknown},
		{"logL", runContext{}, generic, RoleFinite},
		{"loglik", runContext{}, generic, RoleFinite},
		{"acceptance_rate", runContext{}, generic, RoleProbability},
		{"T[K]", runContext{}, generic, RolePositive},
		{"Temp", runContext{}, lmp, RolePositive},
		// Not roles: a norm of the state, an error estimate, a PID error, a step size.
		{"|x|", runContext{}, generic, RoleBounded},
		{"max|u|", runContext{}, generic, RoleBounded},
		{"||F||_2", runContext{}, generic, RoleResidual},
		{"min(p)", runContext{}, generic, RoleProbability},
		{"p_trap", runContext{}, generic, RoleProbability},
		{"p_in", runContext{}, generic, RoleUnknown},
		{"E", readContext("% Morse oscillator, explicit Euler"), generic, RoleConserved},
		{"E", readContext("% damped Morse oscillator"), generic, RoleUnknown},
		{"x", runContext{}, generic, RoleUnknown},
		{"abs_err", runContext{}, generic, RoleUnknown},
		{"err", runContext{}, generic, RoleUnknown},
		{"h", symplectic, generic, RoleUnknown},
		{"Press", runContext{}, lmp, RoleUnknown},
		{"total_energy", runContext{}, qe, RoleUnknown},
	} {
		if got := nameRole(c.name, &c.ctx, &c.p); got.role != c.want {
			t.Errorf("role of %q = %v (%s), want %v", c.name, got.role, got.why, c.want)
		}
	}
}

// wander is a Newton iteration's ||F|| bouncing between 1 and 25 without converging.
func wander(n int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Pow(25, r.Float64())
	}
	return out
}

func TestStall(t *testing.T) {
	plateau := make([]float64, 300) // flat at its best (a long plateau), then a drop
	for i := range plateau {
		plateau[i] = 0.6931 + 1e-5*math.Sin(float64(i))
		if i > 220 {
			plateau[i] = 0.6931 * math.Exp(-float64(i-220)/5)
		}
	}
	floor := make([]float64, 120) // converged to rounding, then wandering at 1e-16
	r := rand.New(rand.NewPCG(3, 4))
	for i := range floor {
		floor[i] = math.Max(math.Pow(10, -float64(i)/3), 1e-16*(1+9*r.Float64()))
	}
	slow := make([]float64, 400) // Jacobi: 0.1% per sweep
	for i := range slow {
		slow[i] = math.Pow(0.999, float64(i))
	}
	noisy := make([]float64, 400) // SGD: falls, then noise around its floor
	for i := range noisy {
		noisy[i] = 0.2 + math.Exp(-float64(i)/20) + 0.15*r.Float64()
	}
	rattle := []float64{24, 12, 9, 8.5} // a subgradient method at a kink: ||g|| stops falling and jitters 10-35% above its best
	for range 150 {
		rattle = append(rattle, 9+2.5*r.Float64())
	}
	cg := make([]float64, 300) // an ill-conditioned CG: erratic bumps up to 3x, but a new best every dozen samples or so
	for i := range cg {
		cg[i] = math.Exp(-float64(i)/60) * (1 + 2*math.Abs(math.Sin(float64(i)*0.7)))
	}
	for _, c := range []struct {
		name, series string
		vs           []float64
		want         string // the first Error's detector, "" for none
	}{
		{"Newton wandering", "||F||", wander(200), DetectorStall},
		{"gradient norm rattling above its best", "||g||", rattle, DetectorStall},
		{"erratic but converging CG residual", "|r|", cg, ""},
		{"rattling, no role", "g", rattle, ""},
		{"Newton wandering, printed as res", "res", wander(200), DetectorStall},
		{"a solve that converges, then one that wanders", "|r|", append(geometric(1, 0.05, 10), wander(100)...), DetectorStall},
		{"solves that all converge", "|r|", append(append(geometric(1, 0.05, 10), geometric(2, 0.1, 12)...), geometric(3, 0.2, 20)...), ""},
		{"wandering, no role", "y", wander(200), ""},
		{"plateau before a drop", "||F||", plateau, ""},
		{"rounding floor", "|r|", floor, ""},
		{"slow steady convergence", "residual", slow, ""},
		{"noisy loss at its floor", "loss", noisy, ""},
		{"noisy residual-free error estimate", "abs_err", noisy, ""},
		{"restarted solver repeating its residual", "res_norm", append(geometric(1, 0.5, 10), geometric(0.00195, 1, 40)...), DetectorStall},
		{"converged residual printed again", "res_norm", append(geometric(1, 0.01, 9), geometric(1e-16, 1, 40)...), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(t, nil)
			got := ""
			for i, o := range seriesObs(c.series, 0.05, c.vs) {
				if v := m.Observe(o); v != nil && v.State == protocol.Error {
					got = v.Detector
					t.Logf("%s at sample %d: %s; role %q; correction %q", v.Detector, i, v.Message, v.Role, v.Correction)
					break
				}
			}
			if got != c.want {
				t.Errorf("first Error by %q, want %q", got, c.want)
			}
		})
	}
	m := newMonitor(t, nil)
	feed(m, seriesObs("||F||", 0.05, wander(60)))
	v := m.Verdict()
	if !strings.Contains(v.Role, "residual") || v.Correction == "" || !strings.Contains(v.Message, "not converging") {
		t.Errorf("stall verdict does not name the role or a correction: %+v", v)
	}
}

func TestDrift(t *testing.T) {
	euler := make([]float64, 400) // explicit Euler on an orbit: dE/E0 grows to 67%
	for i := range euler {
		euler[i] = 0.67 * float64(i) / 399
	}
	bounded := make([]float64, 400) // a symplectic scheme at a coarse step: ±8%, bounded
	for i := range bounded {
		bounded[i] = 0.08 * math.Pow(math.Sin(float64(i)/7), 2)
	}
	symplectic := &Config{Code: "# leapfrog (symplectic) integration of two coupled oscillators"}
	exchange := func() []*protocol.Observation { // E1 and E2 swap energy, E_tot stays put
		var obs []*protocol.Observation
		for i := range 400 {
			e1 := math.Pow(math.Cos(float64(i)/30), 2)
			obs = append(obs, tel(float64(i)*0.02, "E1", e1), tel(float64(i)*0.02, "E2", 1-e1),
				tel(float64(i)*0.02, "E_tot", 1+1e-4*math.Sin(float64(i))))
		}
		return obs
	}
	damped := make([]float64, 400)
	for i := range damped {
		damped[i] = math.Exp(-float64(i) / 50)
	}
	totalEuler := make([]float64, 400)
	for i := range totalEuler {
		totalEuler[i] = -0.5 * (1 - 0.67*float64(i)/399)
	}
	for _, c := range []struct {
		name string
		cfg  *Config
		obs  []*protocol.Observation
		want string
	}{
		{"explicit Euler, dE/E0", nil, seriesObs("dE/E0", 0.02, euler), DetectorDrift},
		{"explicit Euler, E_tot under a symplectic-sounding code", symplectic, seriesObs("E_tot", 0.02, totalEuler), DetectorDrift},
		{"bounded energy error", nil, seriesObs("dE/E0", 0.02, bounded), ""},
		{"coupled oscillators exchange energy", symplectic, exchange(), ""},
		{"damped oscillator's energy", &Config{Code: "% velocity verlet with damping c = 0.2"}, seriesObs("energy", 0.02, damped), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(t, c.cfg)
			got := ""
			for i, o := range c.obs {
				if v := m.Observe(o); v != nil && v.State == protocol.Error {
					got = v.Detector
					t.Logf("%s at %d: %s; correction %q", v.Detector, i, v.Message, v.Correction)
					break
				}
			}
			if got != c.want {
				t.Errorf("first Error by %q, want %q", got, c.want)
			}
		})
	}
}

func TestRangeAndFinite(t *testing.T) {
	prob := []float64{0.5, 0.4, 0.3, 0.2, 0.1, 0.05, -0.02, -0.05, -0.1}
	percent := []float64{50, 40, 30, 20, 60, 100, 90}
	for _, c := range []struct {
		name string
		obs  []*protocol.Observation
		want string
	}{
		{"probability below zero", seriesObs("acceptance_rate", 0.1, prob), DetectorRange},
		{"a population overshooting below zero", seriesObs("prey", 0.1, []float64{10, 8, 5, 2, 0.5, -0.7, -0.2, -0.01}), DetectorRange},
		{"a concentration rounded a hair below zero", seriesObs("conc_B", 0.1, []float64{1, 0.5, 0.1, 1e-6, -1e-13, -2e-13, 1e-14, -1e-13}), ""},
		{"a percentage named like a probability", seriesObs("acceptance_rate", 0.1, percent), ""},
		{"a probability out of range every other step", seriesObs("p_trap", 0.1, []float64{0.2, 0.5, 0.3, 0.6, -0.2, 0.9, -0.5, 1.3}), DetectorRange},
		{"log-likelihood underflows to -inf", linesAt(0.1, "iter 1 logL -120.5", "iter 2 logL -118.2", "iter 3 logL -inf", "iter 4 logL -inf"), DetectorNonFinite},
		{"logL = -Infinity", linesAt(0.1, "logL = -120.5", "logL = -Infinity"), DetectorNonFinite},
		{"an infinite margin once", linesAt(0.1, "gain_margin = inf", "gain_margin = 0.8", "gain_margin = inf"), ""},
		{"a series stuck at Inf", linesAt(0.1, "y = 1", "y = 2", "y = inf", "y = inf", "y = inf"), DetectorNonFinite},
		{"a best starting at inf", linesAt(0.1, "best = inf", "best = 3", "best = 2"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(t, nil)
			got := ""
			for _, o := range c.obs {
				if v := m.Observe(o); v != nil && v.State == protocol.Error {
					got = v.Detector
					t.Logf("%s: %s; role %q; correction %q", v.Detector, v.Message, v.Role, v.Correction)
					break
				}
			}
			if got != c.want {
				t.Errorf("first Error by %q, want %q", got, c.want)
			}
		})
	}
}

// lammpsThermo is a LAMMPS thermo table with Temp given by temp(step).
func lammpsThermo(rows, every int, temp func(i int) float64, press func(i int) float64) []string {
	lines := []string{"Step Temp E_pair E_mol TotEng Press"}
	for i := range rows {
		lines = append(lines, fmt.Sprintf("%d %g -906.2 0 -896.3 %g", i*every, temp(i), press(i)))
	}
	return append(lines, "Loop time of 1.5 on 1 procs for 1000 steps with 256 atoms")
}

func TestSetpoint(t *testing.T) {
	nvt := "units metal\ntimestep 0.001\nvelocity all create 300 1\nfix 1 all nvt temp 300 300 0.1\nthermo 100\nrun 20000\n"
	ramp := "units metal\ntimestep 0.002\nvelocity all create 300 1\nfix 1 all nvt temp 300 1800 0.1\nthermo 50\nrun 1500\n"
	npt := "units metal\ntimestep 0.002\nfix 1 all npt temp 300 300 0.1 iso 1 1 1.0\nrun 1500\n"
	short := "units metal\ntimestep 0.001\nfix 1 all nvt temp 300 300 0.005\nrun 20000\n"
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name, code string
		lines      []string
		want       string
	}{
		{"frozen at 1e-30 K under a 300 K thermostat", nvt, lammpsThermo(200, 100, func(i int) float64 {
			if i < 10 {
				return 300
			}
			return 1e-30
		}, func(int) float64 { return 1 }), DetectorSetpoint},
		{"small system fluctuating ±30%", nvt, lammpsThermo(200, 100, func(int) float64 { return 300 * (1 + 0.6*(r.Float64()-0.5)) }, func(int) float64 { return 1 }), ""},
		{"NPT pressure swings", npt, lammpsThermo(30, 50, func(int) float64 { return 300 * (1 + 0.2*(r.Float64()-0.5)) }, func(i int) float64 { return 2e4 * math.Sin(float64(i)) }), ""},
		{"heating ramp, lagging 15%", ramp, lammpsThermo(31, 50, func(i int) float64 { return 0.85 * (300 + 1500*float64(i)/30) }, func(int) float64 { return 0 }), ""},
		{"started cold, heats in a few rows", nvt, lammpsThermo(200, 100, func(i int) float64 { return 300*(1-math.Exp(-float64(i+1)/3)) + 5*r.Float64() }, func(int) float64 { return 0 }), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: c.code})
			got := ""
			for _, o := range linesAt(0.05, c.lines...) {
				if v := m.Observe(o); v != nil && v.State == protocol.Error {
					got = v.Detector
					t.Logf("%s: %s; role %q; correction %q", v.Detector, v.Message, v.Role, v.Correction)
					break
				}
			}
			if got != c.want {
				t.Errorf("first Error by %q, want %q", got, c.want)
			}
		})
	}
	// Atoms at rest under Nose-Hoover (no velocity command): no Tdamp to wait for, stopped at
	// the fifth row, long before five Tdamp (250 steps, 25 rows). Under Langevin, whose
	// random kicks heat them within a Tdamp, the same start is a thermostat at work.
	for _, c := range []struct {
		style   string
		heats   bool
		wantRow int // the row (from 0) of the first Error; -1 for none
	}{
		{"nvt temp", false, 4},
		{"langevin", true, -1},
	} {
		code := "units metal\ntimestep 0.002\nfix 1 all " + c.style + " 300 300 0.1 48279\nthermo 10\nrun 1000\n"
		if c.style == "langevin" {
			code += "fix 2 all nve\n"
		}
		m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: code})
		lines := lammpsThermo(60, 10, func(i int) float64 {
			if c.heats {
				return 300 * (1 - math.Exp(-float64(i)/3))
			}
			return 1e-26 * math.Pow(1.1, float64(i))
		}, func(int) float64 { return 0 })
		row := -1
		for i, o := range linesAt(0.05, lines...) {
			if v := m.Observe(o); v != nil && v.State == protocol.Error {
				row = i - 1 // the header is line 0
				t.Logf("%s at rest: %s; correction %q", c.style, v.Message, v.Correction)
				break
			}
		}
		if row != c.wantRow {
			t.Errorf("%s, atoms at rest: first Error at row %d, want %d", c.style, row, c.wantRow)
		}
	}
	// A Tdamp of 5 timesteps: the correction says to raise it.
	m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: short})
	feed(m, linesAt(0.05, lammpsThermo(40, 100, func(i int) float64 {
		if i < 3 {
			return 300
		}
		return 1e5
	}, func(int) float64 { return 0 })...))
	if v := m.Verdict(); v.State != protocol.Error || !strings.Contains(v.Correction, "Tdamp is 5 timesteps") || !strings.Contains(v.Correction, "timestep") {
		t.Errorf("exploding temperature with a short Tdamp: %+v", v)
	}
}

func TestQEStall(t *testing.T) {
	code := "&electrons\n conv_thr = 1.0d-8, mixing_beta = 0.7\n electron_maxstep = 100\n/\n"
	scf := func(acc func(i int) float64, n int) []string {
		var lines []string
		for i := 1; i <= n; i++ {
			lines = append(lines, fmt.Sprintf("     iteration #%3d     ecut=    12.00 Ry     beta= 0.70", i),
				fmt.Sprintf("     estimated scf accuracy    <       %.8f Ry", acc(i)))
		}
		return lines
	}
	r := rand.New(rand.NewPCG(7, 8))
	stuck := func(i int) float64 {
		if i < 8 {
			return math.Pow(10, -float64(i)/2)
		}
		return 8e-4 * (1 + 0.3*(r.Float64()-0.5))
	}
	converging := func(i int) float64 { return math.Pow(10, -float64(i)/3) * (1 + 0.5*r.Float64()) }
	m := newMonitor(t, &Config{Profile: ProfileQE, Code: code})
	feed(m, linesAt(0.2, scf(stuck, 60)...))
	v := m.Verdict()
	if v.State != protocol.Error || !strings.Contains(v.Message, "stalled") || !strings.Contains(v.Correction, "mixing_beta") {
		t.Errorf("an SCF stuck near 8e-4 Ry: %+v", v)
	}
	t.Logf("%s; role %q; correction %q", v.Message, v.Role, v.Correction)
	if e := firstAlarm(t, &Config{Profile: ProfileQE, Code: code}, linesAt(0.2, scf(converging, 30)...)); e.State != "" {
		t.Errorf("a converging SCF: %+v", e)
	}
}

func TestControllerReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	loop := func(n int, setpoint func(i int) float64, y func(i int, sp float64) float64, format string) []*protocol.Observation {
		var lines []string
		for i := range n {
			sp := setpoint(i)
			lines = append(lines, fmt.Sprintf(format, float64(i)*0.1, y(i, sp), sp))
		}
		return linesAt(0.05, lines...)
	}
	const pv = "t=%.1f temperature=%.4f setpoint=%.1f"
	for _, c := range []struct {
		name string
		obs  []*protocol.Observation
		want string
	}{
		{"actuator saturated: stuck at 60 for a setpoint of 80", loop(200, func(int) float64 { return 80 }, func(i int, _ float64) float64 {
			return 20 + 40*(1-math.Exp(-float64(i)/10)) + 0.05*r.Float64()
		}, pv), DetectorSetpoint},
		{"stem pairing: T and T_set, T first", loop(200, func(int) float64 { return 350 }, func(i int, _ float64) float64 {
			return 300 + 10*(1-math.Exp(-float64(i)/5)) + 0.05*r.Float64()
		}, "time=%.1f T_reactor=%.3f T_reactor_set=%.1f"), DetectorSetpoint},
		{"a good loop settles", loop(200, func(int) float64 { return 80 }, func(i int, _ float64) float64 {
			return 80 - 60*math.Exp(-float64(i)/8)*math.Cos(float64(i)/4) + 0.05*r.Float64()
		}, pv), ""},
		{"a slow but steady approach", loop(300, func(int) float64 { return 80 }, func(i int, _ float64) float64 {
			return 80 - 60*math.Exp(-float64(i)/150)
		}, pv), ""},
		{"a P-only offset of 8%", loop(200, func(int) float64 { return 80 }, func(i int, _ float64) float64 {
			return 20 + 53.6*(1-math.Exp(-float64(i)/10)) + 0.05*r.Float64()
		}, pv), ""},
		{"noise around the setpoint", loop(300, func(int) float64 { return 21 }, func(int, float64) float64 { return 21 + r.NormFloat64() }, pv), ""},
		{"setpoint steps, each settled", loop(300, func(i int) float64 { return 40 + 20*float64(i/60) }, func(i int, sp float64) float64 {
			return sp - 20*math.Exp(-float64(i%60)/6) + 0.05*r.Float64()
		}, pv), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(t, nil)
			got := ""
			for _, o := range c.obs {
				if v := m.Observe(o); v != nil && v.State == protocol.Error {
					got = v.Detector
					t.Logf("%s: %s; role %q; correction %q", v.Detector, v.Message, v.Role, v.Correction)
					break
				}
			}
			if got != c.want {
				t.Errorf("first Error by %q, want %q", got, c.want)
			}
		})
	}
}

// TestLAMMPSNVESecularDrift: under fix nve, a total energy drifting steadily by 9% of the
// kinetic energy is an Error; one that shifts by 7% at the start and then holds (a timestep
// near the stability limit) stays a Warning.
func TestLAMMPSNVESecularDrift(t *testing.T) {
	code := "units metal\ntimestep 0.005\nvelocity all create 300 1\nfix 1 all nve\nthermo 100\nrun 20000\n"
	table := func(tot func(i int) float64) []string {
		lines := []string{"Step Temp E_pair E_mol TotEng Press"}
		for i := range 120 {
			lines = append(lines, fmt.Sprintf("%d %.3f %.4f 0 %.4f 100", i*100, 150+3*math.Sin(float64(i)), -906.0+0.2*math.Sin(float64(i)), tot(i)))
		}
		return lines
	}
	ke := 10.0 // E_tot - E_pair ≈ 10 eV of kinetic energy
	for _, c := range []struct {
		name string
		tot  func(i int) float64
		want protocol.VerdictState
	}{
		{"steady drift to 9%", func(i int) float64 { return -896 + 0.09*ke*float64(i)/119 }, protocol.Error},
		{"a 7% shift that holds", func(i int) float64 { return -896 + 0.07*ke*(1-math.Exp(-float64(i)/3)) }, protocol.Warning},
		// A sound timestep: TotEng wanders by 0.1% of the kinetic energy.
		{"healthy wobble", func(i int) float64 { return -896 + 0.001*ke*math.Sin(float64(i)/7) }, protocol.Normal},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: code})
			feed(m, linesAt(0.05, table(c.tot)...))
			if v := m.Verdict(); v.State != c.want {
				t.Errorf("verdict %+v, want %s", v, c.want)
			}
		})
	}
	// A timestep too large from the start: TotEng climbs 0.1% of the kinetic energy per row.
	// The drift is judged in rows, not seconds: it is an Error by the 21st row (1.5%, and
	// growing), whatever the pace of the rows.
	m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: code})
	for i, o := range linesAt(0.05, table(func(i int) float64 { return -896 + 0.001*ke*float64(i) })...) {
		if v := m.Observe(o); v != nil && v.State == protocol.Error {
			if i > 21 {
				t.Errorf("steady drift of 0.1%% per row: Error at row %d, want by row 21: %s", i-1, v.Message)
			}
			return
		}
	}
	t.Errorf("steady drift of 0.1%% per row: no Error, verdict %+v", m.Verdict())
}

// TestLAMMPSNVEShiftThenClimb: a timestep far too large shifts TotEng by 10% of the kinetic
// energy within a few rows and then keeps pushing it up by 0.3% per row (silicon at 10 fs):
// the first half of the run holds most of the drift, so the drift is never 1.5 times the
// first half's, but it climbs row after row at a steady pace.
func TestLAMMPSNVEShiftThenClimb(t *testing.T) {
	code := "units metal\ntimestep 0.010\nvelocity all create 1200 1\nfix 1 all nve\nthermo 50\nrun 5000\n"
	r := rand.New(rand.NewPCG(9, 10))
	lines := []string{"Step Temp E_pair E_mol TotEng Press"}
	ke := 10.0
	for i := range 100 {
		tot := -896 + ke*(0.1*(1-math.Exp(-float64(i)/3))+0.003*float64(i)+0.0003*r.Float64())
		lines = append(lines, fmt.Sprintf("%d %.3f %.4f 0 %.4f 100", i*50, 600+20*r.Float64(), tot-ke, tot))
	}
	m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: code})
	for i, o := range linesAt(0.05, lines...) {
		if v := m.Observe(o); v != nil && v.State == protocol.Error {
			t.Logf("row %d: %s", i-1, v.Message)
			if i-1 > 30 {
				t.Errorf("Error at row %d, want by row 30", i-1)
			}
			return
		}
	}
	t.Errorf("no Error: %+v", m.Verdict())
}

// TestAcceptanceCollapse: a Metropolis acceptance rate that falls from a healthy 0.5 to near
// zero and stays there has frozen the chain; a sampler tuned low from the start, a healthy
// one and an annealing schedule (whose acceptance falls to zero by design) are not.
func TestAcceptanceCollapse(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	collapse := func(i int) float64 {
		if i < 15 {
			return 0.5 - 0.03*float64(i)
		}
		return 0.01 * r.Float64()
	}
	for _, c := range []struct {
		name, code, series string
		rate               func(i int) float64
		want               string
	}{
		{"collapse to 0", "# Metropolis sampler with adaptive step", "acc_rate", collapse, DetectorStall},
		{"collapse, printed as acceptance", "", "acceptance", collapse, DetectorStall},
		{"healthy chain", "", "acc_rate", func(int) float64 { return 0.25 + 0.1*(r.Float64()-0.5) }, ""},
		{"low from the start", "", "acc_rate", func(int) float64 { return 0.02 * r.Float64() }, ""},
		{"simulated annealing", "# simulated annealing: T *= 0.95 (cooling schedule)", "acc_rate", collapse, ""},
		{"collapse of an unknown series", "", "rate", collapse, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(t, &Config{Code: c.code})
			got := ""
			for i := range 80 {
				if v := m.Observe(printed(float64(i)*0.1, c.series, math.Round(c.rate(i)*1000)/1000)); v != nil && v.State == protocol.Error {
					got = v.Detector
					t.Logf("sample %d: %s; correction %q", i, v.Message, v.Correction)
					if i > 15+collapseRun+2 {
						t.Errorf("stopped at sample %d, want by %d", i, 15+collapseRun+2)
					}
					break
				}
			}
			if got != c.want {
				t.Errorf("first Error by %q, want %q", got, c.want)
			}
		})
	}
}
