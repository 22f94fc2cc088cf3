#!/bin/bash
# Vacancy formation energy with LAMMPS. Override the defaults with environment variables:
# POT, STYLE, COEFF, A (Å), N (cells per side). Prints "RESULT Ef = VALUE" (eV).
set -euo pipefail
POT=${POT:-/usr/share/lammps/potentials/Cu_u3.eam}
STYLE=${STYLE:-eam}
COEFF=${COEFF:-}
A=${A:-3.615}
N=${N:-4}
export OMP_NUM_THREADS=1
lmp -in vacancy.lmp -log vacancy.log -var pot "$POT" -var style "$STYLE" -var coeff "$COEFF" -var a "$A" -var n "$N"
