# label: healthy
# fault: none
# requires: pw.x
# watch: total_force < 0.2
# runtime: 2
# what: Quantum ESPRESSO BFGS relaxation of silicon with one atom displaced by 0.02 alat: several SCF cycles, each starting over at iteration 1, with the total force falling from about 0.1 Ry/bohr to below 1e-3 as the atom returns to its site.
cat > relax.in <<'IN'
&control
  calculation = 'relax', prefix = 'sir', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 12
/
&electrons
  conv_thr = 1e-9
/
&ions
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.27 0.25 0.25
K_POINTS automatic
4 4 4 1 1 1
IN
pw.x < relax.in
