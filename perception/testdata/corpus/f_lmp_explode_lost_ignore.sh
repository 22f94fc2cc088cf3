# label: faulty
# fault: explosion
# requires: lmp
# runtime: 2
# what: LAMMPS copper at 30 fs per step with neighbor lists rebuilt every step and thermo_modify lost ignore, so nothing stops the run: the total energy, which NVE conserves, climbs by half the kinetic energy within 800 steps, then the temperature jumps from 400 K to 3e5 K when atoms collide, nearly all atoms leave the box, and the remaining few keep flying until step 8000; the run "ends ok".
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
thermo_modify flush yes lost ignore
run 8000
IN
labmate_log onset 1
lmp -in in.explode
