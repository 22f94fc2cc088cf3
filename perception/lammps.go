package perception

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labmate/labmate/protocol"
)

func init() {
	registerCode(&code{
		name:    ProfileLAMMPS,
		aliases: []string{"lmp"},
		runs:    isLAMMPSCommand,
		reader: func(m *Monitor, cfg *Config) reader {
			for line := range strings.Lines(cfg.Code) { // command-line variables first: they override the script's
				m.lmp.commandVars(strings.Fields(line))
			}
			for line := range strings.Lines(cfg.Code) {
				m.lmp.declare(strings.TrimSpace(line))
			}
			return lammpsReader{}
		},
	})
}

// boxRise is how many times its first volume a run's box may grow before it has exploded.
const boxRise = 10

// isLAMMPSCommand: lmp and the names Debian and LAMMPS' own builds give it, and Python's
// `import lammps` / `from lammps import`.
func isLAMMPSCommand(w string) bool {
	return w == "lmp" || w == "lammps" || slices.Contains([]string{"lmp_serial", "lmp_mpi", "lmp_stable", "lmp_openmpi", "lmp_mpich"}, w)
}

// lammpsReader reads LAMMPS' output; its state is the Monitor's (lmp: the declared fixes,
// thermostat and timestep, which roles and corrections read too).
type lammpsReader struct{}

func (lammpsReader) line(m *Monitor, st *stream, kind protocol.ObservationKind, line string) {
	m.lammpsLine(st, kind, line)
}
func (lammpsReader) sample(m *Monitor, sr *series, s *protocol.Sample) { m.lammpsSample(sr, s) }

// lammps reads LAMMPS' screen output and log (the 2021–2024 releases' texts).
//
// Telemetry: every column of the thermo table — the header line (`Step Temp E_pair E_mol
// TotEng Press`, or whatever thermo_style custom asks for) and its rows, until `Loop time of`
// — through the table reader, which keeps the table standing across WARNING lines;
// `thermo_style multi` blocks (`TotEng = … KinEng = … Temp = …`) through the `name = value`
// pairs every profile reads. Series are named as LAMMPS names them (Temp, TotEng, PotEng, c_msd[4]).
//
// Faults:
//
//   - `ERROR: …` and `ERROR on proc N: …` → Error (LAMMPS stops; the verdict says why), and
//     so is a `WARNING: Lost atoms` (thermo_modify lost warn) or `Out of range atoms`: the
//     integration has blown up. Other warnings → Warning, except a few that say nothing about
//     the physics (no fixes defined during a setup run, neighbor settings reset for a
//     minimization, the OpenMP thread count). `Dangerous builds = N` with N > 0 → Warning:
//     the neighbor list may have missed interactions.
//
//   - the temperature exploding: within one run, Temp reaching TemperatureRise (100) times
//     its start (the largest of its first three positive values) → Error. A heating ramp
//     multiplies the temperature by a few or a few tens; a timestep far too large or
//     overlapping atoms multiply it by hundreds within a few rows (30 fs for copper: 300 K
//     to 3e5 K). A --watch bound on Temp replaces this rule.
//
//   - the energy exploding: TotEng rising by EnergyRise (10) times its scale (the larger of
//     |TotEng| and the kinetic energy at the run's start) → Error.
//
//   - energy drift under NVE: when the cell declares `fix … nve` (in its code, or in echoed
//     input) and no fix that adds or removes energy (thermostats, barostats, langevin,
//     forces, walls, deformation…), |TotEng − TotEng₀| reaching NVEDrift (0.25) times the
//     kinetic energy (KinEng, or TotEng − PotEng, or TotEng − E_pair − E_mol; its largest
//     value in the run) → Error, a fifth of that (5%) → Warning. Velocity Verlet with a sound
//     timestep conserves the energy to 10⁻⁴ of the kinetic energy or better (copper at 1 fs);
//     a timestep near the stability limit shifts it by a few percent at the start and then
//     holds it (copper at 20 fs: 7%, a Warning); a drift of a quarter of the kinetic energy
//     and growing means the trajectory is no longer the system's (copper at 28–30 fs). A
//     secular drift is an Error sooner: 1% of the kinetic energy (ten times what a sound
//     timestep lets through: 0.1% for Lennard-Jones at 0.005 τ and silicon at 1 fs) for 10
//     rows in a row, from the 12th row, and 1.5 times the largest drift of the first half
//     of the run, or, from 2%, rising in 8 of the last 9 rows (a drift that keeps growing,
//     not a shift that holds).
//
//   - the box exploding: within one run, Volume reaching boxRise (10) times its first value →
//     Error. Thermal expansion, melting and a barostat settling change a condensed system's
//     volume by a few percent to a few tens; a tenfold volume is a solid torn into a gas (a
//     barostat damping far too short, overlapping atoms, a timestep far too large).
//
// Minimizations (`Setting up cg style minimization`) are judged by none of these rules.
type lammps struct {
	nve      bool     // fix nve declared, and nothing that changes the energy
	fixes    []string // "id style" of the fixes declared so far
	thermo   lammpsThermostat
	units    string
	timestep float64
	vars     map[string]string // numeric variables (`variable T equal 300`, `-var T 300`)
	min      bool              // the current run is a minimization
	runs     [2]lammpsRun
}

// lammpsRun is the state of the rules for one run, per source (printed, followed file).
type lammpsRun struct {
	temps    int
	tempRef  float64
	e0, keMx float64
	haveE0   bool
	pot, kin float64
	havePot  bool
	haveKin  bool
	ePair    float64
	eMol     float64
	fired    [4]bool               // temperature, energy, drift, box Error reported
	volRef   float64               // the run's first Volume
	drifting bool                  // drift Warning reported
	shares   thinned               // |TotEng − TotEng₀| / kinetic energy over the run
	over     int                   // rows in a row with the share at NVEDrift/nveSecular or more
	recent   [2 * driftRun]float64 // the last 2·driftRun shares (a ring)

	step, step0 float64 // the Step column: now, and at the run's first row
	haveStep    bool
	offRows     int     // rows in a row with Temp far from the thermostat's target
	offFrom     float64 // the step the stretch began
	coldRows    int     // rows in a row below a thousandth of the target
	setFired    bool
}

// commandVars reads the variables a command line that runs LAMMPS sets: `lmp -in in.md -var
// T 300` (-v T 300).
func (l *lammps) commandVars(f []string) {
	if !slices.ContainsFunc(f, isLAMMPSCommand) {
		return
	}
	for i := 0; i+2 < len(f); i++ {
		if f[i] == "-var" || f[i] == "-v" {
			l.setVar(f[i+1], f[i+2], true)
		}
	}
}

// setVar records a LAMMPS variable with a numeric value. A command-line -var (cmdline)
// overrides the script's, as in LAMMPS; otherwise the first definition stays.
func (l *lammps) setVar(name, value string, cmdline bool) {
	if _, ok := fortranNumber(value); !ok {
		return
	}
	if l.vars == nil {
		l.vars = make(map[string]string)
	}
	if _, ok := l.vars[name]; !ok || cmdline {
		l.vars[name] = value
	}
}

// subst replaces a variable reference, `${T}` or `$T`, by its value when it is known.
func (l *lammps) subst(w string) string {
	name := strings.TrimPrefix(w, "$")
	if strings.HasPrefix(name, "{") && strings.HasSuffix(name, "}") {
		name = name[1 : len(name)-1]
	} else if len(name) != 1 {
		return w // $T names a one-letter variable; $(…) is an expression
	}
	if v, ok := l.vars[name]; ok {
		return v
	}
	return w
}

// conservative are fix styles that neither add nor remove energy.
var conservative = []string{
	"nve", "nve/sphere", "nve/asphere", "nve/body", "nve/line", "nve/tri", "rigid", "rigid/nve",
	"rigid/small", "rigid/nve/small", "momentum", "recenter", "ave/time", "ave/atom", "ave/chunk",
	"ave/histo", "ave/histo/weight", "ave/correlate", "print", "store/state", "halt", "dt/reset",
	"balance", "vector", "enforce2d", "property/atom",
}

// declare reads one line of LAMMPS input (from the cell's code or echoed by LAMMPS):
// `fix ID GROUP STYLE …` and `unfix ID`.
func (l *lammps) declare(line string) {
	f := strings.Fields(line)
	if len(f) >= 4 && f[0] == "variable" && (f[2] == "equal" || f[2] == "index" || f[2] == "string" || f[2] == "universe" || f[2] == "uloop") {
		l.setVar(f[1], strings.Trim(f[3], `"'`), false)
		return
	}
	l.commandVars(f)
	for i, w := range f {
		if strings.HasPrefix(w, "$") {
			f[i] = l.subst(w)
		}
	}
	if len(f) >= 2 {
		switch f[0] {
		case "units":
			l.units = f[1]
		case "timestep":
			if v, ok := fortranNumber(f[1]); ok && v > 0 {
				l.timestep = v
			}
		case "run":
			if v, ok := fortranNumber(f[1]); ok && v > 0 && l.thermo.ok && l.thermo.runN == 0 {
				l.thermo.runN = v
			}
		case "unfix":
			if l.thermo.id == f[1] {
				l.thermo = lammpsThermostat{}
			}
		}
	}
	if th, ok := parseThermostat(f); ok {
		l.thermo = th
	}
	switch {
	case len(f) >= 4 && f[0] == "fix":
		l.fixes = slices.DeleteFunc(l.fixes, func(s string) bool { return strings.HasPrefix(s, f[1]+" ") })
		l.fixes = append(l.fixes, f[1]+" "+f[3])
	case len(f) >= 2 && f[0] == "unfix":
		l.fixes = slices.DeleteFunc(l.fixes, func(s string) bool { return strings.HasPrefix(s, f[1]+" ") })
	default:
		return
	}
	nve, other := false, false
	for _, s := range l.fixes {
		_, style, _ := strings.Cut(s, " ")
		nve = nve || strings.HasPrefix(style, "nve") && slices.Contains(conservative, style)
		other = other || !slices.Contains(conservative, style)
	}
	l.nve = nve && !other
}

// lammpsBenign are warnings that say nothing about the physics.
var lammpsBenign = []string{
	"No fixes defined", "Using 'neigh_modify every 1 delay 0 check yes' setting during minimization",
	"Resetting reneighboring criteria", "OMP_NUM_THREADS", "Using a manybody potential with bonds/angles/dihedrals",
}

func (m *Monitor) lammpsLine(st *stream, kind protocol.ObservationKind, line string) {
	l := &m.lmp
	ev := func() string { return string(kind) + ": " + line } // built only for a finding
	switch {
	case strings.HasPrefix(line, "ERROR"):
		msg := "LAMMPS error: " + lammpsMessage(line)
		fix := ""
		switch {
		case strings.Contains(line, "Lost atoms"):
			msg = "LAMMPS: lost atoms (the integration blew up: timestep too large, or atoms too hot)"
			fix = l.stepCorrection()
		case strings.Contains(line, "Out of range atoms"):
			msg = "LAMMPS: out of range atoms (the integration blew up)"
			fix = l.stepCorrection()
		}
		m.raise(detProfile, finding{state: protocol.Error, message: msg, evidence: ev(), severity: 1, correction: fix})
	case strings.HasPrefix(line, "WARNING"):
		switch {
		case strings.Contains(line, "Lost atoms"), strings.Contains(line, "Out of range atoms"):
			m.raise(detProfile, finding{state: protocol.Error, message: "LAMMPS: lost atoms (the integration blew up)", evidence: ev(), severity: 1, correction: l.stepCorrection()})
		default:
			for _, b := range lammpsBenign {
				if strings.Contains(line, b) {
					return
				}
			}
			m.raise(detProfile, finding{state: protocol.Warning, message: "LAMMPS warning", evidence: ev(), severity: 0.4})
		}
	case strings.HasPrefix(line, "Setting up "):
		l.min = strings.Contains(line, "minimization")
		l.runs[st.index()] = lammpsRun{}
	case strings.HasPrefix(line, "Loop time of"):
		st.table.end()
	case strings.HasPrefix(line, "Dangerous builds"):
		if v, ok := firstNumber(line[strings.IndexByte(line, '=')+1:]); ok && v > 0 {
			m.raise(detProfile, finding{state: protocol.Warning, message: "LAMMPS: dangerous neighbor list builds (interactions may have been missed)", evidence: ev(), severity: 0.4})
		}
	case strings.HasPrefix(line, "fix ") || strings.HasPrefix(line, "unfix "):
		l.declare(line)
	}
}

// lammpsSample applies the temperature, energy and drift rules to one sample of sr.
func (m *Monitor) lammpsSample(sr *series, s *protocol.Sample) {
	if s.Source == protocol.FromHelper || len(s.Values) > 0 {
		return
	}
	l := &m.lmp
	r := &l.runs[sourceIndex(s.Source)]
	v := s.Value
	switch s.Name {
	case "KinEng":
		r.kin, r.haveKin = v, true
		r.keMx = max(r.keMx, v)
	case "PotEng":
		r.pot, r.havePot = v, true
	case "E_pair":
		r.ePair = v
		r.pot, r.havePot = r.ePair+r.eMol, true
	case "E_mol":
		r.eMol = v
		r.pot, r.havePot = r.ePair+r.eMol, true
	case "Step":
		if !r.haveStep {
			r.step0, r.haveStep = v, true
		}
		r.step = v
	case "Temp":
		if !l.min && !sr.bounded && sr.role.role == RoleControlled {
			m.lammpsSetpoint(sr, r, v)
		}
		if l.min || sr.bounded || r.fired[0] {
			return
		}
		r.temps++
		if r.temps <= 3 {
			if v > 0 {
				r.tempRef = max(r.tempRef, v)
			}
			return
		}
		if r.tempRef > 0 && v >= m.th.TemperatureRise*r.tempRef {
			r.fired[0] = true
			m.raise(detProfile, finding{state: protocol.Error,
				message:  fmt.Sprintf("LAMMPS: temperature exploded: Temp %s is %s× its start (%s)", num(v), num(v/r.tempRef), num(r.tempRef)),
				evidence: fmt.Sprintf("%s = %s, start %s", sr.label(), num(v), num(r.tempRef)), severity: 1,
				role: sr.roleText(), correction: l.stepCorrection()})
		}
	case "Volume", "Vol":
		if l.min || sr.bounded || r.fired[3] || v <= 0 {
			return
		}
		if r.volRef == 0 {
			r.volRef = v
			return
		}
		if v >= boxRise*r.volRef {
			r.fired[3] = true
			m.raise(detProfile, finding{state: protocol.Error,
				message: fmt.Sprintf("LAMMPS: the box exploded: Volume %s is %s× its start (%s): the density fell %s-fold, the system has come apart",
					num(v), num(v/r.volRef), num(r.volRef), num(v/r.volRef)),
				evidence: fmt.Sprintf("%s = %s, start %s", sr.label(), num(v), num(r.volRef)), severity: 1,
				correction: "raise the barostat's damping time (Pdamp about 1000 timesteps, as the LAMMPS manual recommends), start the barostat from an equilibrated pressure, and check the timestep"})
		}
	case "TotEng":
		if l.min {
			return
		}
		if !r.haveKin && r.havePot {
			r.keMx = max(r.keMx, v-r.pot)
		}
		if !r.haveE0 {
			r.e0, r.haveE0 = v, true
			return
		}
		if scale := max(abs(r.e0), r.keMx); !r.fired[1] && !sr.bounded && scale > 0 && v-r.e0 >= m.th.EnergyRise*scale {
			r.fired[1] = true
			m.raise(detProfile, finding{state: protocol.Error,
				message:  fmt.Sprintf("LAMMPS: energy exploded: TotEng rose from %s to %s", num(r.e0), num(v)),
				evidence: fmt.Sprintf("%s = %s, start %s", sr.label(), num(v), num(r.e0)), severity: 1,
				correction: l.stepCorrection()})
		}
		if !l.nve || r.fired[2] || r.keMx <= 0 {
			return
		}
		drift := abs(v - r.e0)
		share := drift / r.keMx
		r.recent[r.shares.n%(2*driftRun)] = share
		r.shares.add(share)
		if share >= m.th.NVEDrift/nveSecular {
			r.over++
		} else {
			r.over = 0
		}
		switch {
		case share >= m.th.NVEDrift/nveSecular && r.over >= driftRun && r.shares.n >= nveMinRows &&
			(share >= driftSecular*r.shares.firstHalfMax() || share >= 2*m.th.NVEDrift/nveSecular && r.climbing()):
			r.fired[2] = true
			m.raise(detProfile, finding{state: protocol.Error,
				message: fmt.Sprintf("LAMMPS: energy not conserved under NVE: TotEng (conserved: the input integrates with fix nve alone) drifted by %s (%s of the kinetic energy %s), and the drift keeps growing (%s in the first half of the run)",
					num(drift), percent(share), num(r.keMx), percent(r.shares.firstHalfMax())),
				evidence: fmt.Sprintf("%s = %s, start %s", sr.label(), num(v), num(r.e0)), severity: 0.9,
				role: sr.label() + ": conserved, the input integrates with fix nve and nothing that adds or removes energy", correction: l.stepCorrection()})
		case share >= m.th.NVEDrift:
			r.fired[2] = true
			m.raise(detProfile, finding{state: protocol.Error,
				message:  fmt.Sprintf("LAMMPS: energy not conserved under NVE: TotEng (conserved: the input integrates with fix nve alone) drifted by %s (%s of the kinetic energy %s)", num(drift), percent(share), num(r.keMx)),
				evidence: fmt.Sprintf("%s = %s, start %s", sr.label(), num(v), num(r.e0)), severity: 0.9,
				role: sr.label() + ": conserved, the input integrates with fix nve and nothing that adds or removes energy", correction: l.stepCorrection()})
		case share >= m.th.NVEDrift/5 && !r.drifting:
			r.drifting = true
			m.raise(detProfile, finding{state: protocol.Warning,
				message:  fmt.Sprintf("LAMMPS: energy drifting under NVE: TotEng moved by %s (%s of the kinetic energy %s)", num(drift), percent(share), num(r.keMx)),
				evidence: fmt.Sprintf("%s = %s, start %s", sr.label(), num(v), num(r.e0)), severity: 0.5})
		}
	}
}

// climbing reports whether the drift rose in at least 8 of the last 9 rows, and by at least
// half as much over the last 10 rows as over the 10 before: it keeps growing row after row
// at a steady pace, even when that pace is slower than its start (a timestep too large
// shifts the energy fast at first, then keeps pushing it up), while a shift that holds
// fluctuates up and down, or levels off.
func (r *lammpsRun) climbing() bool {
	const w = 2 * driftRun
	n := r.shares.n
	if n < w {
		return false
	}
	at := func(k int) float64 { return r.recent[k%w] }
	ups := 0
	for k := n - driftRun + 1; k < n; k++ {
		if at(k) > at(k-1) {
			ups++
		}
	}
	last, before := at(n-1)-at(n-driftRun), at(n-driftRun)-at(n-w)
	return ups >= driftRun-2 && last > 0 && last >= 0.5*before
}

// lammpsMessage is the text of an ERROR line without its prefix and source location:
// "ERROR on proc 0: Unknown command: velcity … (src/input.cpp:232)" → "Unknown command: velcity …".
func lammpsMessage(line string) string {
	_, msg, ok := strings.Cut(line, ": ")
	if !ok {
		return line
	}
	if i := strings.LastIndex(msg, " (src/"); i > 0 {
		msg = msg[:i]
	}
	return msg
}

func percent(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// setpointColdRows is how many rows of a temperature at a thousandth of its target suffice.
const setpointColdRows = 5

const (
	// nveSecular: a drift of NVEDrift/nveSecular (1%) of the kinetic energy that keeps
	// growing is an Error (velocity Verlet at a sound timestep holds TotEng to 10⁻³ of it) …
	nveSecular = 25
	// nveMinRows: … judged from this many thermo rows on.
	nveMinRows = 12
)

// lammpsSetpoint judges the thermostatted temperature against the thermostat's target: the
// target at this step (Tstart → Tstop along the run when its length and the Step column are
// known; the nearer end of the ramp otherwise), and Temp more than SetpointDeviation (50%)
// away from it for SetpointRows (15) thermo rows in a row, spanning at least five Tdamp (the
// thermostat's own relaxation time: a run started far from its target gets there in a few; a
// quarter of the run when five Tdamp outlast it, a thermostat too weak to act within it) →
// Error; for 5 rows when Temp is below a thousandth of the target all along (atoms at rest,
// which a Nose-Hoover thermostat cannot heat). A small system's temperature fluctuates by tens of percent, a heating ramp lags its
// target by a little; a temperature at 10⁻³⁰ K under a 300 K thermostat, or at ten times the
// target, for a whole stretch of the run, is not held by the thermostat at all.
func (m *Monitor) lammpsSetpoint(sr *series, r *lammpsRun, v float64) {
	l := &m.lmp
	th := &l.thermo
	if r.setFired {
		return
	}
	target := th.tstart
	switch {
	case th.tstop == th.tstart:
	case th.runN > 0 && r.haveStep:
		frac := min(max((r.step-r.step0)/th.runN, 0), 1)
		target = th.tstart + frac*(th.tstop-th.tstart)
	default:
		lo, hi := min(th.tstart, th.tstop), max(th.tstart, th.tstop)
		target = min(max(v, lo), hi)
	}
	if dev := abs(v-target) / target; dev <= m.th.SetpointDeviation || !(v == v) {
		r.offRows = 0
		return
	}
	if r.offRows == 0 {
		r.offFrom = r.step
	}
	r.offRows++
	if v >= 1e-3*target {
		r.coldRows = 0
	} else {
		r.coldRows++ // at rest: no thermostat leaves atoms at a thousandth of its target
	}
	need := 5 * l.tdampSteps()
	if th.runN > 0 && need > th.runN {
		// A thermostat whose five relaxation times outlast the run cannot bring the
		// temperature to its target within it at all: the excuse lasts a quarter of the run.
		need = th.runN / 4
	}
	rows := m.th.SetpointRows
	if r.coldRows == r.offRows {
		// Atoms at rest: a Nose-Hoover or rescaling thermostat multiplies velocities and
		// cannot start them however long it is given, so its relaxation time is no excuse;
		// Langevin's random kicks heat them within a Tdamp.
		rows, need = min(rows, setpointColdRows), 0
		if th.style == "langevin" {
			need = l.tdampSteps()
		}
	}
	if r.offRows < rows || (r.haveStep && r.step-r.offFrom < need) {
		return
	}
	r.setFired = true
	fix := "check that the thermostat acts on the atoms measured (its group), that Tdamp (" + num(th.tdmp) + ") is in the units' time and that nothing else (fix setforce, a frozen group, a velocity rescale) fights it"
	switch n := l.tdampSteps(); {
	case n > 0 && n < 100:
		fix = fmt.Sprintf("Tdamp is %s timesteps: LAMMPS recommends about 100 timesteps, raise it to %s; ", num(n), num(100*l.dt())) + fix
	case n > 0 && th.runN > 0 && 5*n > th.runN:
		fix = fmt.Sprintf("Tdamp is %s timesteps, so the thermostat needs longer than the whole run (%s steps) to act: LAMMPS recommends about 100 timesteps, lower it to %s (Tdamp is in the units' time: ps in metal units); ",
			num(n), num(th.runN), num(100*l.dt())) + fix
	}
	if v < 1e-3*target && th.style != "langevin" {
		fix = "a Nose-Hoover or rescaling thermostat cannot heat atoms at rest: give them velocities first (velocity all create " + num(target) + " SEED); " + fix
	}
	m.raise(detSetpoint, finding{state: protocol.Error,
		message: fmt.Sprintf("LAMMPS: Temp %s is far from the thermostat's target %s for %d thermo rows (since step %s); it is a %s",
			num(v), num(target), r.offRows, num(r.offFrom), sr.role.describe()),
		evidence: fmt.Sprintf("%s = %s, target %s", sr.label(), num(v), num(target)), severity: 0.9,
		role: sr.roleText(), correction: fix})
}
