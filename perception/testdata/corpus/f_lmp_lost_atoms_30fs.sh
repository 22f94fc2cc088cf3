# label: faulty
# fault: explosion
# requires: lmp
# runtime: 2
# what: LAMMPS NVE dynamics of copper (500 atoms, EAM) with a 30 fs timestep, 30 times too large: the total energy, which NVE conserves, climbs steadily (10 eV, half the kinetic energy, within 1000 steps), the crystal heats up and the run ends with "ERROR: Lost atoms: original 500 current 331".
cat > in.lost <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 12345
fix 1 all nve
timestep 0.030
thermo 10
thermo_modify flush yes
run 2000
IN
labmate_log onset 1
lmp -in in.lost
