#!/bin/bash
# High-frequency (electronic) dielectric constant ε∞ of diamond-structure Si with Quantum
# ESPRESSO: pw.x SCF, then ph.x at Γ with epsil = .true. and trans = .false. (the electric-field
# response only). Override with environment variables: PSEUDO, PSEUDO_DIR, A (bohr), ECUT (Ry),
# K (shifted SCF grid). Prints the tensor and "RESULT eps_inf = VALUE".
set -euo pipefail
PSEUDO=${PSEUDO:-Si.pz-vbc.UPF}
PSEUDO_DIR=${PSEUDO_DIR:-/usr/share/espresso/pseudo}
A=${A:-10.20}
ECUT=${ECUT:-20}
K=${K:-6}
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
dielectric constant of Si
&inputph
  prefix = 'si', outdir = './tmp', tr2_ph = 1e-14, epsil = .true., trans = .false.
/
0.0 0.0 0.0
EOT
pw.x -in scf.in | tee scf.out
grep -q "convergence has been achieved" scf.out || { echo "ERROR: the SCF did not converge (scf.out)" >&2; exit 1; }
ph.x -in ph.in | tee ph.out
python3 - <<'PY'
import re, sys
text = open("ph.out").read()
i = text.rfind("Dielectric constant in cartesian axis")
if i < 0:
    sys.exit("ph.out: no dielectric tensor: ph.x did not finish")
rows = re.findall(r"\(\s*(-?\d+\.\d+)\s+(-?\d+\.\d+)\s+(-?\d+\.\d+)\s*\)", text[i:])[:3]
eps = [[float(x) for x in r] for r in rows]
print("dielectric tensor:", eps)
print("RESULT eps_inf = %.3f" % ((eps[0][0] + eps[1][1] + eps[2][2]) / 3))
PY
