package perception

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

// replayed is what a Monitor made of a recorded output.
type replayed struct {
	verdicts []emitted
	lines    []string             // the lines, indexed like verdicts' At
	series   map[string][]float64 // what Parsed returned, by series name
	final    protocol.Verdict
}

// replay feeds a recorded stdout (a real run of the code, testdata/profiles) through a
// monitor, one line every 10 ms.
func replay(t *testing.T, cfg *Config, file string) replayed {
	t.Helper()
	b, err := os.ReadFile("testdata/profiles/" + file)
	if err != nil {
		t.Fatal(err)
	}
	m := newMonitor(t, cfg)
	r := replayed{series: map[string][]float64{}}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		r.lines = append(r.lines, line)
		if v := m.Observe(stdout(float64(i)*0.01, line)); v != nil {
			r.verdicts = append(r.verdicts, emitted{i, v.State, v.Detector})
		}
		for _, s := range m.Parsed() {
			r.series[s.Name] = append(r.series[s.Name], s.Value)
		}
	}
	r.final = m.Verdict()
	return r
}

func TestProfileFor(t *testing.T) {
	for _, c := range []struct {
		kernel, code string
		want         Profile
	}{
		{"shell", "pw.x < si.in > si.out", ProfileQE},
		{"shell", "mpirun -np 2 pw.x -inp relax.in", ProfileQE},
		{"shell", "/usr/bin/pw.x<in", ProfileQE},
		{"shell", "cat > in.cu <<EOF\nunits metal\nEOF\nlmp -in in.cu", ProfileLAMMPS},
		{"shell", "mpirun --allow-run-as-root -np 2 lmp_mpi -in in.lj", ProfileLAMMPS},
		{"python", "import subprocess\nsubprocess.run(['pw.x', '-in', 'scf.in'])", ProfileQE},
		{"python", "from lammps import lammps\nlmp = lammps()", ProfileLAMMPS},
		{"octave", "system('pw.x < scf.in')", ProfileQE},
		{"shell", "# pw.x would be nice\nls", ProfileShell},
		{"shell", "echo lmp.x pwx", ProfileShell},
		{"python", "print(1)", ProfilePython},
		{"octave", "x = 1", ProfileOctave},
		{"fortran", "", ProfileGeneric},
	} {
		if got := ProfileFor(c.kernel, c.code); got != c.want {
			t.Errorf("ProfileFor(%q, %q) = %q, want %q", c.kernel, c.code, got, c.want)
		}
	}
	for in, want := range map[string]Profile{"QE": ProfileQE, "quantum-espresso": ProfileQE, "pw.x": ProfileQE, "lmp": ProfileLAMMPS, "": ProfileGeneric} {
		if got, err := ParseProfile(in); err != nil || got != want {
			t.Errorf("ParseProfile(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseProfile("vasp"); err == nil || !strings.Contains(err.Error(), "qe") || !strings.Contains(err.Error(), "lammps") {
		t.Errorf("ParseProfile(vasp) = %v, want an error listing the profiles", err)
	}
	if _, err := New(&Config{Profile: "vasp"}); err == nil {
		t.Error("New accepted an unknown profile")
	}
}

func TestQuantumEspresso(t *testing.T) {
	qe := &Config{Profile: ProfileQE}
	t.Run("converging SCF", func(t *testing.T) {
		r := replay(t, qe, "qe_si_scf.out")
		if r.verdicts != nil {
			t.Errorf("verdicts %v on a healthy SCF", r.verdicts)
		}
		want := map[string][]float64{
			"scf_iteration": {1, 2, 3, 4, 5, 6, 7},
			"scf_accuracy":  {0.10332491, 0.00457007, 0.00009279, 0.00000179, 0.00000018, 0.00000006},
			"total_energy":  {-15.61435403},
			"total_force":   {0},
			"pressure":      {47.47},
		}
		got := map[string][]float64{} // the profile's series (the pairs pw.x prints come too: ecut, beta, energy…)
		for name := range want {
			got[name] = r.series[name]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("series (-want +got):\n%s", diff)
		}
		if n := len(r.series["energy"]); n != 7 {
			t.Errorf("%d values of energy read from the `total energy = … Ry` pairs, want 7", n)
		}
	})
	t.Run("charge sloshing", func(t *testing.T) {
		r := replay(t, qe, "qe_al_sloshing.out")
		if len(r.verdicts) != 1 || r.verdicts[0].State != protocol.Error || r.verdicts[0].Detector != DetectorProfile {
			t.Fatalf("verdicts %v, want one Error from the profile", r.verdicts)
		}
		if !strings.Contains(r.final.Message, "SCF diverging") {
			t.Errorf("message %q", r.final.Message)
		}
		if n := len(r.series["scf_accuracy"]); n < 10 {
			t.Errorf("%d accuracies read", n)
		}
		if at := r.lines[r.verdicts[0].At]; !strings.Contains(at, "estimated scf accuracy") {
			t.Errorf("stopped at %q", at)
		}
	})
	for _, c := range []struct {
		file, message, evidence string
	}{
		{"qe_not_converged.out", "convergence NOT achieved", "after   3 iterations"},
		{"qe_bad_pseudo.out", "error in routine readpp (1)", "Si.pz-nonexistent.UPF not found"},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := replay(t, qe, c.file)
			if r.final.State != protocol.Error || r.final.Detector != DetectorProfile || !strings.Contains(r.final.Message, c.message) ||
				!strings.Contains(strings.Join(r.final.Evidence, "\n"), c.evidence) {
				t.Errorf("verdict %+v, want an Error %q with evidence %q", r.final, c.message, c.evidence)
			}
		})
	}
	t.Run("generic profile is blind to QE", func(t *testing.T) {
		r := replay(t, nil, "qe_al_sloshing.out")
		if r.verdicts != nil {
			t.Errorf("generic profile: verdicts %v", r.verdicts)
		}
		for _, name := range []string{"scf_iteration", "scf_accuracy", "total_energy", "total_force", "pressure"} {
			if r.series[name] != nil {
				t.Errorf("generic profile read the QE series %s: %v", name, r.series[name])
			}
		}
	})
}

func TestQuantumEspressoLines(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		want  protocol.VerdictState
	}{
		{"noisy start", scfLines(0.02, 5e-4, 1.8e-4, 0.015, 1e-5, 4e-6, 3e-7, 1e-8), protocol.Normal},
		{"slow but improving", scfLines(geometric(1, 0.7, 40)...), protocol.Normal},
		{"stalled", scfLines(append(geometric(1, 0.1, 5), 0.01, 0.02, 0.05, 0.01, 0.03, 0.02, 0.04, 0.01, 0.02, 0.03, 0.05, 0.02, 0.04)...), protocol.Error},
		{"a new cycle starts over", append(scfLines(1, 1e-6), scfLines(1, 0.5, 0.1)...), protocol.Normal},
		// pw.x on this machine: h_qe_al_noisy_start's SCF, with one 30× rise near convergence.
		{"real noisy start", scfLines(0.02025005, 0.00082386, 0.00008868, 0.00081569, 0.00000103, 0.00000113, 0.00000006, 0.00000178, 2.3e-09), protocol.Normal},
		{"plateau within a few times the best", scfLines(1e-2, 5e-3, 6e-3, 4e-3, 5e-3, 3e-3, 4e-3, 2e-3, 3e-3, 1e-3, 2e-3, 8e-4), protocol.Normal},
		{"single spikes fall back", scfLines(1e-2, 1e-4, 5e-3, 1e-5, 1e-3, 1e-6, 1e-4, 1e-7), protocol.Normal},
		// f_qe_scf_late_sloshing up to iteration 16: converged to 5e-8 at 11, then bounced up to stay.
		{"late sloshing", scfLines(0.02025005, 0.00056061, 0.00017925, 0.01503931, 0.00000974, 0.00006118, 0.00004739, 0.00027210, 0.00002276,
			0.00072156, 0.00000005, 0.00000034, 0.00000189, 0.00000377, 0.00000259, 0.00043311), protocol.Error},
		{"S matrix", []string{"     S matrix not positive definite"}, protocol.Error},
		{"charge", []string{" %%%%%%%%%%%%%%%%%%%%", "     Error in routine efermig (1):", "     charge is wrong: smearing is needed", " %%%%%%%%%%%%%%%%%%%%"}, protocol.Error},
		{"message block", []string{" %%%%%%%%%%%%%%%%%%%%", "     Message from routine setup:", "     using ibrav=0 with symmetry is DISCOURAGED", " %%%%%%%%%%%%%%%%%%%%"}, protocol.Normal},
		{"small negative rho", []string{"     negative rho (up, down):  2.843E-05 0.000E+00"}, protocol.Normal},
		{"large negative rho", []string{"     negative rho (up, down):  1.230E-01 0.000E+00"}, protocol.Warning},
		{"integrated charge", []string{"     WARNING: integrated charge=     7.99000000, expected=     8.00000000"}, protocol.Warning},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(t, &Config{Profile: ProfileQE})
			for i, l := range c.lines {
				m.Observe(stdout(float64(i)*0.1, l))
			}
			if v := m.Verdict(); v.State != c.want {
				t.Errorf("verdict %s (%s), want %s", v.State, v.Message, c.want)
			}
		})
	}
}

// scfLines is one SCF cycle as pw.x prints it.
func scfLines(acc ...float64) []string {
	var out []string
	for i, a := range acc {
		out = append(out, "     iteration #"+strings.Repeat(" ", 2)+itoa(i+1)+"     ecut=    12.00 Ry     beta= 0.70",
			"     total energy              =     -15.61 Ry",
			"     estimated scf accuracy    <       "+num(a)+" Ry")
	}
	return out
}

func itoa(i int) string { return num(float64(i)) }

func TestLAMMPS(t *testing.T) {
	nve := "units metal\nfix 1 all nve\ntimestep 0.030\nrun 2000\n"
	t.Run("NVE, thermo one and multi", func(t *testing.T) {
		r := replay(t, &Config{Profile: ProfileLAMMPS, Code: "fix 1 all nve\nthermo_style multi"}, "lammps_nve_multi.out")
		if r.verdicts != nil {
			t.Errorf("verdicts %v on a healthy NVE run", r.verdicts)
		}
		// 11 rows of the `one` table; Temp, TotEng and Press also from the two `multi` blocks'
		// `name = value` pairs.
		for col, want := range map[string]int{"Step": 11, "Temp": 13, "E_pair": 11, "E_mol": 11, "TotEng": 13, "Press": 13} {
			if n := len(r.series[col]); n != want {
				t.Errorf("%s: %d values read, want %d", col, n, want)
			}
		}
		if got := r.series["Temp"][0]; got != 300 {
			t.Errorf("first Temp %v", got)
		}
	})
	t.Run("lost atoms, NVE declared: the drift stops it first", func(t *testing.T) {
		r := replay(t, &Config{Profile: ProfileLAMMPS, Code: nve}, "lammps_lost_atoms.out")
		if r.final.State != protocol.Error || !strings.Contains(r.final.Message, "energy not conserved") {
			t.Fatalf("verdict %+v", r.final)
		}
		if at := r.verdicts[len(r.verdicts)-1].At; strings.Contains(r.lines[at], "ERROR") || at > 150 {
			t.Errorf("Error at line %d %q: want the drift, well before the ERROR", at, r.lines[at])
		}
	})
	t.Run("lost atoms, ensemble unknown: the explosion in the last row, then the ERROR line", func(t *testing.T) {
		r := replay(t, &Config{Profile: ProfileLAMMPS}, "lammps_lost_atoms.out")
		if r.final.State != protocol.Error || !strings.Contains(r.final.Message, "temperature exploded") ||
			!strings.Contains(strings.Join(r.final.Evidence, "\n"), "ERROR: Lost atoms") {
			t.Errorf("verdict %+v", r.final)
		}
		lines := strings.Join(r.lines[:len(r.lines)-2], "\n") // without the ERROR
		m := newMonitor(t, &Config{Profile: ProfileLAMMPS})
		m.Observe(stdout(0, "ERROR: Lost atoms: original 500 current 331 (src/thermo.cpp:439)"))
		if v := m.Verdict(); v.State != protocol.Error || !strings.Contains(v.Message, "lost atoms") || lines == "" {
			t.Errorf("the ERROR line alone: %+v", v)
		}
	})
	t.Run("NVE with a thermostat is not NVE", func(t *testing.T) {
		r := replay(t, &Config{Profile: ProfileLAMMPS, Code: nve + "fix 2 all langevin 300 300 0.1 48279\n"}, "lammps_lost_atoms.out")
		if strings.Contains(r.final.Message, "NVE") {
			t.Errorf("verdict %+v", r.final)
		}
	})
	t.Run("temperature explosion with lost ignore", func(t *testing.T) {
		r := replay(t, &Config{Profile: ProfileLAMMPS}, "lammps_explode.out")
		if r.final.State != protocol.Error || !strings.Contains(r.final.Message, "temperature exploded") {
			t.Fatalf("verdict %+v", r.final)
		}
		if got := r.series["Temp"]; len(got) < 30 || largest(got) < 3e5 {
			t.Errorf("Temp series %v", got)
		}
	})
	t.Run("a watch bound on Temp replaces the explosion rule", func(t *testing.T) {
		r := replay(t, &Config{Profile: ProfileLAMMPS, Watch: []string{"Temp < 1e6"}}, "lammps_explode.out")
		if strings.Contains(r.final.Message, "temperature") {
			t.Errorf("verdict %+v", r.final)
		}
	})
	for _, c := range []struct {
		line string
		want protocol.VerdictState
	}{
		{"ERROR: Unknown command: fixx 1 all nve (src/input.cpp:232)", protocol.Error},
		{"ERROR on proc 1: Out of range atoms - cannot compute PPPM (src/KSPACE/pppm.cpp:1960)", protocol.Error},
		{"WARNING: Lost atoms: original 500 current 499 (src/thermo.cpp:476)", protocol.Error},
		{"WARNING: Temperature for thermo pressure is not for group all (src/compute_pressure.cpp:84)", protocol.Warning},
		{"WARNING: No fixes defined, atoms won't move (src/verlet.cpp:55)", protocol.Normal},
		{"Dangerous builds = 0", protocol.Normal},
		{"Dangerous builds = 12", protocol.Warning},
	} {
		m := newMonitor(t, &Config{Profile: ProfileLAMMPS})
		m.Observe(stdout(0, c.line))
		if v := m.Verdict(); v.State != c.want {
			t.Errorf("%q: %s (%s), want %s", c.line, v.State, v.Message, c.want)
		}
	}
}

func largest(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func TestLAMMPSHeating(t *testing.T) {
	// A deliberate heating ramp, 300 K to 6000 K under a thermostat: the temperature rises
	// 20×, the energy by less than its scale — Normal.
	m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: "fix 1 all nvt temp 300 6000 0.1"})
	m.Observe(stdout(0, "Step Temp E_pair E_mol TotEng Press"))
	for i := range 50 {
		temp := 300 + float64(i)*120
		m.Observe(stdout(0.1*float64(i), num(float64(i*100))+" "+num(temp)+" "+num(-1770+0.06*temp)+" 0 "+num(-1770+0.13*temp)+" 1e4"))
	}
	if v := m.Verdict(); v.State != protocol.Normal {
		t.Errorf("a heating ramp: %+v", v)
	}
}

// TestLAMMPSBox: under NPT a box that grows tenfold has come apart (an Error naming the
// barostat); one that expands by a fifth as it melts is Normal.
func TestLAMMPSBox(t *testing.T) {
	for _, c := range []struct {
		name  string
		grow  float64 // the volume's growth per row
		state protocol.VerdictState
	}{
		{"melting", 1.004, protocol.Normal},
		{"torn apart", 1.15, protocol.Error},
	} {
		m := newMonitor(t, &Config{Profile: ProfileLAMMPS, Code: "fix 1 all npt temp 300 300 0.1 iso 0 0 0.02"})
		m.Observe(stdout(0, "Step Temp PotEng Press Volume"))
		vol := 16000.0
		for i := range 50 {
			m.Observe(stdout(0.1*float64(i), num(float64(i*100))+" 300 "+num(-1768+float64(i))+" 100 "+num(vol)))
			vol *= c.grow
		}
		v := m.Verdict()
		if v.State != c.state || c.state == protocol.Error && (!strings.Contains(v.Message, "box exploded") || !strings.Contains(v.Correction, "Pdamp")) {
			t.Errorf("%s: %s %q (correction %q), want %s", c.name, v.State, v.Message, v.Correction, c.state)
		}
	}
}

// TestQEForcesNoise: a relaxation whose SCF correction is as large as its forces for three
// ionic steps, the force not falling, follows noise (an Error naming conv_thr); one whose
// correction is large while its forces still fall, and one whose correction is small, are
// Normal.
func TestQEForcesNoise(t *testing.T) {
	for _, c := range []struct {
		name   string
		forces [][2]float64 // total force, SCF correction
		state  protocol.VerdictState
	}{
		{"noise", [][2]float64{{0.0466, 0.0054}, {0.0310, 0.0290}, {0.0309, 0.0181}, {0.0131, 0.0123}, {0.0095, 0.0141}, {0.0085, 0.0127}, {0.0131, 0.0171}}, protocol.Error},
		{"falling through noise", [][2]float64{{0.04, 0.03}, {0.018, 0.012}, {0.008, 0.006}, {0.003, 0.002}, {0.001, 0.0007}}, protocol.Normal},
		{"sound", [][2]float64{{0.04, 0.0004}, {0.03, 0.0003}, {0.03, 0.0002}, {0.02, 0.0001}, {0.01, 0.0001}}, protocol.Normal},
	} {
		m := newMonitor(t, &Config{Profile: ProfileQE})
		at := 0.0
		for _, f := range c.forces {
			for it := 1; it <= 3; it++ {
				m.Observe(stdout(at, fmt.Sprintf("     iteration #  %d     ecut=    25.00 Ry     beta= 0.70", it)))
				m.Observe(stdout(at+0.01, fmt.Sprintf("     estimated scf accuracy    <       %.8f Ry", 0.01/float64(it*it))))
				at += 0.05
			}
			m.Observe(stdout(at, fmt.Sprintf("     Total force =     %.6f     Total SCF correction =     %.6f", f[0], f[1])))
			at += 0.5
		}
		v := m.Verdict()
		if v.State != c.state || c.state == protocol.Error && (!strings.Contains(v.Message, "forces are noise") || !strings.Contains(v.Correction, "conv_thr")) {
			t.Errorf("%s: %s %q (correction %q), want %s", c.name, v.State, v.Message, v.Correction, c.state)
		}
	}
}
