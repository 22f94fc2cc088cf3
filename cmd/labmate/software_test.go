package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSoftware(t *testing.T) {
	out, errOut, code := labmate(t, t.TempDir(), "", "software")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"control", "signal", "optim", "statistics", "symbolic", "stepinfo allmargin iirnotch",
		"gnuplot", "matplotlib", "sympy", "pandas", "ase", "pw.x", "/usr/share/espresso/pseudo: 66 pseudopotentials",
		"lmp", "/usr/share/lammps/potentials: 229 interatomic potentials", "mpirun", "4.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("software output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "NOT AVAILABLE") {
		t.Errorf("something scripts/deps installs is missing:\n%s", out)
	}
	out, _, code = labmate(t, t.TempDir(), "", "software", "--json")
	var v struct {
		Software []struct {
			Group, Name, Version, Error string
			Data                        *struct {
				Dir   string
				Count int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("software --json: exit %d, %v\n%s", code, err, out)
	}
	n := 0
	for _, it := range v.Software {
		if it.Error != "" {
			t.Errorf("%s/%s: %s", it.Group, it.Name, it.Error)
		}
		if it.Name == "pw.x" && (it.Data == nil || it.Data.Count < 60) {
			t.Errorf("pw.x data %+v", it.Data)
		}
		n++
	}
	if n < 18 {
		t.Errorf("%d items, want the 18 the science stacks need at least", n)
	}
	if out, _, _ := labmate(t, t.TempDir(), "", "kernels"); !strings.Contains(out, "labmate software") {
		t.Errorf("kernels does not point to labmate software:\n%s", out)
	}
}

// TestMPIAsOrdinaryUser runs mpirun -np 2 of LAMMPS and Quantum ESPRESSO in the shell kernel with
// labmate started as nobody (who cannot make cgroups on a cgroup v1 machine, hence --memory
// unlimited): no MPI flag is needed there either.
func TestMPIAsOrdinaryUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run labmate as another user")
	}
	dir, err := os.MkdirTemp("", "labmate-nobody-mpi-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	nobodyBin := filepath.Join(dir, "labmate")
	copyFile(t, bin, nobodyBin)
	script := `id -u
cat > cu.lmp <<'EOF'
units metal
lattice fcc 3.615
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff * * /usr/share/lammps/potentials/Cu_u3.eam
run 0
EOF
mpirun -np 2 lmp -in cu.lmp -log none | grep -o "2 MPI tasks"
cat > si.in <<'EOF'
&control
  pseudo_dir = '/usr/share/espresso/pseudo', outdir = './tmp'
/
&system
  ibrav = 2, celldm(1) = 10.26, nat = 2, ntyp = 1, ecutwfc = 12
/
&electrons
/
ATOMIC_SPECIES
  Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
  Si 0.00 0.00 0.00
  Si 0.25 0.25 0.25
K_POINTS gamma
EOF
mpirun -np 2 pw.x -in si.in | grep -o "running on *2 processors"
`
	cmd := exec.Command(nobodyBin, "exec", "--mem-limit", "unlimited", "--hotfix", "off", "--kernel", "shell", "-")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	want := "1000\n2 MPI tasks\nrunning on     2 processors\n"
	if out.String() != want {
		t.Errorf("as nobody: %v\nstdout %q, want %q\nstderr %s", err, out.String(), want, errb.String())
	}
}
