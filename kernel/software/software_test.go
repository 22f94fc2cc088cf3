package software

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func byName(items []Item) map[string]Item {
	m := map[string]Item{}
	for _, it := range items {
		m[it.Group+"/"+it.Name] = it
	}
	return m
}

// TestProbe finds what scripts/deps installs, quickly.
func TestProbe(t *testing.T) {
	start := time.Now()
	items := Probe(context.Background(), &Options{Toolbox: []string{"stepinfo", "allmargin", "iirnotch"}})
	took := time.Since(start)
	if took > 4*time.Second {
		t.Errorf("Probe took %v; the probes run in parallel and take well under a second here", took)
	}
	t.Logf("Probe took %v", took)
	m := byName(items)
	want := []string{
		"octave/octave", "octave/control", "octave/signal", "octave/optim", "octave/statistics", "octave/symbolic",
		"octave/gnuplot", "octave/ghostscript",
		"python/python", "python/numpy", "python/scipy", "python/matplotlib", "python/sympy", "python/pandas", "python/ase",
		"quantum-espresso/pw.x", "lammps/lmp", "mpi/mpirun",
	}
	for _, k := range want {
		it, ok := m[k]
		if !ok {
			t.Errorf("%s: not probed", k)
			continue
		}
		if it.Error != "" || it.Version == "" || !strings.ContainsAny(it.Version, "0123456789") {
			t.Errorf("%s: version %q, error %q (scripts/deps installs it)", k, it.Version, it.Error)
		}
	}
	for k, v := range map[string]string{"octave/octave": "7.", "python/python": "3.", "quantum-espresso/pw.x": "6.", "mpi/mpirun": "4."} {
		if !strings.HasPrefix(m[k].Version, v) {
			t.Errorf("%s version %q, want %s…", k, m[k].Version, v)
		}
	}
	qe := m["quantum-espresso/pw.x"].Data
	if qe == nil || qe.Dir != PseudoDir || qe.Count < 60 {
		t.Fatalf("pseudopotentials: %+v, want Debian's 66 in %s", qe, PseudoDir)
	}
	for _, el := range []string{"Al", "Au", "C", "Cu", "Fe", "Ge", "Li", "Ni", "Pb", "Pt", "Si"} {
		if !slices.Contains(qe.Elements, el) {
			t.Errorf("no pseudopotential for %s among %v", el, qe.Elements)
		}
	}
	lmp := m["lammps/lmp"]
	if lmp.Data == nil || lmp.Data.Count < 200 || lmp.Data.Kinds["eam"] < 5 || lmp.Data.Kinds["eam.alloy"] < 5 {
		t.Errorf("potentials: %+v, want Debian's 229 with EAM files", lmp.Data)
	}
	if !slices.Contains(lmp.Features, "MANYBODY") {
		t.Errorf("LAMMPS packages %v, want MANYBODY (EAM) among them", lmp.Features)
	}
	if tb := m["octave/labmate toolbox"]; !slices.Equal(tb.Features, []string{"stepinfo", "allmargin", "iirnotch"}) || strings.Contains(tb.Note, "also in") {
		t.Errorf("labmate toolbox: %+v (no Debian package provides these functions)", tb)
	}
	// Groups come in order.
	order := []string{GroupOctave, GroupPython, GroupQE, GroupLAMMPS, GroupMPI}
	for i := 1; i < len(items); i++ {
		if slices.Index(order, items[i].Group) < slices.Index(order, items[i-1].Group) {
			t.Errorf("item %d (%s) after %s", i, items[i].Group, items[i-1].Group)
		}
	}
}

// TestProbeRunsNothingFromHere puts programs of every probed name in the current directory and
// first in PATH: none of them may run.
func TestProbeRunsNothingFromHere(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "RAN")
	for _, name := range []string{"octave-cli", "python3", "pw.x", "lmp", "mpirun", "gnuplot", "gs"} {
		script := "#!/bin/sh\necho " + name + " >> " + marker + "\necho 'version 666'\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("PATH", ".:"+dir+":"+os.Getenv("PATH"))
	items := Probe(context.Background(), nil)
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("Probe ran programs from the current directory or PATH: %s", b)
	}
	for _, it := range items {
		if strings.Contains(it.Version, "666") || strings.HasPrefix(it.Path, dir) {
			t.Errorf("%s: %+v came from %s", it.Name, it, dir)
		}
	}
}

// TestProbeTimeout: a program that never answers is reported, and Probe returns on time.
func TestProbeTimeout(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pw.x"), []byte("#!/bin/sh\n/bin/sleep 100 &\n/bin/sleep 100\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := SystemPath
	SystemPath = []string{dir}
	defer func() { SystemPath = saved }()
	start := time.Now()
	items := Probe(context.Background(), &Options{Timeout: 300 * time.Millisecond})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Probe took %v with a 300ms timeout", d)
	}
	it := byName(items)["quantum-espresso/pw.x"]
	if !strings.Contains(it.Error, "no answer within the probe's timeout") {
		t.Errorf("pw.x: %+v, want a timeout error", it)
	}
	if it := byName(items)["lammps/lmp"]; !strings.Contains(it.Error, "not found in "+dir) || !strings.Contains(it.Error, "Debian package lammps") {
		t.Errorf("lmp: %+v, want not found, with the Debian package", it)
	}
}
