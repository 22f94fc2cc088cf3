#!/bin/bash
# Work function of Al(111) with Quantum ESPRESSO: an SCF of a symmetric slab in a hexagonal cell
# with vacuum, pp.x for the electrostatic (bare + Hartree) potential, average.x for its planar
# average along z; W = V(vacuum) − E_F. Override with environment variables: PSEUDO, PSEUDO_DIR,
# A (fcc lattice constant, bohr), LAYERS, C (cell height in units of the in-plane a), ECUT (Ry),
# K (in-plane grid). Prints "RESULT W = VALUE" (eV).
set -euo pipefail
PSEUDO=${PSEUDO:-Al.pz-vbc.UPF}
PSEUDO_DIR=${PSEUDO_DIR:-/usr/share/espresso/pseudo}
A=${A:-7.559}
LAYERS=${LAYERS:-5}
C=${C:-8.0}
ECUT=${ECUT:-15}
K=${K:-12}
export OMP_NUM_THREADS=1
ahex=$(python3 -c "print('%.5f' % ($A / 2 ** 0.5))")
positions=$(python3 -c "
d = (2 / 3) ** 0.5  # (111) interlayer spacing in units of the in-plane a
xy = [(0.0, 0.0), (0.5, 3 ** 0.5 / 6), (0.0, 3 ** 0.5 / 3)]  # A, B, C stacking
for i in range($LAYERS):
    print('Al %.6f %.6f %.6f' % (xy[i % 3] + (i * d,)))")
cat >slab.in <<EOT
&control
  calculation = 'scf', prefix = 'al', outdir = './tmp', pseudo_dir = '$PSEUDO_DIR'
/
&system
  ibrav = 4, celldm(1) = $ahex, celldm(3) = $C, nat = $LAYERS, ntyp = 1, ecutwfc = $ECUT,
  occupations = 'smearing', smearing = 'mv', degauss = 0.02
/
&electrons
  conv_thr = 1e-8, mixing_beta = 0.3
/
ATOMIC_SPECIES
Al 26.98 $PSEUDO
ATOMIC_POSITIONS alat
$positions
K_POINTS automatic
$K $K 1 0 0 0
EOT
cat >pp.in <<EOT
&inputpp
  prefix = 'al', outdir = './tmp', filplot = 'al.pot', plot_num = 11
/
EOT
printf '1\nal.pot\n1.0\n1000\n3\n3.0\n' >avg.in
pw.x -in slab.in | tee slab.out
grep -q "convergence has been achieved" slab.out || { echo "ERROR: the SCF did not converge (slab.out)" >&2; exit 1; }
pp.x -in pp.in | tee pp.out
average.x <avg.in >avg.out
python3 - "$LAYERS" "$C" <<'PY'
import re, sys
RY = 13.605693123
layers, c = int(sys.argv[1]), float(sys.argv[2])
ef = re.findall(r"the Fermi energy is\s+(-?\d+\.\d+) ev", open("slab.out").read())
if not ef:
    sys.exit("slab.out: no Fermi energy")
ef = float(ef[-1])
rows = [[float(x) for x in l.split()] for l in open("avg.dat") if l.strip()]
length = rows[-1][0] + rows[1][0]
top = (layers - 1) * (2 / 3) ** 0.5 / c * length  # the last layer's z (bohr)
mid = (top + length) / 2
vac = [r[1] * RY for r in rows if abs(r[0] - mid) < 0.1 * (length - top)]
v = sum(vac) / len(vac)
flat = max(vac) - min(vac)
print("E_F = %.4f eV, vacuum level = %.4f eV (varies by %.4f eV over the middle of the vacuum)" % (ef, v, flat))
if flat > 0.02:
    print("WARNING: the potential is not flat in the vacuum: more vacuum (C) or a dipole correction")
print("RESULT W = %.3f" % (v - ef))
PY
