# label: faulty
# fault: drift
# requires: lmp
# runtime: 22
# what: LAMMPS NVE of a Lennard-Jones liquid (256 atoms, rho* = 0.8442, started at T* = 1.5) with a timestep of 0.024 tau, almost five times the usual 0.005, thermo_style one: the total energy TotEng, which NVE conserves, drifts upward steadily and ever faster: -4.53 at step 0, -4.42 at 1200, -4.13 at 2400, -3.45 at 3600 (a drift as large as the kinetic energy), while the temperature creeps from 0.72 to 1.1; nothing jumps until the liquid flies apart and LAMMPS stops near step 3700 with "ERROR: Lost atoms".
cat > in.lj <<'IN'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.5 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 1 delay 0 check yes
fix 1 all nve
timestep 0.024
thermo 50
thermo_style one
thermo_modify flush yes
run 12000
IN
labmate_log onset 1
lmp -in in.lj
