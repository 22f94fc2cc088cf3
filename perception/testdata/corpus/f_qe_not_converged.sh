# label: faulty
# fault: scf
# requires: pw.x
# runtime: 1
# what: Quantum ESPRESSO SCF of silicon with electron_maxstep = 3 and a threshold of 1e-12 Ry that needs about 8 iterations: "convergence NOT achieved after 3 iterations: stopping".
cat > si.in <<'IN'
&control
  calculation = 'scf', prefix = 'si', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 12
/
&electrons
  conv_thr = 1e-12, electron_maxstep = 3
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
