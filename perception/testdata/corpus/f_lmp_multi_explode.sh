# label: faulty
# fault: explosion
# requires: lmp
# runtime: 2
# what: the lost-atoms-ignored explosion of copper at 30 fs, reported with thermo_style multi: the total energy in the "TotEng = …" pairs drifts up by a quarter of the kinetic energy within 500 steps, the temperature then jumps from about 400 K to 1e5 K and more when the atoms collide, and the run carries on to step 6000 and ends ok.
cat > in.explode <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 12345
fix 1 all nve
neigh_modify every 1 delay 0 check yes
timestep 0.030
thermo 100
thermo_style multi
thermo_modify flush yes lost ignore
run 6000
IN
labmate_log onset 1
lmp -in in.explode
