# label: faulty
# fault: error
# requires: pw.x
# runtime: 4
# what: Quantum ESPRESSO band structure of silicon in two runs: the SCF (8x8x8 k-points) converges normally, but the bands input, copied from another project, names prefix = 'si_pbe' instead of the SCF's 'sif', so pw.x finds no saved charge density for it in ./qe_tmp and stops at once ("xml data file ./qe_tmp/si_pbe.save/data-file-schema.xml not found", then the error block "Error in routine read_conf_from_file (1): fatal error reading xml file", exit status 1) instead of computing the bands.
cat > si.scf.in <<'IN'
&control
  calculation = 'scf', prefix = 'sif', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
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
  calculation = 'bands', prefix = 'si_pbe', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo', verbosity = 'high'
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
labmate_log onset 1     # the bands run reads a prefix the SCF never wrote
pw.x < si.bands.in
