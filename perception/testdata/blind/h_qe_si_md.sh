# label: healthy
# fault: none
# requires: pw.x
# runtime: 39
# what: Quantum ESPRESSO Born-Oppenheimer molecular dynamics (Verlet, dt = 40 a.u.) of the two-atom silicon cell with one atom displaced from its site: the atom vibrates, the temperature swings between 0 and ~990 K and the kinetic energy between 0 and 0.0094 Ry every ~14 steps as energy flows between kinetic and potential, while "Ekin + Etot (const)" stays between -15.60475 and -15.60487 Ry (a 1.2e-4 Ry wobble in step with the vibration, no drift) over 40 steps.
cat > si_md.in <<'IN'
&control
  calculation = 'md', prefix = 'si_md', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo',
  dt = 40, nstep = 40
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 12, nosym = .true.
/
&electrons
  conv_thr = 1e-8
/
&ions
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.27 0.24 0.25
K_POINTS automatic
2 2 2 0 0 0
IN
pw.x < si_md.in
