# label: faulty
# fault: constraint
# requires: lmp
# runtime: 12
# what: LAMMPS "equilibration at 300 K" of a perfect copper crystal (256 atoms, EAM) with fix nvt temp 300 300 0.1, but the velocity command was left out: every atom sits at a lattice site where the forces cancel, and a Nose-Hoover thermostat only rescales velocities, so it cannot create motion from zero: Temp reads 0, then ~1e-26 K, rising by about a decade every 250 steps as the thermostat amplifies round-off noise, and is still below 1e-7 K after 3000 steps: some 300 K below its declared setpoint for the whole run (the energy and the pressure, -0.03 bar, do not change).
cat > in.eq <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 4 0 4 0 4
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
