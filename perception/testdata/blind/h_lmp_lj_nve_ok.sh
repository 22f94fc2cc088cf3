# label: healthy
# fault: none
# requires: lmp
# runtime: 6
# what: LAMMPS NVE of the same Lennard-Jones liquid (256 atoms, rho* = 0.8442, started at T* = 1.5) with the usual timestep 0.005 tau, reported with thermo_style one: the temperature drops to ~0.72 within 100 steps (the crystal melts and kinetic energy turns into potential energy) and then fluctuates between 0.71 and 0.78, and TotEng stays at -4.54 to within 3e-3 for 4000 steps.
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
timestep 0.005
thermo 50
thermo_style one
thermo_modify flush yes
run 4000
IN
lmp -in in.lj
