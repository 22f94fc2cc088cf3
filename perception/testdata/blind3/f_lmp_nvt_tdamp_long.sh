# label: faulty
# fault: setpoint
# requires: lmp
# onset-line: ^\s+800\s
# runtime: 7
# what: LAMMPS NVT (Nose-Hoover) of a 500-atom Lennard-Jones argon liquid (metal units) started at 1200 K with `fix nvt temp 300 300 50.0`: a damping time of 50 ps (25 000 timesteps, three times the whole 16 ps run) couples the thermostat so weakly that the temperature never approaches its 300 K setpoint, settling near 780 K, 480 K above it, for the whole run; LAMMPS says nothing.
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
fix 1 all nvt temp 300 300 50.0
timestep 0.002
thermo 80
thermo_style custom step temp pe etotal press
thermo_modify flush yes
run 8000
IN
lmp -in in.ar
