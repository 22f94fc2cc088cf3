# label: healthy
# fault: none
# requires: lmp
# runtime: 9
# what: LAMMPS uniaxial tensile test of a 500-atom copper crystal (EAM) at 300 K: a short NPT equilibration, then fix deform at an engineering strain rate of 0.02/ps: the tensile stress v_sxx grows steadily from ~0 to ~7 GPa over 5000 steps (10% strain), ringing with the box's elastic oscillations, while v_syy and the temperature fluctuate about 0 and 300 K: elastic loading, not a blow-up.
cat > in.tens <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 300 5512 mom yes rot yes
fix 1 all npt temp 300 300 0.1 iso 0 0 1.0
thermo 200
run 500
unfix 1
variable L0 equal lx
variable l0 equal ${L0}
variable strain equal (lx-v_l0)/v_l0
variable sxx equal -pxx/10000
variable syy equal -pyy/10000
fix 2 all npt temp 300 300 0.1 y 0 0 1.0 z 0 0 1.0
fix 3 all deform 1 x erate 0.02 units box remap x
thermo_style custom step v_strain v_sxx v_syy temp pe pxx
thermo_modify format float %10.5f flush yes
thermo 100
run 5000
IN
lmp -in in.tens
