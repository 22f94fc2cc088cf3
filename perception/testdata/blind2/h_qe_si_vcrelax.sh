# label: healthy
# fault: none
# requires: pw.x
# runtime: 8
# what: Quantum ESPRESSO variable-cell relaxation of silicon from a compressed lattice (a = 9.6 bohr, P = 586 kbar), 2 k-points: the pressure falls 586 -> 89 -> 28 -> 4.4 -> -0.2 ... -0.1 kbar over 8 BFGS steps, each with its own converging SCF, then a final SCF; 'bfgs converged'.
cat > sivc.in <<'IN'
&control
  calculation = 'vc-relax', prefix = 'sivc', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo',
  etot_conv_thr = 1e-5, forc_conv_thr = 1e-4
/
&system
  ibrav = 2, celldm(1) = 9.60, nat = 2, ntyp = 1, ecutwfc = 14
/
&electrons
  conv_thr = 1e-9
/
&ions
/
&cell
  press = 0.0, press_conv_thr = 0.5
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.26 0.24 0.25
K_POINTS automatic
2 1 1 0 0 0
IN
pw.x < sivc.in
