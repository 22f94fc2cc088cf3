# label: healthy
# fault: none
# requires: pw.x
# runtime: 7
# what: Quantum ESPRESSO band structure of silicon in two runs: an SCF (8x8x8 k-points, converging to 1e-10 Ry in about 7 iterations), then a bands calculation that reads its charge density and diagonalises 8 bands at 101 k-points along L-Gamma-X-W-Gamma with verbosity = 'high', printing "Computing kpt #: N of 101" as it goes and the band energies at the end.
cat > si.scf.in <<'IN'
&control
  calculation = 'scf', prefix = 'sih', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.26, nat = 2, ntyp = 1, ecutwfc = 20
/
&electrons
  conv_thr = 1e-10
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
8 8 8 0 0 0
IN
cat > si.bands.in <<'IN'
&control
  calculation = 'bands', prefix = 'sih', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo', verbosity = 'high'
/
&system
  ibrav = 2, celldm(1) = 10.26, nat = 2, ntyp = 1, ecutwfc = 20, nbnd = 8
/
&electrons
  diago_thr_init = 1e-8
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS tpiba_b
5
0.5 0.5 0.5 30
0.0 0.0 0.0 30
1.0 0.0 0.0 10
1.0 0.5 0.0 30
0.0 0.0 0.0 1
IN
pw.x < si.scf.in
pw.x < si.bands.in
