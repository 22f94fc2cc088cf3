# label: healthy
# fault: none
# requires: pw.x
# runtime: 3
# what: Quantum ESPRESSO SCF of a 4-atom aluminium slab-like cell (LDA, 10 Ry, smearing) with Broyden mixing (beta 0.7, 2 vectors); the estimated scf accuracy jumps back up 9x and 30x on its way down (a noisy start), then converges in 9 iterations.
cat > al4.in <<'IN'
&control
  calculation = 'scf', prefix = 'al4', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 6, celldm(1) = 7.5, celldm(3) = 4.0, nat = 4, ntyp = 1, ecutwfc = 12,
  occupations = 'smearing', smearing = 'mv', degauss = 0.005
/
&electrons
  mixing_beta = 0.7, mixing_ndim = 2, conv_thr = 1e-8
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS crystal
Al 0.0 0.0 0.00
Al 0.5 0.5 0.25
Al 0.0 0.0 0.50
Al 0.5 0.5 0.75
K_POINTS automatic
4 4 1 0 0 0
IN
pw.x < al4.in
