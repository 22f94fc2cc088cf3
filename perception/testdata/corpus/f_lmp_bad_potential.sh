# label: faulty
# fault: error
# requires: lmp
# runtime: 1
# what: LAMMPS input naming an EAM potential file that does not exist (Cu_u4.eam): "ERROR: cannot open EAM potential file" before the run starts.
cat > in.bad <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u4.eam
fix 1 all nve
run 1000
IN
labmate_log onset 1
lmp -in in.bad
