# label: faulty
# fault: error
# requires: pw.x
# runtime: 1
# what: Quantum ESPRESSO SCF of silicon naming a pseudopotential file that does not exist (Si.pz-bhs.UPF; Debian ships Si.pz-vbc.UPF): pw.x prints an error block "Error in routine readpp (1): file … not found" and stops.
cat > si.in <<'IN'
&control
  calculation = 'scf', prefix = 'si', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 12
/
&electrons
/
ATOMIC_SPECIES
Si 28.086 Si.pz-bhs.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
4 4 4 1 1 1
IN
labmate_log onset 1
pw.x < si.in
echo "pw.x exited with status $?"
