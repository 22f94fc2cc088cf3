# label: faulty
# fault: drift
# requires: lmp
# runtime: 10
# what: LAMMPS NVE of a Lennard-Jones liquid (864 atoms, started at T* 2.0) with a neighbor skin of 0.05 sigma and the neighbor list rebuilt only every 40 steps without checking (neigh_modify every 40 check no): atoms move into each other's cutoff between rebuilds without being in the list, so the total energy etotal, which NVE conserves, falls steadily, -3.78 -> -5.17 over 8000 steps (a loss of 0.02 per thermo line), while the temperature sinks from 1.04 to 0.48; no error, only 'Dangerous builds not checked' at the end.
cat > in.nve <<'IN'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 6 0 6 0 6
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 2.0 4928459 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.05 bin
neigh_modify every 40 delay 0 check no
fix 1 all nve
timestep 0.005
thermo_style custom step temp ke pe etotal press
thermo_modify format float %14.6e flush yes
thermo 100
run 8000
IN
labmate_log onset 1
lmp -in in.nve
