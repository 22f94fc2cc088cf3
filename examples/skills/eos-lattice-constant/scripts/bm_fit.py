#!/usr/bin/env python3
"""Third-order Birch-Murnaghan fit of an energy-lattice parameter scan (eos-scan.sh's output).

usage: bm_fit.py STRUCTURE ATOMS UNITS < scan.txt

STRUCTURE is fcc, bcc or diamond (the cubic conventional cell holds 4, 2 or 8 atoms); ATOMS is
the number of atoms the energies are for (1 for a primitive fcc or bcc cell or LAMMPS' energy
per atom, 2 for a primitive diamond cell); UNITS is ry (lattice parameter in bohr, energy in Ry:
pw.x) or ev (angstrom and eV: lmp). Each input line is "A ENERGY [anything]".

The fit is linear least squares: the third-order Birch-Murnaghan E(V) is a cubic polynomial in
x = V^(-2/3). It prints one JSON object: the lattice constant a0 (angstrom), the volume V0
(angstrom^3/atom), E0 (eV/atom), B0 (GPa), B0' and the fit's RMS residual (eV/atom).
"""
import json
import sys

import numpy as np

BOHR = 0.529177210903  # angstrom
RY = 13.605693122994  # eV
EV_PER_A3_IN_GPA = 160.21766208
ATOMS_PER_CUBE = {"fcc": 4, "bcc": 2, "diamond": 8}


def fit(structure, a, e):
    """a in angstrom, e in eV/atom; returns a dict, or raises ValueError."""
    v = a**3 / ATOMS_PER_CUBE[structure]
    x = v ** (-2.0 / 3.0)
    c = np.polyfit(x, e, 3)  # c[0] x^3 + c[1] x^2 + c[2] x + c[3]
    d1, d2 = np.polyder(c), np.polyder(c, 2)
    roots = [r.real for r in np.roots(d1) if abs(r.imag) < 1e-12 and np.polyval(d2, r.real) > 0]
    if not roots:
        raise ValueError("the fitted curve has no minimum")
    x0 = min(roots, key=lambda r: abs(r - x.mean()))
    v0 = x0 ** (-1.5)
    # B = V d2E/dV2 with dx/dV = -2/3 V^(-5/3), d2x/dV2 = 10/9 V^(-8/3) (dE/dx = 0 at V0).
    xv, xvv, xvvv = -2 / 3 * v0 ** (-5 / 3), 10 / 9 * v0 ** (-8 / 3), -80 / 27 * v0 ** (-11 / 3)
    e1, e2, e3 = np.polyval(d1, x0), np.polyval(d2, x0), np.polyval(np.polyder(c, 3), x0)
    evv = e2 * xv**2 + e1 * xvv
    evvv = e3 * xv**3 + 3 * e2 * xv * xvv + e1 * xvvv
    b0 = v0 * evv
    b0p = -(evv + v0 * evvv) * v0 / b0
    resid = e - np.polyval(c, x)
    return {
        "a0": (v0 * ATOMS_PER_CUBE[structure]) ** (1 / 3),
        "V0": v0,
        "E0": float(np.polyval(c, x0)),
        "B0": b0 * EV_PER_A3_IN_GPA,
        "B0p": b0p,
        "rms": float(np.sqrt(np.mean(resid**2))),
        "points": len(a),
    }


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ATOMS_PER_CUBE or sys.argv[3] not in ("ry", "ev"):
        sys.exit(__doc__)
    structure, atoms, units = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rows = [line.split() for line in sys.stdin if line.strip()]
    a = np.array([float(r[0]) for r in rows])
    e = np.array([float(r[1]) for r in rows]) / atoms
    if units == "ry":
        a, e = a * BOHR, e * RY
    if len(a) < 5:
        sys.exit("bm_fit: %d points; a third-order fit needs at least 5 (7 is the procedure)" % len(a))
    try:
        print(json.dumps(fit(structure, a, e)))
    except ValueError as err:
        sys.exit("bm_fit: %s" % err)
