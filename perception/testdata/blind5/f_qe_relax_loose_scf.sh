# label: faulty
# fault: oscillation
# requires: pw.x
# onset-line: SCF correction compared to forces is large
# runtime: 11
# what: Quantum ESPRESSO BFGS relaxation of a distorted methane molecule in a 12 bohr box (ultrasoft C, gamma point) to forces below 1e-4 Ry/bohr, with an SCF threshold of conv_thr = 1e-3 Ry (and upscale = 1, so pw.x may not tighten it): the forces carry an SCF error (~0.01-0.02 Ry/bohr) as large as themselves, pw.x says "SCF correction compared to forces is large" at the first step, and after four good steps the total force stalls near 0.01 Ry/bohr while the energy goes up and down, the trust radius collapses and the BFGS history is reset again and again until nstep (25) ends the run.
cat > ch4.relax.in <<'IN'
&control
  calculation = 'relax', prefix = 'ch4f', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
  forc_conv_thr = 1e-4, etot_conv_thr = 1e-6, nstep = 25
/
&system
  ibrav = 1, celldm(1) = 12.0, nat = 5, ntyp = 2, ecutwfc = 25, ecutrho = 200
/
&electrons
  conv_thr = 1e-3
/
&ions
  upscale = 1
/
ATOMIC_SPECIES
C 12.011 C.pz-rrkjus.UPF
H 1.008 H.pz-vbc.UPF
ATOMIC_POSITIONS bohr
C  0.00  0.00  0.00
H  1.30  1.20  1.15
H -1.15 -1.25  1.20
H -1.20  1.15 -1.30
H  1.25 -1.20 -1.10
K_POINTS gamma
IN
pw.x < ch4.relax.in
