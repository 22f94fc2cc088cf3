# label: healthy
# fault: none
# requires: lmp
# runtime: 7
# what: the same 500-atom Lennard-Jones argon liquid started at 1200 K under `fix nvt temp 300 300 0.2` (a 0.2 ps damping time, 100 timesteps, as the LAMMPS manual advises): the temperature falls to the 300 K setpoint within about 0.5 ps, overshoots a little and then fluctuates around it by ~15 K for the rest of the run.
cat > in.ar <<'IN'
units metal
atom_style atomic
lattice fcc 5.72
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
mass 1 39.948
pair_style lj/cut 8.5
pair_coeff 1 1 0.0104 3.40
velocity all create 1200 4928459 mom yes rot yes
fix 1 all nvt temp 300 300 0.2
timestep 0.002
thermo 80
thermo_style custom step temp pe etotal press
thermo_modify flush yes
run 8000
IN
lmp -in in.ar
