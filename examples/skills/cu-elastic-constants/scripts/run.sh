#!/bin/bash
# Cubic elastic constants with LAMMPS. Override with environment variables: POT, STYLE, COEFF,
# A (Å), N (cells per side), D (strain amplitude). Prints "RESULT C11|C12|C44 = VALUE" (GPa).
set -euo pipefail
POT=${POT:-/usr/share/lammps/potentials/Cu_mishin1.eam.alloy}
STYLE=${STYLE:-eam/alloy}
COEFF=${COEFF:-Cu}
A=${A:-3.615}
N=${N:-3}
D=${D:-0.002}
export OMP_NUM_THREADS=1
lmp -in elastic.lmp -log elastic.log -var pot "$POT" -var style "$STYLE" -var coeff "$COEFF" -var a "$A" -var n "$N" -var d "$D"
