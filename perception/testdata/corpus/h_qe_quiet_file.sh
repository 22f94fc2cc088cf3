# label: healthy
# fault: none
# requires: pw.x
# perception: silence=1500ms
# perception: silence_error=3s
# runtime: 13
# what: a quiet job writing to a file: a cutoff convergence test of silicon (Quantum ESPRESSO SCF at 25, 30 and 35 Ry, 8x8x8 k-points, tight threshold) appending its output to scf.out, with nothing on stdout for several busy seconds; the run declares short silence limits (an Error after 3 s), and labmate follows scf.out, whose lines show it progressing.
echo "cutoff convergence of silicon; pw.x output goes to scf.out"
: > scf.out
for ecut in 25 30 35; do
  cat > si_$ecut.in <<IN
&control
  calculation = 'scf', prefix = 'si$ecut', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = $ecut
/
&electrons
  mixing_beta = 0.3, conv_thr = 1e-13
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
8 8 8 0 0 0
IN
  pw.x < si_$ecut.in >> scf.out
done
grep -E '^!|convergence has been achieved' scf.out
