#!/bin/bash
# (111) surface energy with LAMMPS. Override with environment variables: POT, STYLE, COEFF,
# A (the potential's relaxed lattice constant, Å), LAYERS (a multiple of 3), VAC (vacuum, Å).
# Prints "RESULT gamma = VALUE" (mJ/m²).
set -euo pipefail
POT=${POT:-/usr/share/lammps/potentials/Cu_mishin1.eam.alloy}
STYLE=${STYLE:-eam/alloy}
COEFF=${COEFF:-Cu}
A=${A:-3.615}
LAYERS=${LAYERS:-12}
VAC=${VAC:-15}
export OMP_NUM_THREADS=1
lmp -in surface.lmp -log surface.log -var pot "$POT" -var style "$STYLE" -var coeff "$COEFF" -var a "$A" -var layers "$LAYERS" -var vac "$VAC"
