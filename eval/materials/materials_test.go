package materials

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/examples/skills"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/kernel/shell"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/skillmd"
	"github.com/labmate/labmate/memory/sqlite"
	"github.com/labmate/labmate/protocol"
)

func rel(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// TestFitBM fits energies computed from the Birch–Murnaghan form itself: the fit must give back
// its parameters, also when the scan is off-centre.
func TestFitBM(t *testing.T) {
	cases := []struct {
		name, structure    string
		a0, e0, b0, b0p    float64
		centre, halfWidth  float64 // the scan's centre (× a0) and half-width
		points             int
		tolA, tolB, tolB0p float64
	}{
		{"Al-like fcc", FCC, 4.02, -3.4, 79, 4.5, 1, 0.03, 7, 1e-9, 1e-7, 1e-5},
		{"W-like bcc", BCC, 3.16, -8.9, 314, 4.2, 1, 0.03, 7, 1e-9, 1e-7, 1e-5},
		{"Li-like soft bcc", BCC, 3.45, -1.6, 13, 3.5, 1, 0.03, 7, 1e-9, 1e-7, 1e-5},
		{"Si-like diamond", Diamond, 5.43, -4.6, 99, 4.2, 1, 0.03, 7, 1e-9, 1e-7, 1e-5},
		{"off-centre window", FCC, 3.6, -3.5, 140, 5, 1.025, 0.03, 7, 1e-9, 1e-7, 1e-5},
		{"five points", FCC, 3.6, -3.5, 140, 5, 1, 0.02, 5, 1e-9, 1e-7, 1e-5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v0 := volumePerAtom(c.structure, c.a0)
			var vs, es []float64
			for i := range c.points {
				a := c.a0 * c.centre * (1 + c.halfWidth*(2*float64(i)/float64(c.points-1)-1))
				v := volumePerAtom(c.structure, a)
				vs = append(vs, v)
				es = append(es, BirchMurnaghan(v, c.e0, v0, c.b0, c.b0p))
			}
			f, err := FitBM(c.structure, vs, es)
			if err != nil {
				t.Fatal(err)
			}
			if rel(f.A0, c.a0) > c.tolA || rel(f.B0, c.b0) > c.tolB || rel(f.B0p, c.b0p) > c.tolB0p || math.Abs(f.E0-c.e0) > 1e-9 || f.RMS > 1e-9 {
				t.Errorf("fit %+v; want a0 %g, e0 %g, b0 %g, b0' %g", f, c.a0, c.e0, c.b0, c.b0p)
			}
		})
	}
	bad := []struct {
		name string
		v, e []float64
		want string
	}{
		{"four points", []float64{10, 11, 12, 13}, []float64{1, 0, 0, 1}, "at least 5 points"},
		{"no minimum", []float64{10, 11, 12, 13, 14}, []float64{5, 4, 3, 2, 1}, "no minimum"},
		{"NaN energy", []float64{10, 11, 12, 13, 14}, []float64{1, 0, math.NaN(), 0, 1}, "point 3"},
		{"equal volumes", []float64{10, 10, 10, 10, 10}, []float64{1, 0, 0, 0, 1}, "all volumes are equal"},
	}
	for _, c := range bad {
		if _, err := FitBM(FCC, c.v, c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestTemplates(t *testing.T) {
	for _, s := range Setups {
		tmpl, err := s.Template()
		if err != nil {
			t.Errorf("%s/%s: %v", s.Method, s.Element, err)
			continue
		}
		if strings.Count(tmpl, placeholderA) != 1 {
			t.Errorf("%s/%s: want one %s in\n%s", s.Method, s.Element, placeholderA, tmpl)
		}
		var need []string
		if s.Method == QE {
			need = []string{"pseudo_dir = '" + PseudoDir + "'", s.Pseudo, fmt.Sprintf("ecutwfc = %g", s.Ecutwfc), fmt.Sprintf("%d %d %d 0 0 0", s.K, s.K, s.K)}
			if s.Spin {
				need = append(need, "nspin = 2, starting_magnetization(1) = 0.5")
			}
			if s.SpinOrbit {
				need = append(need, "lspinorb = .true.")
			}
			if s.Degauss > 0 {
				need = append(need, "smearing = 'mv'")
			} else if strings.Contains(tmpl, "smearing") {
				t.Errorf("%s: an insulator with smearing", s.Element)
			}
			if _, err := os.Stat(filepath.Join(PseudoDir, s.Pseudo)); err != nil {
				t.Errorf("%s: %v (quantum-espresso-data; run scripts/deps)", s.Element, err)
			}
		} else {
			need = []string{"pair_style " + s.PairStyle, s.Potential, "lattice " + s.Structure + " " + placeholderA, "EOS_ENERGY"}
			if _, err := os.Stat(filepath.Join(PotentialsDir, s.Potential)); err != nil {
				t.Errorf("%s: %v (lammps-data; run scripts/deps)", s.Element, err)
			}
		}
		for _, n := range need {
			if !strings.Contains(tmpl, n) {
				t.Errorf("%s/%s: template lacks %q:\n%s", s.Method, s.Element, n, tmpl)
			}
		}
		if _, ok := References[s.Element]; !ok {
			t.Errorf("%s: no experimental reference", s.Element)
		}
	}
	si := Setups[slicesIndex(QE, "Si")]
	pts := si.ScanPoints(5.4)
	if len(pts) != 7 || pts[3] != fmt.Sprintf("%.6f", 5.4/bohr) || pts[0] != fmt.Sprintf("%.6f", 5.4*0.97/bohr) || pts[6] != fmt.Sprintf("%.6f", 5.4*1.03/bohr) {
		t.Errorf("Si scan points (bohr) %v", pts)
	}
}

func slicesIndex(method, el string) int {
	for i, s := range Setups {
		if s.Method == method && s.Element == el {
			return i
		}
	}
	panic(el)
}

func TestSelect(t *testing.T) {
	if s, err := Select([]string{"Si", "Cu"}, nil); err != nil || len(s) != 3 {
		t.Errorf("Si,Cu: %d setups, %v; want QE Si and Cu, LAMMPS Cu", len(s), err)
	}
	for _, c := range []struct {
		el, method []string
		want       string
	}{
		{[]string{"Ag"}, []string{QE}, "no Ag pseudopotential"},
		{[]string{"Xx"}, nil, "Xx (not a benchmark element)"},
		{nil, []string{"vasp"}, "method vasp"},
	} {
		if _, err := Select(c.el, c.method); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Select(%v, %v) = %v, want %q", c.el, c.method, err, c.want)
		}
	}
}

// TestSkill: the skill the benchmark runs is a valid SKILL.md that labmate's memory imports,
// and its table of parameters is the benchmark's.
func TestSkill(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "skills")
	all, err := skillmd.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(sk *memory.Skill) bool { return sk.Name == SkillName })
	if i < 0 {
		t.Fatalf("no skill %s in %s", SkillName, dir)
	}
	body := all[i].Body
	for _, s := range Setups {
		row := s.Pseudo
		if s.Method == LAMMPS {
			row = s.Potential
			if strings.HasSuffix(row, "_u3.eam") {
				row = "X_u3.eam"
			}
		}
		line := ""
		for l := range strings.Lines(body) {
			if strings.HasPrefix(l, "| ") && strings.Contains(l, row) && strings.Contains(l, s.Element) {
				line = l
			}
		}
		if line == "" {
			t.Errorf("SKILL.md has no row for %s %s (%s)", s.Method, s.Element, row)
			continue
		}
		if s.Method == QE && !strings.Contains(line, fmt.Sprintf("| %g / %g |", s.Ecutwfc, s.Ecutrho)) {
			t.Errorf("SKILL.md's %s row %q does not say %g / %g Ry", s.Element, strings.TrimSpace(line), s.Ecutwfc, s.Ecutrho)
		}
		if s.Method == QE && !strings.Contains(line, fmt.Sprintf("| %d |", s.K)) {
			t.Errorf("SKILL.md's %s row %q does not say k = %d", s.Element, strings.TrimSpace(line), s.K)
		}
	}
	for el, r := range References {
		if !strings.Contains(body, fmt.Sprintf("%s %.3f", el, r.A0)) {
			t.Errorf("SKILL.md's references lack %s %.3f", el, r.A0)
		}
	}
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	res, err := skillmd.Sync(context.Background(), store, dir, "user/skills", "test")
	if err != nil || res.Created != len(all) {
		t.Fatalf("memory sync: %+v, %v", res, err)
	}
}

// TestPythonFitAgrees runs the skill's bm_fit.py in the real Python kernel on the points of a
// synthetic pw.x scan and compares it with FitBM.
func TestPythonFitAgrees(t *testing.T) {
	t.Parallel()
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	si := Setups[slicesIndex(QE, "Si")]
	if err := prepare(skills.FS, &si, opts.Workspace); err != nil {
		t.Fatal(err)
	}
	// A Si-like curve in pw.x's units: bohr and Ry per 2-atom cell.
	a0, e0, b0, b0p := 5.40, -107.8, 96.0, 4.1
	v0 := volumePerAtom(Diamond, a0)
	var scanText strings.Builder
	var vs, es []float64
	for _, p := range si.ScanPoints(5.43) {
		var ab float64
		fmt.Sscan(p, &ab)
		a := ab * bohr
		v := volumePerAtom(Diamond, a)
		e := BirchMurnaghan(v, e0, v0, b0, b0p)
		fmt.Fprintf(&scanText, "%s %.10f\n", p, 2*e/rydberg)
		vs, es = append(vs, v), append(es, e)
	}
	if err := os.WriteFile(filepath.Join(opts.Workspace, "scan.txt"), []byte(scanText.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := python.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: `import subprocess
print(subprocess.run(["python3", "bm_fit.py", "diamond", "2", "ry"], stdin=open("scan.txt"), capture_output=True, text=True, check=True).stdout)`, Timeout: time.Minute})
	if r.Err != nil || r.Res.Status != protocol.StatusOK || len(r.Stdout) == 0 {
		t.Fatalf("%v %+v\n%s", r.Err, r.Res, r.Output())
	}
	var py Fit
	if err := json.Unmarshal([]byte(r.Stdout[0]), &py); err != nil {
		t.Fatalf("%v: %q", err, r.Stdout)
	}
	gofit, err := FitBM(Diamond, vs, es)
	if err != nil {
		t.Fatal(err)
	}
	if rel(py.A0, gofit.A0) > 1e-7 || rel(py.B0, gofit.B0) > 1e-5 || rel(py.B0p, gofit.B0p) > 1e-4 || math.Abs(py.E0-gofit.E0) > 1e-6 {
		t.Errorf("bm_fit.py %+v, FitBM %+v", py, gofit)
	}
	if rel(py.A0, a0) > 1e-6 || rel(py.B0, b0) > 1e-4 {
		t.Errorf("bm_fit.py %+v, want a0 %g, B0 %g", py, a0, b0)
	}
}

// TestRunQuick is the benchmark's quick mode through the real codes in the sandbox: Si, Al and
// Cu with Quantum ESPRESSO, Al and Cu with LAMMPS.
func TestRunQuick(t *testing.T) {
	t.Parallel()
	opts := testutil.KernelOptions(t)
	dir := t.TempDir()
	start := time.Now()
	results, err := Run(context.Background(), &Options{Skills: skills.FS, Start: shell.Start, Kernel: opts, Dir: dir, Elements: []string{"Si", "Al", "Cu"}})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("quick mode: %v", took)
	if took > 90*time.Second {
		t.Errorf("quick mode took %v; it must stay well under a minute on two cores", took)
	}
	if len(results) != 5 {
		t.Fatalf("%d results, want 5", len(results))
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, results, took.Seconds()); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md.String())
	for _, r := range results {
		if r.Verdict != Correct || r.Fit == nil {
			t.Errorf("%s %s: %s %s", r.Method, r.Element, r.Verdict, r.Error)
			continue
		}
		if len(r.Points) < 7 || r.Fit.RMS > 1e-3 {
			t.Errorf("%s %s: %d points, residual %g eV/atom", r.Method, r.Element, len(r.Points), r.Fit.RMS)
		}
		if r.Fit.B0 < 0.5*r.Exp.B0 || r.Fit.B0 > 1.5*r.Exp.B0 {
			t.Errorf("%s %s: B0 %.0f GPa, experiment %.0f", r.Method, r.Element, r.Fit.B0, r.Exp.B0)
		}
		if _, err := os.Stat(filepath.Join(dir, r.Method+"-"+r.Element, "template.in")); err != nil {
			t.Errorf("%s %s: %v", r.Method, r.Element, err)
		}
	}
}

// TestScanFails: a setup whose pseudopotential does not exist is a Failed result that says why.
func TestScanFails(t *testing.T) {
	t.Parallel()
	opts := testutil.KernelOptions(t)
	bad := Setups[slicesIndex(QE, "Si")]
	bad.Pseudo = "Si.missing.UPF"
	r := scan(context.Background(), &Options{Skills: skills.FS, Start: shell.Start, Kernel: opts}, &bad, t.TempDir(), time.Minute)
	if r.Verdict != Failed || !strings.Contains(r.Error, "did not converge") {
		t.Errorf("%+v; want Failed: did not converge", r)
	}
}

// TestRescan: a guess far from the minimum makes the first window miss it; the scan is repeated
// around the fitted a0 and the result is the right one.
func TestRescan(t *testing.T) {
	t.Parallel()
	opts := testutil.KernelOptions(t)
	cu := Setups[slicesIndex(LAMMPS, "Cu")]
	cu.Guess = 3.40 // the window 3.30–3.50 Å lies below Cu_u3's 3.615 Å
	r := scan(context.Background(), &Options{Skills: skills.FS, Start: shell.Start, Kernel: opts}, &cu, t.TempDir(), time.Minute)
	if r.Fit == nil || !r.Rescanned || len(r.Points) != 14 || math.Abs(r.Fit.A0-3.615) > 0.005 {
		t.Errorf("rescanned %v, %d points, fit %+v, error %q; want a0 3.615 Å after a second window", r.Rescanned, len(r.Points), r.Fit, r.Error)
	}
}
