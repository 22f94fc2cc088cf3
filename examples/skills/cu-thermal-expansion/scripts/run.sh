#!/bin/bash
# Linear thermal expansion coefficient with LAMMPS: mean lattice constants from NPT runs at
# T1 and T2, α = (a2 − a1) / (a(Tm) (T2 − T1)) at Tm = (T1 + T2)/2. Override with environment
# variables: POT, STYLE, COEFF, A (Å), N (cells per side), T1, T2 (K), EQUIL, PROD (steps).
# Prints "RESULT alpha = VALUE" (1e-6/K).
set -euo pipefail
POT=${POT:-/usr/share/lammps/potentials/Cu_mishin1.eam.alloy}
STYLE=${STYLE:-eam/alloy}
COEFF=${COEFF:-Cu}
A=${A:-3.615}
N=${N:-5}
T1=${T1:-200}
T2=${T2:-400}
EQUIL=${EQUIL:-2000}
PROD=${PROD:-5000}
export OMP_NUM_THREADS=1
for T in "$T1" "$T2"; do
	lmp -in npt.lmp -log "npt-$T.log" -var pot "$POT" -var style "$STYLE" -var coeff "$COEFF" -var a "$A" \
		-var n "$N" -var T "$T" -var equil "$EQUIL" -var prod "$PROD" -var seed $((4928 + T))
done
python3 - "$T1" "$T2" <<'PY'
import re, sys
pts = []
for T in sys.argv[1:]:
    m = re.findall(r"^a_T = (\S+) T = (\S+)", open(f"npt-{T}.log").read(), re.M)
    if not m:
        sys.exit(f"npt-{T}.log: no 'a_T = … T = …' line: the run did not finish")
    pts.append(tuple(map(float, m[-1])))
(a1, t1), (a2, t2) = pts
alpha = (a2 - a1) / ((a1 + a2) / 2) / (t2 - t1)
print(f"a({t1:.1f} K) = {a1:.6f}, a({t2:.1f} K) = {a2:.6f}")
print(f"RESULT alpha = {alpha * 1e6:.2f}")
PY
