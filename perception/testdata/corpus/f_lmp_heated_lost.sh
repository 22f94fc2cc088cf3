# label: faulty
# fault: explosion
# requires: lmp
# onset-line: ^ +[0-9]+ +[0-9]{6,}\.
# runtime: 6
# what: LAMMPS copper (256 atoms) heated by a Nose-Hoover thermostat ramped to 60000 K with a 2 fs timestep: at 20000 K the atoms move too far between neighbor list checks and the run ends with "ERROR: Lost atoms".
cat > in.heat <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 12345
fix 1 all nvt temp 300 60000 0.05
timestep 0.002
thermo 100
thermo_modify flush yes
run 20000
IN
labmate_log onset 1
lmp -in in.heat
