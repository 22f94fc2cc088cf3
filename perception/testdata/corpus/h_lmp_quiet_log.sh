# label: healthy
# fault: none
# requires: lmp
# perception: silence=1500ms
# perception: silence_error=3s
# runtime: 5
# what: a quiet LAMMPS job: copper NVE dynamics (500 atoms, 3000 steps) with screen output turned off (-screen none), writing its thermo table only to log.lammps; labmate follows the log, so the busy, silent run (short declared silence limits: an Error after 3 s) is seen progressing.
cat > in.quiet <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 777 mom yes rot yes
fix 1 all nve
timestep 0.001
thermo 200
thermo_modify flush yes
run 3000
IN
echo "running LAMMPS quietly; its log is log.lammps"
lmp -in in.quiet -screen none
tail -n 3 log.lammps
