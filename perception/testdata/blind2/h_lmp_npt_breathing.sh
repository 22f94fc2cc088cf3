# label: healthy
# fault: none
# requires: lmp
# runtime: 8
# what: LAMMPS NPT of solid argon (500 atoms, LJ, 60 K, 1 atm) started from an expanded lattice: the box shrinks by 20% in the first few hundred fs, then breathes, the pressure swinging between about -250 and +330 atm around its 1 atm target for 12000 steps while the volume fluctuates by 1-2%: normal NPT of a small box.
cat > in.breathe <<'IN'
units real
atom_style atomic
lattice fcc 5.8
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
mass 1 39.948
pair_style lj/cut 8.5
pair_coeff 1 1 0.2381 3.405
pair_modify tail yes
velocity all create 60.0 9182 mom yes rot yes
neighbor 2.0 bin
fix 1 all npt temp 60.0 60.0 200.0 iso 1.0 1.0 1500.0
timestep 5.0
thermo_style custom step temp press vol density pe
thermo 100
thermo_modify flush yes
run 12000
IN
lmp -in in.breathe
