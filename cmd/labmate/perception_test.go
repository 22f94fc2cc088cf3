package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/labmate/labmate/protocol"
)

// TestExecWatchLateViolation: a --watch violated on the cell's last line ends with exit
// status 3 every time, in text and in --json (where the stream's last message is
// operation_failed, reason interrupted, with the verdict).
func TestExecWatchLateViolation(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "late.py", "for i in range(6):\n    print('x =', i)\n")
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			args := []string{"exec", "--watch", "x < 5", "late.py"}
			if i%2 == 1 {
				args = append([]string{"exec", "--json"}, args[1:]...)
			}
			out, errOut, code := labmate(t, dir, "", args...)
			if code != 3 {
				t.Errorf("run %d (%v): exit %d, want 3; stderr %q", i, args, code, errOut)
				return
			}
			if i%2 == 0 {
				if !strings.Contains(errOut, "stopped by perception") || !strings.Contains(errOut, `watch "x < 5" violated`) {
					t.Errorf("run %d: stderr %q", i, errOut)
				}
				return
			}
			var last protocol.EnhancedMessage
			for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
				if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
					t.Errorf("run %d: %v", i, err)
					return
				}
			}
			var f protocol.Failed
			if err := last.Decode(&f); err != nil || last.Type != protocol.TypeFailed || f.Reason != protocol.ReasonInterrupted || f.Verdict == nil {
				t.Errorf("run %d: last message %s %s", i, last.Type, last.Payload)
			}
		})
	}
	wg.Wait()
}

func TestExecPerceptionFlags(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "grow.py", "import time\nN = 1.0\nfor i in range(40):\n    N *= 10\n    print('N =', N, flush=True)\n    time.sleep(0.02)\n")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"divergence stops it", []string{"exec", "grow.py"}, 3, "divergence"},
		{"a declared bound lets it grow", []string{"exec", "--watch", "N < 1e50", "grow.py"}, 0, "ok"},
		{"divergence off, perception on", []string{"exec", "--perception", "divergence=off", "grow.py"}, 0, "ok"},
		{"a lower bound for this run", []string{"exec", "--perception", "divergence_bound=1e5", "grow.py"}, 3, "reached 100000 (bound 100000)"},
		{"bad setting", []string{"exec", "--perception", "silence=soon", "grow.py"}, 2, `silence="soon"`},
		{"not KEY=VALUE", []string{"exec", "--perception", "divergence", "grow.py"}, 2, "want KEY=VALUE"},
		{"unknown profile", []string{"exec", "--profile", "vasp", "grow.py"}, 2, `unknown profile "vasp"`},
		{"follow outside", []string{"exec", "--follow", "../x.log", "grow.py"}, 2, "not a relative path inside the workspace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := labmate(t, dir, "", c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, c.code, errOut, c.want)
			}
		})
	}
}

// TestExecProfileQE: a shell cell running pw.x gets the Quantum ESPRESSO profile by itself.
func TestExecProfileQE(t *testing.T) {
	if _, err := exec.LookPath("pw.x"); err != nil {
		t.Skip("pw.x is not installed (scripts/deps installs quantum-espresso)")
	}
	dir := t.TempDir()
	write(t, dir, "scf.sh", `cat > si.in <<'IN'
&control
  calculation = 'scf', pseudo_dir = '/usr/share/espresso/pseudo', outdir = './tmp'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 12
/
&electrons
  conv_thr = 1e-12, electron_maxstep = 2
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
2 2 2 0 0 0
IN
pw.x < si.in
`)
	_, errOut, code := labmate(t, dir, "", "exec", "scf.sh")
	if code != 3 || !strings.Contains(errOut, "Quantum ESPRESSO: SCF convergence NOT achieved") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
