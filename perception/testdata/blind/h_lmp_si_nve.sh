# label: healthy
# fault: none
# requires: lmp
# runtime: 14
# what: LAMMPS NVE of a 216-atom silicon crystal (Tersoff potential) started at 1200 K with a 1 fs timestep: the temperature halves to ~600 K within 50 fs (equipartition between kinetic and potential energy) and then fluctuates between about 550 and 650 K, while the total energy TotEng, which NVE conserves, stays at -966.80 eV to within 0.005 eV; the pressure swings between -9 and +2 kbar.
cat > in.si <<'IN'
units metal
atom_style atomic
lattice diamond 5.431
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
mass 1 28.0855
pair_style tersoff
pair_coeff * * /usr/share/lammps/potentials/Si.tersoff Si
velocity all create 1200 5287 mom yes rot yes
fix 1 all nve
timestep 0.001
thermo 25
thermo_style custom step temp pe ke etotal press
thermo_modify flush yes
run 2000
IN
lmp -in in.si
