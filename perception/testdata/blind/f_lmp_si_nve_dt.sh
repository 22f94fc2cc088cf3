# label: faulty
# fault: drift
# requires: lmp
# runtime: 8
# what: LAMMPS NVE of a 216-atom silicon crystal (Tersoff) started at 1200 K with a 10 fs timestep, ten times the usual 1 fs: the temperature looks plausible (~600 K, slowly creeping up), but the total energy TotEng, which NVE must conserve, drifts upward steadily: from -966.8 eV at step 0 to -963.5 after 500 steps, -961.2 after 2000 and -958.7 after 3000 (8 eV, half the kinetic energy), then faster, until atoms overlap and LAMMPS stops near step 4300 with "ERROR: Lost atoms".
cat > in.si <<'IN'
units metal
atom_style atomic
lattice diamond 5.431
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
mass 1 28.0855
pair_style tersoff
pair_coeff * * /usr/share/lammps/potentials/Si.tersoff Si
velocity all create 1200 5287 mom yes rot yes
fix 1 all nve
timestep 0.010
thermo 50
thermo_style custom step temp pe ke etotal press
thermo_modify flush yes
run 5000
IN
labmate_log onset 1
lmp -in in.si
