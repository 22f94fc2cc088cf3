# label: healthy
# fault: none
# requires: pw.x
# runtime: 2
# what: Quantum ESPRESSO silicon in two steps: an SCF, then a non-self-consistent calculation on a denser 8x8x8 mesh with 8 bands reading its charge density (no SCF iterations, "End of band structure calculation"), as a band-gap or DOS workflow does.
cat > scf.in <<'IN'
&control
  calculation = 'scf', prefix = 'si', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 12
/
&electrons
  conv_thr = 1e-9
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
4 4 4 1 1 1
IN
sed -e "s/'scf'/'nscf'/" -e 's/ecutwfc = 12/ecutwfc = 12, nbnd = 8, occupations = "tetrahedra"/' -e 's/4 4 4 1 1 1/8 8 8 0 0 0/' scf.in > nscf.in
pw.x < scf.in
pw.x < nscf.in
