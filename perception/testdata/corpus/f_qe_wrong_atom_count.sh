# label: faulty
# fault: error
# requires: pw.x
# runtime: 1
# what: Quantum ESPRESSO input declaring nat = 3 with two atomic positions (a line lost when a cell was edited): pw.x takes the K_POINTS line for the third atom and stops: "Error in routine read_cards (3): wrong number of columns in ATOMIC_POSITIONS".
cat > si.in <<'IN'
&control
  calculation = 'scf', prefix = 'si', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 3, ntyp = 1, ecutwfc = 12
/
&electrons
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
