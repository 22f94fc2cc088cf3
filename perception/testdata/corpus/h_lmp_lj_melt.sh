# label: healthy
# fault: none
# requires: lmp
# runtime: 2
# what: the LAMMPS "melt" benchmark in reduced Lennard-Jones units: an fcc lattice of 4000 atoms started at T* = 3 melts under NVE; Temp drops to about 1.6 and fluctuates, the energy is conserved, and the pressure settles near 4.7.
cat > in.melt <<'IN'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 10 0 10 0 10
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
thermo 50
thermo_modify flush yes
run 500
IN
lmp -in in.melt
