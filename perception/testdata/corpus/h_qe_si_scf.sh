# label: healthy
# fault: none
# requires: pw.x
# watch: total_force < 1e-3
# runtime: 1
# what: Quantum ESPRESSO SCF of diamond silicon (2 atoms, LDA, 16 Ry, 4x4x4 k-points) with forces and stress: the estimated scf accuracy falls geometrically to 1e-11 Ry in about 8 iterations; zero forces by symmetry, a pressure of a few kbar.
cat > si.in <<'IN'
&control
  calculation = 'scf', prefix = 'si', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo',
  tprnfor = .true., tstress = .true.
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 16
/
&electrons
  conv_thr = 1e-11
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
4 4 4 1 1 1
IN
pw.x < si.in
