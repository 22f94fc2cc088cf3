# label: faulty
# fault: scf
# requires: pw.x
# runtime: 12
# what: Quantum ESPRESSO SCF of an 8-layer Al(001) slab with vacuum (a metal, 24 electrons) run with the default occupations = 'fixed', as for an insulator: the lowest 12 bands are filled at every k-point whatever their energy, so the occupations of the bands crossing the Fermi level flip from one iteration to the next, after the same large first steps as with smearing (0.9, 540 Ry) the estimated scf accuracy wanders between 1 and 1e-6 Ry, bouncing back up 4-40x again and again (to 1.1 Ry at iteration 12, to 3e-3 at iteration 30), and pw.x stops at electron_maxstep (40) with "convergence NOT achieved".
cat > al8.scf.in <<'IN'
&control
  calculation = 'scf', prefix = 'al8f', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 6, celldm(1) = 5.41, celldm(3) = 14.0, nat = 8, ntyp = 1, ecutwfc = 15,
  occupations = 'fixed'
/
&electrons
  conv_thr = 1e-8, electron_maxstep = 40
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS alat
Al 0.0 0.0 0.0
Al 0.5 0.5 0.7071
Al 0.0 0.0 1.4142
Al 0.5 0.5 2.1213
Al 0.0 0.0 2.8284
Al 0.5 0.5 3.5355
Al 0.0 0.0 4.2426
Al 0.5 0.5 4.9497
K_POINTS automatic
6 6 1 0 0 0
IN
labmate_log onset 1     # a metal with fixed occupations: wrong from the first iteration
pw.x < al8.scf.in
