#!/bin/bash
# Band gap of diamond-structure Si with Quantum ESPRESSO: an SCF run, then a 'bands' run along
# L–Γ–X, then the gap from the eigenvalues. Override with environment variables: PSEUDO,
# PSEUDO_DIR, A (celldm(1), bohr), ECUT (Ry), K (SCF grid), NK (points per segment).
# Prints the VBM, the CBM with its k-point, and "RESULT gap = VALUE" (eV).
set -euo pipefail
PSEUDO=${PSEUDO:-Si.pz-vbc.UPF}
PSEUDO_DIR=${PSEUDO_DIR:-/usr/share/espresso/pseudo}
A=${A:-10.20}
ECUT=${ECUT:-20}
K=${K:-6}
NK=${NK:-20}
export OMP_NUM_THREADS=1
input() { # CALCULATION EXTRA-SYSTEM-LINE K_POINTS-BLOCK
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
$3
EOT
}
input scf "" "K_POINTS automatic
$K $K $K 0 0 0" >scf.in
input bands ", nbnd = 8" "K_POINTS tpiba_b
3
0.5 0.5 0.5 $((NK / 2))
0.0 0.0 0.0 $NK
1.0 0.0 0.0 1" >bands.in
pw.x -in scf.in | tee scf.out
grep -q "convergence has been achieved" scf.out || { echo "ERROR: the SCF did not converge (scf.out)" >&2; exit 1; }
pw.x -in bands.in | tee bands.out
python3 - <<'PY'
import re, sys
text = open("bands.out").read()
occ = 4  # Si: 8 valence electrons, 4 doubly occupied bands
ks, vb, cb = [], [], []
for m in re.finditer(r"k =\s*([-\d.]+)\s*([-\d.]+)\s*([-\d.]+) \(\s*\d+ PWs\)\s+bands \(ev\):\s+(.*?)\n\s*\n", text, re.S):
    e = [float(x) for x in re.findall(r"-?\d+\.\d+", m.group(4))]
    if len(e) <= occ:
        sys.exit("bands.out: fewer than %d bands at a k-point: set nbnd" % (occ + 1))
    ks.append(tuple(float(m.group(i)) for i in (1, 2, 3)))
    vb.append(e[occ - 1])
    cb.append(e[occ])
if not ks:
    sys.exit("bands.out: no eigenvalues: the bands run did not finish")
iv = max(range(len(ks)), key=lambda i: vb[i])
ic = min(range(len(ks)), key=lambda i: cb[i])
print("VBM %.4f eV at k = %s, CBM %.4f eV at k = %s (2pi/a), %d k-points" % (vb[iv], ks[iv], cb[ic], ks[ic], len(ks)))
print("direct gap at Gamma = %.4f eV" % (min(c for k, c in zip(ks, cb) if k == (0.0, 0.0, 0.0)) - max(v for k, v in zip(ks, vb) if k == (0.0, 0.0, 0.0))))
print("RESULT gap = %.4f" % (cb[ic] - vb[iv]))
PY
