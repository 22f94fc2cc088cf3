# label: healthy
# fault: none
# requires: pw.x
# runtime: 1
# what: Quantum ESPRESSO SCF of fcc aluminium, a metal, done right: Marzari-Vanderbilt smearing of 0.02 Ry and 6x6x6 k-points; the accuracy falls below 1e-6 Ry in three iterations, and the Fermi energy and the smearing contribution are printed.
cat > al.in <<'IN'
&control
  calculation = 'scf', prefix = 'al', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 7.5, nat = 1, ntyp = 1, ecutwfc = 15,
  occupations = 'smearing', smearing = 'mv', degauss = 0.02
/
&electrons
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS alat
Al 0.00 0.00 0.00
K_POINTS automatic
6 6 6 0 0 0
IN
pw.x < al.in
