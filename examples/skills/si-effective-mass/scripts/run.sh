#!/bin/bash
# Electron effective masses of Si at the conduction-band minimum on Δ with Quantum ESPRESSO: an
# SCF run, a 'bands' run on a line along Γ–X to find the minimum k0 and the longitudinal
# curvature, then one across the line at k0 for the transverse curvature; m* = ħ²/(d²E/dk²).
# Override with environment variables: PSEUDO, PSEUDO_DIR, A (bohr), ECUT (Ry), K (SCF grid).
# Prints "RESULT m_l = VALUE" and "RESULT m_t = VALUE" (electron masses).
set -euo pipefail
PSEUDO=${PSEUDO:-Si.pz-vbc.UPF}
PSEUDO_DIR=${PSEUDO_DIR:-/usr/share/espresso/pseudo}
A=${A:-10.20}
ECUT=${ECUT:-40}
K=${K:-6}
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
  conv_thr = 1e-10, diago_full_acc = .true.
/
ATOMIC_SPECIES
Si 28.086 $PSEUDO
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
$3
EOT
}
kpoints() { # python expression yielding (kx, ky, kz) tuples
	python3 -c "pts = [$1]; print('K_POINTS tpiba'); print(len(pts)); [print('%.5f %.5f %.5f 1' % p) for p in pts]"
}
input scf "" "K_POINTS automatic
$K $K $K 0 0 0" >scf.in
pw.x -in scf.in | tee scf.out
grep -q "convergence has been achieved" scf.out || { echo "ERROR: the SCF did not converge (scf.out)" >&2; exit 1; }
input bands ", nbnd = 8" "$(kpoints '(0.76 + 0.005 * i, 0, 0) for i in range(33)')" >line.in
pw.x -in line.in | tee line.out
cp tmp/si.save/data-file-schema.xml line.xml
cat >mass.py <<'PY'
import re, sys
RY = 13.605693123
def bands(path, band=4):  # the lowest conduction band (0-based 4) at each k, from the XML (full precision)
    import xml.etree.ElementTree as ET
    out = []
    for ks in ET.parse(path).getroot().iter("ks_energies"):
        k = [float(x) for x in ks.find("k_point").text.split()]
        e = [float(x) * 2 * RY for x in ks.find("eigenvalues").text.split()]  # Hartree -> eV
        out.append((k, e[band]))
    if not out:
        sys.exit(path + ": no eigenvalues: the run did not finish")
    return out
def quadfit(x, y):  # least squares y = c0 + c1 x + c2 x^2 (normal equations, Cramer's rule)
    s = [sum(xi ** p for xi in x) for p in range(5)]
    t = [sum(yi * xi ** p for xi, yi in zip(x, y)) for p in range(3)]
    m = [[s[0], s[1], s[2]], [s[1], s[2], s[3]], [s[2], s[3], s[4]]]
    det = lambda a: (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]))
    d = det(m)
    c = []
    for j in range(3):
        mj = [row[:] for row in m]
        for i in range(3):
            mj[i][j] = t[i]
        c.append(det(mj) / d)
    return c
def mass(c2, alat):  # c2 in eV per (2pi/a)^2 -> m*/m_e = 1 / (c2 in Ry bohr^2)
    return 1.0 / (c2 / RY / (2 * 3.141592653589793 / alat) ** 2)
PY
python3 - "$A" <<'PY' | tee k0.txt
import sys
sys.path.insert(0, ".")
from mass import bands, quadfit, mass
alat = float(sys.argv[1])
pts = bands("line.xml")
i = min(range(len(pts)), key=lambda j: pts[j][1])
if i < 3 or i > len(pts) - 4:
    sys.exit("the minimum lies at the end of the line (k = %.2f): move the line" % pts[i][0][0])
near = pts[i - 3:i + 4]
c0, c1, c2 = quadfit([p[0][0] for p in near], [p[1] for p in near])
k0 = -c1 / (2 * c2)
print("k0 = %.4f" % k0)
print("CBM = %.4f eV" % (c0 + c1 * k0 + c2 * k0 * k0))
print("RESULT m_l = %.4f" % mass(c2, alat))
PY
k0=$(awk '/^k0 =/ { print $3 }' k0.txt)
input bands ", nbnd = 8" "$(kpoints "($k0, 0.005 * i, 0) for i in range(-3, 4)")" >cross.in
pw.x -in cross.in | tee cross.out
cp tmp/si.save/data-file-schema.xml cross.xml
python3 - "$A" <<'PY'
import sys
sys.path.insert(0, ".")
from mass import bands, quadfit, mass
pts = bands("cross.xml")
c0, c1, c2 = quadfit([p[0][1] for p in pts], [p[1] for p in pts])
print("RESULT m_t = %.4f" % mass(c2, float(sys.argv[1])))
PY
