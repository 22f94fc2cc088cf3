# label: faulty
# fault: drift
# requires: lmp
# runtime: 6
# what: LAMMPS NVE dynamics of copper (500 atoms from 300 K) with a 28 fs timestep: no atoms are lost within the run, but the total energy, which NVE must conserve, drifts upward steadily — by a quarter of the kinetic energy after about 1800 steps and by the whole of it after 8000, while the temperature creeps up; the trajectory is no longer the system's.
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
timestep 0.028
thermo 100
thermo_modify flush yes
run 8000
IN
labmate_log onset 1
lmp -in in.drift
