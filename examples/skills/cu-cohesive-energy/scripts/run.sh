#!/bin/bash
# Cohesive energy with LAMMPS. Override with environment variables: POT, STYLE, COEFF, A (Å).
# Prints "RESULT Ecoh = VALUE" (eV/atom).
set -euo pipefail
POT=${POT:-/usr/share/lammps/potentials/Cu_u3.eam}
STYLE=${STYLE:-eam}
COEFF=${COEFF:-}
A=${A:-3.6}
export OMP_NUM_THREADS=1
lmp -in cohesive.lmp -log cohesive.log -var pot "$POT" -var style "$STYLE" -var coeff "$COEFF" -var a "$A"
