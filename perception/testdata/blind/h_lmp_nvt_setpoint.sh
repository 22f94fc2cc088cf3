# label: healthy
# fault: none
# requires: lmp
# runtime: 4
# what: LAMMPS NVT (Nose-Hoover, fix nvt temp 500 500 0.1) of a 256-atom aluminium crystal started at 500 K: the temperature halves within 100 fs as energy flows into the potential, the thermostat brings it back to the 500 K setpoint within ~0.5 ps, and it then fluctuates around 500 K by about +-30 K (the normal canonical fluctuation of 256 atoms) for the rest of the run.
cat > in.nvt <<'IN'
units metal
atom_style atomic
lattice fcc 4.05
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style eam/alloy
pair_coeff * * /usr/share/lammps/potentials/Al_zhou.eam.alloy Al
velocity all create 500 99121 mom yes rot yes
fix 1 all nvt temp 500 500 0.1
timestep 0.002
thermo 25
thermo_style custom step temp pe etotal press
thermo_modify flush yes
run 3000
IN
lmp -in in.nvt
