# label: faulty
# fault: scf
# requires: pw.x
# onset-line: iteration # +4 
# runtime: 36
# what: Quantum ESPRESSO SCF of an isolated aluminium atom in a 10-bohr box with a small smearing (degauss = 5e-4 Ry) and undamped-history linear mixing (mixing_beta = 0.3, mixing_ndim = 1): after 1.4e-4 Ry at iteration 3 the estimated scf accuracy stalls, alternating between ~1e-5 and ~2e-3 Ry from one iteration to the next for about 30 iterations with no net progress, then creeps up to 2-3e-2 Ry and stays there until electron_maxstep (200) ends the run with "convergence NOT achieved".
cat > al_atom.in <<'IN'
&control
  calculation = 'scf', prefix = 'al_atom', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 1, celldm(1) = 10.0, nat = 1, ntyp = 1, ecutwfc = 10, nbnd = 6,
  occupations = 'smearing', smearing = 'gaussian', degauss = 0.0005
/
&electrons
  mixing_beta = 0.3, mixing_ndim = 1, electron_maxstep = 200, conv_thr = 1e-8
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS bohr
Al 0.0 0.0 0.0
K_POINTS gamma
IN
pw.x < al_atom.in
