# label: healthy
# fault: none
# requires: lmp
# runtime: 5
# what: LAMMPS NVT (Nose-Hoover, fix nvt temp 500 500 0.1) of a 256-atom copper crystal started at 500 K: the temperature halves within 100 fs as energy flows into the potential, the thermostat brings it back to the 500 K setpoint within ~0.5 ps, and it then fluctuates around 500 K by a few tens of kelvin (the normal canonical fluctuation of 256 atoms) for the rest of the run.
cat > in.nvt <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 500 99121 mom yes rot yes
fix 1 all nvt temp 500 500 0.1
timestep 0.002
thermo 25
thermo_style custom step temp pe etotal press
thermo_modify flush yes
run 2000
IN
lmp -in in.nvt
