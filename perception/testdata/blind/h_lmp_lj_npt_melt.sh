# label: healthy
# fault: none
# requires: lmp
# runtime: 6
# what: LAMMPS NPT of a Lennard-Jones solid (500 atoms, fcc at density 0.8442, reduced units) started at T* = 2.0 and held by a Nose-Hoover thermostat and barostat at T* = 1.2, P* = 1.0 (Tdamp 0.5, Pdamp 2.0): the crystal melts and the box expands by about 25%, the pressure swings from +2 down to -4.5 and back while the volume grows, then keeps fluctuating between about 0.5 and 1.5 around its target, and Temp, after dipping to 0.9, fluctuates 1.1-1.3 around 1.2; 20000 steps printed every 100. Large pressure swings and a melting box are normal NPT behaviour.
cat > in.npt <<'IN'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
mass 1 1.0
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
velocity all create 2.0 87287 mom yes rot yes
fix 1 all npt temp 1.2 1.2 0.5 iso 1.0 1.0 2.0
timestep 0.005
thermo 100
thermo_style custom step temp press vol pe etotal
thermo_modify flush yes
run 20000
IN
lmp -in in.npt
