# label: faulty
# fault: drift
# requires: lmp
# runtime: 9
# what: LAMMPS NVE molecular dynamics of nickel (500 atoms, Foiles EAM) started at 1600 K (equipartition brings it to ~800 K) with a timestep of 16 fs, about 16 times the usual 1 fs for a metal whose vibrations have periods near 100 fs: the total energy, which NVE conserves, jumps by 8 eV (15% of the kinetic energy) within the first 200 steps and then climbs steadily, by 69 eV over 8000 steps (128 ps), more than the whole kinetic energy, while the temperature creeps from 810 to 1190 K; LAMMPS says nothing.
cat > in.ni_nve <<'IN'
units metal
atom_style atomic
lattice fcc 3.52
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Ni_u3.eam
velocity all create 1600 87287 mom yes rot yes
fix 1 all nve
timestep 0.016
thermo 100
thermo_style custom step time temp pe ke etotal press
thermo_modify flush yes
run 8000
IN
labmate_log onset 1     # the timestep is wrong from the first step
lmp -in in.ni_nve
