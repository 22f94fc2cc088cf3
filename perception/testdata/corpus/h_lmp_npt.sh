# label: healthy
# fault: none
# requires: lmp
# runtime: 3
# what: LAMMPS NPT equilibration of copper at 300 K and 1 bar from a compressed lattice (a = 3.55 A): the box expands by 5% over the first picosecond, the pressure falls from 2e5 bar to fluctuate around zero, the volume and the temperature settle; custom thermo columns step, temp, press, vol, lx and etotal.
cat > in.npt <<'IN'
units metal
atom_style atomic
lattice fcc 3.55
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 9981 mom yes rot yes
fix 1 all npt temp 300 300 0.1 iso 1 1 1.0
timestep 0.002
thermo 50
thermo_style custom step temp press vol lx etotal
thermo_modify flush yes
run 1500
IN
lmp -in in.npt
