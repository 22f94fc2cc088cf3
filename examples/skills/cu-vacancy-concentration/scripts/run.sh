#!/bin/bash
# Equilibrium vacancy concentration c_v(T) = exp(Sf/kB) exp(−Ef/(kB T)), with the relaxed Ef
# from LAMMPS. Override with environment variables: POT, STYLE, COEFF, A (Å), N (cells per side),
# T (K, default Cu's melting point), SF (formation entropy in kB). Prints "RESULT log10_cv = VALUE".
set -euo pipefail
POT=${POT:-/usr/share/lammps/potentials/Cu_u3.eam}
STYLE=${STYLE:-eam}
COEFF=${COEFF:-}
A=${A:-3.615}
N=${N:-4}
T=${T:-1356}
SF=${SF:-1.5}
export OMP_NUM_THREADS=1
lmp -in vacancy.lmp -log vacancy.log -var pot "$POT" -var style "$STYLE" -var coeff "$COEFF" -var a "$A" -var n "$N"
python3 - "$T" "$SF" <<'PY'
import math, re, sys
T, sf = map(float, sys.argv[1:])
m = re.findall(r"^RESULT Ef = (\S+)", open("vacancy.log").read(), re.M)
if not m:
    sys.exit("vacancy.log: no 'RESULT Ef' line: the vacancy run did not finish")
ef = float(m[-1])
kB = 8.617333262e-5
cv = math.exp(sf) * math.exp(-ef / (kB * T))
print(f"Ef = {ef:.4f} eV, Sf = {sf:g} kB, T = {T:g} K: c_v = {cv:.3e}")
print(f"RESULT log10_cv = {math.log10(cv):.3f}")
PY
