# label: healthy
# fault: none
# requires: pw.x
# runtime: 8
# what: Quantum ESPRESSO SCF of an 8-layer Al(001) slab with vacuum (a metal, 24 electrons) with Marzari-Vanderbilt smearing of 0.02 Ry: after the usual large first steps (the accuracy rises from 0.9 to 500 Ry at iteration 2, as the starting atomic charge rearranges) the estimated scf accuracy falls by one to two decades every few iterations and the SCF converges to 1e-8 Ry in about 22 iterations.
cat > al8.scf.in <<'IN'
&control
  calculation = 'scf', prefix = 'al8h', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 6, celldm(1) = 5.41, celldm(3) = 14.0, nat = 8, ntyp = 1, ecutwfc = 15,
  occupations = 'smearing', smearing = 'mv', degauss = 0.02
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
pw.x < al8.scf.in
