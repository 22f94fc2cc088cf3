# label: faulty
# fault: constraint
# requires: lmp
# runtime: 10
# what: LAMMPS "equilibration at 300 K" of a perfect copper crystal (500 atoms, EAM) with fix nvt temp 300 300 0.1, but the velocity command was left out: every atom sits at a lattice site where the forces cancel exactly, and a Nose-Hoover thermostat only rescales velocities, so it cannot create motion from zero: Temp stays at 0 K, 300 K below its declared setpoint, for all 3000 steps (the pressure, -1.5 kbar, and the energy never change either).
cat > in.eq <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
fix 1 all nvt temp 300 300 0.1
timestep 0.002
thermo 25
thermo_style custom step temp pe etotal press
thermo_modify flush yes
run 3000
IN
labmate_log onset 1
lmp -in in.eq
