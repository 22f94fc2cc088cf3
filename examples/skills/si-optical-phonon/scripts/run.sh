#!/bin/bash
# Zone-centre optical phonon of diamond-structure Si with Quantum ESPRESSO: pw.x SCF, ph.x at Γ
# (density-functional perturbation theory), dynmat.x with the acoustic sum rule. Override with
# environment variables: PSEUDO, PSEUDO_DIR, A (bohr), ECUT (Ry), K (shifted SCF grid).
# Prints the frequencies and "RESULT omega_TO = VALUE" (cm⁻¹).
set -euo pipefail
PSEUDO=${PSEUDO:-Si.pz-vbc.UPF}
PSEUDO_DIR=${PSEUDO_DIR:-/usr/share/espresso/pseudo}
A=${A:-10.20}
ECUT=${ECUT:-20}
K=${K:-4}
export OMP_NUM_THREADS=1
cat >scf.in <<EOT
&control
  calculation = 'scf', prefix = 'si', outdir = './tmp', pseudo_dir = '$PSEUDO_DIR'
/
&system
  ibrav = 2, celldm(1) = $A, nat = 2, ntyp = 1, ecutwfc = $ECUT
/
&electrons
  conv_thr = 1e-12
/
ATOMIC_SPECIES
Si 28.086 $PSEUDO
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
$K $K $K 1 1 1
EOT
cat >ph.in <<EOT
phonons of Si at Gamma
&inputph
  prefix = 'si', outdir = './tmp', tr2_ph = 1e-14, fildyn = 'si.dynG'
/
0.0 0.0 0.0
EOT
cat >dynmat.in <<EOT
&input
  fildyn = 'si.dynG', asr = 'simple'
/
EOT
pw.x -in scf.in | tee scf.out
grep -q "convergence has been achieved" scf.out || { echo "ERROR: the SCF did not converge (scf.out)" >&2; exit 1; }
ph.x -in ph.in | tee ph.out
grep -q "freq (" ph.out || { echo "ERROR: ph.x gave no frequencies (ph.out)" >&2; exit 1; }
dynmat.x <dynmat.in | tee dynmat.out
python3 - <<'PY'
import re, sys
text = open("dynmat.out").read()
w = [float(x) for x in re.findall(r"^\s*\d+\s+(-?\d+\.\d+)", text.split("mode")[-1], re.M)]
if len(w) != 6:
    sys.exit("dynmat.out: %d frequencies, want 6" % len(w))
print("frequencies after the acoustic sum rule (cm-1):", " ".join("%.2f" % x for x in w))
print("RESULT omega_TO = %.2f" % max(w))
PY
