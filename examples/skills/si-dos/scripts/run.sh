#!/bin/bash
# Electronic density of states of diamond-structure Si with Quantum ESPRESSO: pw.x SCF, an nscf
# run on a denser grid with tetrahedron occupations, dos.x; from the DOS, the valence-band width
# (the VBM minus the bottom of the valence band) and the gap. Override with environment
# variables: PSEUDO, PSEUDO_DIR, A (bohr), ECUT (Ry), K (SCF grid), KD (nscf grid).
# Prints "RESULT bandwidth = VALUE" (eV).
set -euo pipefail
PSEUDO=${PSEUDO:-Si.pz-vbc.UPF}
PSEUDO_DIR=${PSEUDO_DIR:-/usr/share/espresso/pseudo}
A=${A:-10.20}
ECUT=${ECUT:-20}
K=${K:-6}
KD=${KD:-10}
export OMP_NUM_THREADS=1
input() { # CALCULATION EXTRA-SYSTEM-LINE GRID
	cat <<EOT
&control
  calculation = '$1', prefix = 'si', outdir = './tmp', pseudo_dir = '$PSEUDO_DIR'
/
&system
  ibrav = 2, celldm(1) = $A, nat = 2, ntyp = 1, ecutwfc = $ECUT $2
/
&electrons
  conv_thr = 1e-10
/
ATOMIC_SPECIES
Si 28.086 $PSEUDO
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
$3 $3 $3 0 0 0
EOT
}
input scf "" "$K" >scf.in
input nscf ", nbnd = 8, occupations = 'tetrahedra'" "$KD" >nscf.in
cat >dos.in <<EOT
&dos
  prefix = 'si', outdir = './tmp', fildos = 'si.dos', DeltaE = 0.02
/
EOT
pw.x -in scf.in | tee scf.out
grep -q "convergence has been achieved" scf.out || { echo "ERROR: the SCF did not converge (scf.out)" >&2; exit 1; }
pw.x -in nscf.in | tee nscf.out
dos.x -in dos.in | tee dos.out
python3 - <<'PY'
import sys
rows = [l.split() for l in open("si.dos") if not l.startswith("#") and l.strip()]
e = [float(r[0]) for r in rows]
d = [float(r[1]) for r in rows]
top = max(d)
occ = [i for i, x in enumerate(d) if x > 1e-3 * top]
# the valence band: the first run of non-zero DOS up to the gap
bottom = occ[0]
i = bottom
while i + 1 < len(d) and d[i + 1] > 1e-3 * top:
    i += 1
vbm, j = e[i], i + 1
while j < len(d) and d[j] <= 1e-3 * top:
    j += 1
print("valence band from %.2f to %.2f eV, conduction band from %.2f eV (DOS > 0.1%% of its maximum)" % (e[bottom], vbm, e[j] if j < len(d) else float("nan")))
print("DOS gap = %.2f eV" % ((e[j] if j < len(d) else vbm) - vbm))
print("RESULT bandwidth = %.2f" % (vbm - e[bottom]))
PY
