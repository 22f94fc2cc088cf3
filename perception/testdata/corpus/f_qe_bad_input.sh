# label: faulty
# fault: error
# requires: pw.x
# runtime: 1
# what: Quantum ESPRESSO input with a misspelt variable in &system (ecutwf for ecutwfc): pw.x prints the error block "Error in routine read_namelists (1): bad line in namelist &system" and stops.
cat > si.in <<'IN'
&control
  calculation = 'scf', prefix = 'si', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwf = 12
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
4 4 4 1 1 1
IN
labmate_log onset 1
pw.x < si.in
