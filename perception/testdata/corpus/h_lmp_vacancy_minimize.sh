# label: healthy
# fault: none
# requires: lmp
# runtime: 3
# what: LAMMPS vacancy formation energy in copper: a 500-atom crystal, one atom deleted, conjugate-gradient minimisation (the potential energy decreases to its minimum, Temp stays 0), then a short NVE run at 100 K of the relaxed defect.
cat > in.vac <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
variable e0 equal pe
run 0
variable ecoh equal ${e0}/atoms
group gone id 1
delete_atoms group gone
thermo 10
thermo_modify flush yes
minimize 1e-12 1e-10 1000 10000
variable ev equal pe-(atoms)*${ecoh}
print "vacancy formation energy = ${ev} eV"
velocity all create 100 5511 mom yes rot yes
fix 1 all nve
timestep 0.001
thermo 100
run 1000
IN
lmp -in in.vac
