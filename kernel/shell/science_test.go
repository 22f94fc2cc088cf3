package shell_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/shell"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// The science tests run Debian's Quantum ESPRESSO and LAMMPS, serial and with two MPI ranks,
// in the shell kernel in the sandbox: what scripts/deps installs must work there.

const siSCF = `&control
  calculation = 'scf', pseudo_dir = '/usr/share/espresso/pseudo', outdir = './tmp', prefix = 'si'
/
&system
  ibrav = 2, celldm(1) = 10.26, nat = 2, ntyp = 1, ecutwfc = 20
/
&electrons
  conv_thr = 1e-8
/
ATOMIC_SPECIES
  Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
  Si 0.00 0.00 0.00
  Si 0.25 0.25 0.25
K_POINTS automatic
  4 4 4 0 0 0
`

const cuMin = `units metal
atom_style atomic
lattice fcc 3.6
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff * * /usr/share/lammps/potentials/Cu_u3.eam
thermo 10
fix relax all box/relax iso 0.0
minimize 1e-12 1e-12 1000 10000
print "PE_PER_ATOM $(pe/atoms:%.8f) A $(lx/3:%.6f)"
`

var (
	totalEnergy = regexp.MustCompile(`(?m)^!\s+total energy\s+=\s+(-?[0-9.]+) Ry`)
	peLine      = regexp.MustCompile(`(?m)^PE_PER_ATOM (-?[0-9.]+) A ([0-9.]+)`)
)

func needBinaries(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Fatalf("%s is not installed (run scripts/deps): %v", n, err)
		}
	}
	if _, err := os.Stat("/usr/share/espresso/pseudo/Si.pz-vbc.UPF"); err != nil {
		t.Fatalf("quantum-espresso-data is not installed (run scripts/deps): %v", err)
	}
	if _, err := os.Stat("/usr/share/lammps/potentials/Cu_u3.eam"); err != nil {
		t.Fatalf("lammps-data is not installed (run scripts/deps): %v", err)
	}
}

// runIn starts a shell kernel in opts' sandbox, writes files into its workspace and runs code.
func runIn(t *testing.T, opts kernel.Options, files map[string]string, code string) string {
	t.Helper()
	opts.Workspace = t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(opts.Workspace, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := shell.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: code, Timeout: 2 * time.Minute})
	if r.Err != nil || r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("%v %+v\n%s", r.Err, r.Res, r.Output())
	}
	return strings.Join(r.Stdout, "\n") + "\n" + strings.Join(r.Stderr, "\n")
}

func parse(t *testing.T, re *regexp.Regexp, out string, group int) float64 {
	t.Helper()
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s in the output:\n%s", re, out)
	}
	v, err := strconv.ParseFloat(m[group], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestQuantumEspresso(t *testing.T) {
	t.Parallel()
	needBinaries(t, "pw.x", "mpirun")
	opts := testutil.KernelOptions(t)
	var serial float64
	t.Run("serial", func(t *testing.T) {
		out := runIn(t, opts, map[string]string{"si.in": siSCF}, "pw.x -in si.in")
		if !strings.Contains(out, "convergence has been achieved") {
			t.Fatalf("the SCF did not converge:\n%s", out)
		}
		serial = parse(t, totalEnergy, out, 1)
		// LDA silicon (von Barth-Car pseudopotential) at a = 10.26 bohr, 20 Ry, 4x4x4 k-points.
		if serial < -15.836 || serial > -15.831 {
			t.Errorf("total energy %.6f Ry, want -15.8336", serial)
		}
	})
	t.Run("mpirun -np 2", func(t *testing.T) {
		out := runIn(t, opts, map[string]string{"si.in": siSCF}, "mpirun -np 2 pw.x -in si.in")
		if !strings.Contains(out, "running on     2 processors") && !regexp.MustCompile(`running on\s+2 processors`).MatchString(out) {
			t.Errorf("pw.x did not report 2 MPI processes:\n%s", out)
		}
		if e := parse(t, totalEnergy, out, 1); serial != 0 && (e-serial > 1e-5 || serial-e > 1e-5) {
			t.Errorf("two ranks: %.8f Ry, serial %.8f Ry", e, serial)
		}
	})
}

func TestLAMMPS(t *testing.T) {
	t.Parallel()
	needBinaries(t, "lmp", "mpirun")
	opts := testutil.KernelOptions(t)
	check := func(t *testing.T, out string) {
		t.Helper()
		// Cu_u3 (Foiles, Baskes and Daw 1986) is fitted to Cu's cohesive energy, 3.54 eV, and
		// lattice constant, 3.615 Å.
		if e := parse(t, peLine, out, 1); e < -3.55 || e > -3.53 {
			t.Errorf("energy per atom %.6f eV, want -3.54", e)
		}
		if a := parse(t, peLine, out, 2); a < 3.60 || a > 3.63 {
			t.Errorf("relaxed lattice constant %.4f Å, want 3.615", a)
		}
	}
	t.Run("serial", func(t *testing.T) {
		check(t, runIn(t, opts, map[string]string{"cu.lmp": cuMin}, "lmp -in cu.lmp -log none"))
	})
	t.Run("mpirun -np 2", func(t *testing.T) {
		out := runIn(t, opts, map[string]string{"cu.lmp": cuMin}, "mpirun -np 2 lmp -in cu.lmp -log none")
		if !strings.Contains(out, "2 MPI tasks") {
			t.Errorf("lmp did not report 2 MPI tasks:\n%s", out)
		}
		check(t, out)
	})
	t.Run("mpirun -np 3, more ranks than cores", func(t *testing.T) {
		out := runIn(t, opts, map[string]string{"cu.lmp": cuMin}, "mpirun -np 3 lmp -in cu.lmp -log none")
		if !strings.Contains(out, "3 MPI tasks") {
			t.Errorf("lmp did not report 3 MPI tasks:\n%s", out)
		}
		check(t, out)
	})
}

// TestMPIAsRoot runs mpirun without a sandbox (--no-sandbox) as root: the code is not root even
// then but the sandbox's unprivileged account (sandbox.HostIdentity), and MPI runs on 2 ranks.
// (The namespaces fallback is not tried: its network namespace has no loopback interface, on
// which Open MPI's PMIx server listens.)
func TestMPIAsRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: what the code runs as differs only when labmate is root")
	}
	needBinaries(t, "lmp", "mpirun")
	uid, _, ok := sandbox.HostIdentity()
	if !ok {
		t.Fatal("as root there is no sandbox account")
	}
	sb, err := sandbox.New(sandbox.ModeNone, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := runIn(t, kernel.Options{Sandbox: sb, Grace: 2 * time.Second}, map[string]string{"cu.lmp": cuMin},
		"id -u; mpirun -np 2 lmp -in cu.lmp -log none")
	if !strings.HasPrefix(out, strconv.Itoa(uid)+"\n") || !strings.Contains(out, "2 MPI tasks") {
		t.Errorf("mpirun as uid %d:\n%s", uid, out)
	}
}
