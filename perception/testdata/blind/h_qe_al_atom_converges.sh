# label: healthy
# fault: none
# requires: pw.x
# runtime: 6
# what: Quantum ESPRESSO SCF of an isolated aluminium atom in a 10-bohr box with a tiny smearing (degauss = 1e-4 Ry) but a gentle Broyden mixing (mixing_beta = 0.05): a slow, bumpy start, the estimated scf accuracy going 1.0e-3, 9.2e-4, then up fivefold to 4.9e-3 at iteration 3, then down steadily to 8e-9 Ry; converged in 12 iterations.
cat > al_atom.in <<'IN'
&control
  calculation = 'scf', prefix = 'al_atom', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 1, celldm(1) = 10.0, nat = 1, ntyp = 1, ecutwfc = 10, nbnd = 6,
  occupations = 'smearing', smearing = 'gaussian', degauss = 0.0001
/
&electrons
  mixing_beta = 0.05, electron_maxstep = 60, conv_thr = 1e-8
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS bohr
Al 0.0 0.0 0.0
K_POINTS gamma
IN
pw.x < al_atom.in
