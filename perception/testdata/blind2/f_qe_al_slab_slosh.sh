# label: faulty
# fault: scf
# requires: pw.x
# onset-line: iteration # 28 
# runtime: 10
# what: Quantum ESPRESSO SCF of a 4-layer Al(001) slab (tetragonal cell 43 bohr long, about 32 bohr of it vacuum, 2 k-points, ecutwfc 12) with mixing_beta = 0.95, plain mixing, mixing_ndim = 2 and a tiny Gaussian smearing (0.002 Ry): charge sloshing across the long cell; the estimated scf accuracy jumps up and down by 1-2 decades from the start, reaches 7.8e-7 Ry at iteration 27 and then climbs back, wandering between 1e-5 and 0.2 Ry with no progress until electron_maxstep (80) ends with 'convergence NOT achieved'.
cat > slab.in <<'IN'
&control
  calculation = 'scf', prefix = 'alslab', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 6, celldm(1) = 5.40, celldm(3) = 8.0, nat = 4, ntyp = 1, ecutwfc = 12,
  occupations = 'smearing', smearing = 'gaussian', degauss = 0.002
/
&electrons
  mixing_mode = 'plain', mixing_beta = 0.95, mixing_ndim = 2, electron_maxstep = 80, conv_thr = 1e-7
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS bohr
Al 0.00 0.00  0.00
Al 2.70 2.70  3.82
Al 0.00 0.00  7.64
Al 2.70 2.70 11.46
K_POINTS automatic
2 1 1 0 0 0
IN
pw.x < slab.in
