# label: healthy
# fault: none
# requires: lmp
# runtime: 4
# what: LAMMPS NVE molecular dynamics of fcc copper (500 atoms, Cu_u3.eam, 1 fs, velocity Verlet) started at 300 K: the temperature drops to about 150 K within 100 fs (equipartition with the potential energy) and fluctuates by ±10 K over 2 ps; the total energy is conserved to 1e-4 eV.
cat > in.nve <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 4928459 mom yes rot yes
fix 1 all nve
timestep 0.001
thermo 100
thermo_modify flush yes
run 2000
IN
lmp -in in.nve
