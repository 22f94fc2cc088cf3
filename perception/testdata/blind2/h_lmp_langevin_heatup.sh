# label: healthy
# fault: none
# requires: lmp
# runtime: 8
# what: LAMMPS heating of a 256-atom aluminium crystal (EAM) from 0 K with fix langevin 300 300 1.0 and fix nve: the temperature starts at exactly 0 and climbs steadily to the 300 K setpoint over the first ~1000 of 1500 steps (2 ps; the Langevin damping time is 1 ps), so it is far from its setpoint for most of the run: normal equilibration.
cat > in.heat <<'IN'
units metal
atom_style atomic
lattice fcc 4.05
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style eam/alloy
pair_coeff * * /usr/share/lammps/potentials/Al_zhou.eam.alloy Al
fix 1 all nve
fix 2 all langevin 300.0 300.0 1.0 48279
timestep 0.002
thermo_style custom step time temp pe etotal press
thermo 25
thermo_modify flush yes
run 1500
IN
lmp -in in.heat
