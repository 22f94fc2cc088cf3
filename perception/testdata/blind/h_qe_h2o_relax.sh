# label: healthy
# fault: none
# requires: pw.x
# runtime: 8
# what: Quantum ESPRESSO BFGS relaxation of a distorted water molecule (O-H 2.2 and 1.6 bohr, 12-bohr box, ultrasoft O, 25/200 Ry cut-offs): nine SCF cycles, 70 SCF iterations in all; in each cycle the estimated scf accuracy falls from 1e-2..1e-5 Ry to below conv_thr = 1e-8, then jumps back up when the ions move; the total force falls 0.59 -> 0.0006 Ry/bohr with a plateau (0.20, 0.17) in the middle and the energy falls monotonically; ends with "bfgs converged" and "End of BFGS Geometry Optimization".
cat > h2o.in <<'IN'
&control
  calculation = 'relax', prefix = 'h2o', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 1, celldm(1) = 12.0, nat = 3, ntyp = 2, ecutwfc = 25, ecutrho = 200
/
&electrons
  conv_thr = 1e-8, mixing_beta = 0.4
/
&ions
/
ATOMIC_SPECIES
O 15.999 O.pz-rrkjus.UPF
H 1.008 H.pz-vbc.UPF
ATOMIC_POSITIONS bohr
O 0.0 0.0 0.0
H 2.2 0.0 0.0
H -0.2 1.6 0.0
K_POINTS gamma
IN
pw.x < h2o.in
