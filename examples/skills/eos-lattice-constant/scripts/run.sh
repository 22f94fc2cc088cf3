#!/bin/bash
# The procedure end to end for one case, Cu with LAMMPS and Cu_u3.eam: writes the template,
# scans seven lattice parameters within ±3% of A, fits Birch–Murnaghan. Override with
# environment variables: POT, STYLE, COEFF, A (Å). Prints the fit (JSON) and
# "RESULT a0 = VALUE" (Å) and "RESULT B0 = VALUE" (GPa).
set -euo pipefail
POT=${POT:-/usr/share/lammps/potentials/Cu_u3.eam}
STYLE=${STYLE:-eam}
COEFF=${COEFF:-}
A=${A:-3.60}
export OMP_NUM_THREADS=1
cat >template.in <<EOT
units metal
boundary p p p
lattice fcc @A@
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style $STYLE
pair_coeff * * $POT $COEFF
run 0
print "EOS_ENERGY \$(pe/atoms:%.10f)"
EOT
points=$(python3 -c "import sys; a=float(sys.argv[1]); print(' '.join('%.4f' % (a*(1+0.01*i)) for i in range(-3, 4)))" "$A")
bash eos-scan.sh lmp template.in $points | tee scan.txt
python3 bm_fit.py fcc 1 ev <scan.txt | tee fit.json
python3 -c "import json; f=json.load(open('fit.json')); print('RESULT a0 = %.4f' % f['a0']); print('RESULT B0 = %.1f' % f['B0'])"
