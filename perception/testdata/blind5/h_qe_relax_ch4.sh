# label: healthy
# fault: none
# requires: pw.x
# runtime: 15
# what: Quantum ESPRESSO BFGS relaxation of a distorted methane molecule in a 12 bohr box (ultrasoft C, gamma point) with conv_thr = 1e-9 Ry: the total force falls from 0.048 to 1e-4 Ry/bohr in ten BFGS steps while the energy decreases at every step, and pw.x reports "bfgs converged".
cat > ch4.relax.in <<'IN'
&control
  calculation = 'relax', prefix = 'ch4h', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
  forc_conv_thr = 1e-4, etot_conv_thr = 1e-6, nstep = 25
/
&system
  ibrav = 1, celldm(1) = 12.0, nat = 5, ntyp = 2, ecutwfc = 25, ecutrho = 200
/
&electrons
  conv_thr = 1e-9
/
&ions
/
ATOMIC_SPECIES
C 12.011 C.pz-rrkjus.UPF
H 1.008 H.pz-vbc.UPF
ATOMIC_POSITIONS bohr
C  0.00  0.00  0.00
H  1.30  1.20  1.15
H -1.15 -1.25  1.20
H -1.20  1.15 -1.30
H  1.25 -1.20 -1.10
K_POINTS gamma
IN
pw.x < ch4.relax.in
