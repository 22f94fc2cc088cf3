# label: healthy
# fault: none
# requires: lmp
# runtime: 2
# what: LAMMPS NVE run of copper with thermo_style multi: every 200 steps a block "---- Step N ----" with TotEng, KinEng, Temp, PotEng, Press and the energy terms as name = value pairs; the energy is conserved and the temperature fluctuates.
cat > in.multi <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 600 1234 mom yes rot yes
fix 1 all nve
timestep 0.001
thermo 200
thermo_style multi
thermo_modify flush yes
run 1600
IN
lmp -in in.multi
