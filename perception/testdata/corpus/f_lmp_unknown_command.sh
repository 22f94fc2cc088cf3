# label: faulty
# fault: error
# requires: lmp
# runtime: 1
# what: a LAMMPS input with a typo in a command (velcity for velocity): "ERROR: Unknown command: velcity all create 300 …" and the run stops before it starts.
cat > in.typo <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velcity all create 300 12345
fix 1 all nve
run 1000
IN
labmate_log onset 1
lmp -in in.typo
