# label: faulty
# fault: explosion
# requires: lmp
# runtime: 4
# what: LAMMPS NPT of a Lennard-Jones liquid (500 atoms, T* 1.2, P* 1.0) with the barostat damping Pdamp = 0.02 tau, four timesteps (LAMMPS recommends ~1000): the box is driven so hard by the initial pressure error (-5.2) that it collapses and re-expands violently within the first 50 steps and LAMMPS stops with 'ERROR: Domain too large for neighbor bins' right after the first thermo_style multi block.
cat > in.npt <<'IN'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.2 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 1 delay 0 check yes
fix 1 all npt temp 1.2 1.2 0.5 iso 1.0 1.0 0.02
timestep 0.005
thermo_style multi
thermo 50
thermo_modify flush yes
run 6000
IN
labmate_log onset 1
lmp -in in.npt
