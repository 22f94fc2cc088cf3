# label: faulty
# fault: scf
# requires: pw.x
# runtime: 17
# what: Quantum ESPRESSO SCF of a 4-atom aluminium cell elongated 4x along z, with plain linear mixing at mixing_beta = 1.0 and no history (mixing_ndim = 1): charge sloshing along the long axis; the estimated scf accuracy reaches 3e-5 Ry, then climbs to 100 Ry and oscillates between 40 and 107 Ry until electron_maxstep (60) ends it with "convergence NOT achieved".
cat > al4.in <<'IN'
&control
  calculation = 'scf', prefix = 'al4', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 6, celldm(1) = 7.5, celldm(3) = 4.0, nat = 4, ntyp = 1, ecutwfc = 10,
  occupations = 'smearing', smearing = 'mv', degauss = 0.005
/
&electrons
  mixing_beta = 1.0, mixing_ndim = 1, electron_maxstep = 60, conv_thr = 1e-8
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS crystal
Al 0.0 0.0 0.00
Al 0.5 0.5 0.25
Al 0.0 0.0 0.50
Al 0.5 0.5 0.75
K_POINTS automatic
2 2 1 0 0 0
IN
labmate_log onset 1  # the mixing is wrong from the first iteration
pw.x < al4.in
