# label: faulty
# fault: scf
# requires: pw.x
# onset-line: iteration # +12 
# runtime: 34
# what: the same elongated aluminium cell at 12 Ry and 4x4x1 k-points with undamped linear mixing (beta 1.0, no history): the SCF first looks fine, reaching 5e-8 Ry at iteration 11, then sloshing takes over from iteration 12: the accuracy wanders between 1e-6 and 1e-3 Ry, then climbs to 100 Ry, for all 60 iterations.
cat > al4.in <<'IN'
&control
  calculation = 'scf', prefix = 'al4', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 6, celldm(1) = 7.5, celldm(3) = 4.0, nat = 4, ntyp = 1, ecutwfc = 12,
  occupations = 'smearing', smearing = 'mv', degauss = 0.005
/
&electrons
  mixing_beta = 1.0, mixing_ndim = 1, electron_maxstep = 60, conv_thr = 1e-10
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS crystal
Al 0.0 0.0 0.00
Al 0.5 0.5 0.25
Al 0.0 0.0 0.50
Al 0.5 0.5 0.75
K_POINTS automatic
4 4 1 0 0 0
IN
pw.x < al4.in
