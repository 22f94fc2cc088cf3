# label: healthy
# fault: none
# requires: pw.x
# runtime: 20
# what: a k-point convergence test for fcc aluminium (Marzari-Vanderbilt smearing 0.02 Ry, 15 Ry): Quantum ESPRESSO SCF runs on 4x4x4, 6x6x6 and 8x8x8 grids, each converging in a handful of iterations, and a summary line per grid: the total energy changes by 27 mRy from 4x4x4 to 6x6x6 and by 5 mRy from 6x6x6 to 8x8x8, not monotonically, as a metal's does, and the Fermi energy moves between 7.7 and 8.7 eV.
for k in 4 6 8; do
cat > al_$k.in <<IN
&control
  calculation = 'scf', prefix = 'al$k', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 7.5, nat = 1, ntyp = 1, ecutwfc = 15,
  occupations = 'smearing', smearing = 'mv', degauss = 0.02
/
&electrons
  conv_thr = 1e-8
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS alat
Al 0.0 0.0 0.0
K_POINTS automatic
$k $k $k 0 0 0
IN
pw.x < al_$k.in | tee al_$k.out | grep -E 'estimated scf accuracy|convergence has been'
E=$(grep '^!' al_$k.out | awk '{print $5}')
EF=$(grep 'the Fermi energy is' al_$k.out | awk '{print $5}')
echo "k-grid = ${k}x${k}x${k}   total energy = $E Ry   Fermi energy = $EF eV"
done
