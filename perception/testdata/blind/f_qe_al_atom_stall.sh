# label: faulty
# fault: scf
# requires: pw.x
# onset-line: iteration # +6 
# runtime: 23
# what: Quantum ESPRESSO SCF of an isolated aluminium atom in a 10-bohr box (Gamma point, 6 bands) with an almost zero Gaussian smearing (degauss = 1e-4 Ry) and plain linear mixing without history (mixing_beta = 0.5, mixing_ndim = 1): the single 3p electron is shared among three degenerate p orbitals, the occupations flip back and forth between iterations, and after reaching 5.5e-4 Ry at iteration 2 the estimated scf accuracy climbs to 3e-2 Ry and then sits at 0.0317-0.0318 Ry, a locked cycle, until electron_maxstep (150) ends it with "convergence NOT achieved".
cat > al_atom.in <<'IN'
&control
  calculation = 'scf', prefix = 'al_atom', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 1, celldm(1) = 10.0, nat = 1, ntyp = 1, ecutwfc = 10, nbnd = 6,
  occupations = 'smearing', smearing = 'gaussian', degauss = 0.0001
/
&electrons
  mixing_beta = 0.5, mixing_ndim = 1, electron_maxstep = 150, conv_thr = 1e-8
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS bohr
Al 0.0 0.0 0.0
K_POINTS gamma
IN
pw.x < al_atom.in
