# label: healthy
# fault: none
# requires: lmp
# runtime: 8
# what: LAMMPS NVE molecular dynamics of nickel (500 atoms, Foiles EAM) started at 1600 K with a timestep of 1 fs: equipartition halves the temperature to ~800 K within 0.1 ps, after which it fluctuates by ±40 K while the total energy stays constant to 0.03 eV (5e-4 of the kinetic energy).
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
timestep 0.001
thermo 100
thermo_style custom step time temp pe ke etotal press
thermo_modify flush yes
run 8000
IN
lmp -in in.ni_nve
