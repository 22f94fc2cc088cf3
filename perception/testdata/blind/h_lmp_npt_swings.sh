# label: healthy
# fault: none
# requires: lmp
# runtime: 13
# what: LAMMPS NPT of a small copper crystal (256 atoms, EAM) at 300 K and 0 bar with a 1 ps barostat, started hot (600 K): the instantaneous pressure of such a small box swings between -21 and +20 kbar in the first 0.4 ps and keeps fluctuating by several kbar (2-9 kbar) around zero for the rest of the run, while the volume settles near 3066 A^3 and the temperature, after dropping to 124 K and overshooting to 358 K, settles between about 265 and 310 K; large pressure swings are normal for NPT of 256 atoms.
cat > in.npt <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 600 28411 mom yes rot yes
fix 1 all npt temp 300 300 0.1 iso 0 0 1.0
timestep 0.002
thermo 25
thermo_style custom step temp press vol etotal
thermo_modify flush yes
run 2000
IN
lmp -in in.npt
