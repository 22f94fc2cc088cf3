# label: healthy
# fault: none
# requires: pw.x
# runtime: 13
# what: Quantum ESPRESSO Born-Oppenheimer MD of an H2 molecule in an 8-bohr box started with a stretched bond (1.75 bohr): the molecule vibrates, the kinetic energy and the temperature swing between ~0 and 780 K every ~10 steps for 60 steps, while 'Ekin + Etot (const)' stays at -2.2446 Ry to within 2e-4 Ry.
cat > h2md.in <<'IN'
&control
  calculation = 'md', prefix = 'h2md', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo',
  dt = 10, nstep = 60
/
&system
  ibrav = 1, celldm(1) = 8.0, nat = 2, ntyp = 1, ecutwfc = 20
/
&electrons
  conv_thr = 1e-9
/
&ions
/
ATOMIC_SPECIES
H 1.008 H.pz-vbc.UPF
ATOMIC_POSITIONS bohr
H 0.00 0.00 0.00
H 1.75 0.00 0.00
K_POINTS gamma
IN
pw.x < h2md.in
