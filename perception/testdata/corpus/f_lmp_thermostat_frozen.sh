# label: faulty
# fault: setpoint
# requires: lmp
# runtime: 17
# what: LAMMPS copper (500 atoms) meant to be equilibrated at 300 K with a Nose-Hoover thermostat, but the input forgets the velocity command: a perfect lattice at rest has no forces, and a Nose-Hoover thermostat only rescales velocities, so it cannot heat atoms that do not move — Temp reads 1e-25 to 1e-20 K for thousands of steps instead of 300 K while the run goes on.
cat > in.nvt <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
fix 1 all nvt temp 300 300 0.1
timestep 0.001
thermo 100
thermo_modify flush yes
run 20000
IN
labmate_log onset 1
lmp -in in.nvt
