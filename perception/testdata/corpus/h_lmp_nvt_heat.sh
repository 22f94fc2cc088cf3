# label: healthy
# fault: none
# requires: lmp
# runtime: 3
# what: LAMMPS heating of fcc copper (500 atoms, EAM) under a Nose-Hoover thermostat ramped from 300 K to 1800 K over 3 ps: the crystal melts on the way, the temperature rises sixfold and the total energy by 200 eV, steadily and on purpose.
cat > in.heat <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 87287 mom yes rot yes
fix 1 all nvt temp 300 1800 0.1
timestep 0.002
thermo 50
thermo_style custom step time temp pe ke etotal press vol
thermo_modify flush yes
run 1500
IN
lmp -in in.heat
