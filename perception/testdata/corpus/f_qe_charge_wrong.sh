# label: faulty
# fault: error
# requires: pw.x
# runtime: 1
# what: Quantum ESPRESSO SCF of fcc aluminium, a metal, with the default fixed occupations: "WARNING: integrated charge= 2.3, expected= 3.0" after the first diagonalisation, then the error block "charge is wrong: smearing is needed".
cat > al.in <<'IN'
&control
  calculation = 'scf', prefix = 'al', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 7.5, nat = 1, ntyp = 1, ecutwfc = 15
/
&electrons
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS alat
Al 0.00 0.00 0.00
K_POINTS automatic
4 4 4 0 0 0
IN
labmate_log onset 1
pw.x < al.in
