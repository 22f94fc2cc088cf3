# label: healthy
# fault: none
# requires: pw.x
# runtime: 40
# what: a plane-wave cutoff convergence test for silicon: four Quantum ESPRESSO SCF runs at ecutwfc = 8, 12, 16 and 20 Ry, each converging in 5-6 iterations, with a summary line per cutoff: the total energy falls monotonically toward its converged value, from -15.727 Ry at 8 Ry by 81, 32 and 8 mRy per step to -15.848 Ry at 20 Ry (several SCF cycles in one cell, each starting again from a large accuracy).
for ec in 8 12 16 20; do
cat > si_$ec.in <<IN
&control
  calculation = 'scf', prefix = 'si$ec', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = $ec
/
&electrons
  conv_thr = 1e-9
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
4 4 4 1 1 1
IN
pw.x < si_$ec.in > si_$ec.out
grep -E 'estimated scf accuracy|convergence has been' si_$ec.out
E=$(grep '^!' si_$ec.out | awk '{print $5}')
echo "ecutwfc = $ec Ry   total energy = $E Ry"
done
