# label: faulty
# fault: drift
# requires: lmp
# runtime: 4
# what: LAMMPS NVE dynamics of copper (500 atoms from 300 K) with a 29 fs timestep: for thousands of steps nothing looks wrong in the temperature, but the total energy, which NVE must conserve, drifts upward steadily — by a quarter of the kinetic energy after about 1000 steps, by two thirds after 3000 — until the heated crystal loses atoms and LAMMPS stops near step 3500.
cat > in.drift <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 4242 mom yes rot yes
fix 1 all nve
timestep 0.029
thermo 100
thermo_modify flush yes
run 8000
IN
labmate_log onset 1
lmp -in in.drift
