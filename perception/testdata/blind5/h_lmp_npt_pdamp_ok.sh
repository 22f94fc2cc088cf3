# label: healthy
# fault: none
# requires: lmp
# runtime: 7
# what: LAMMPS aluminium (500 atoms, Zhou EAM) equilibrated at 300 K by NVT for 3 ps, then switched to NPT at 0 bar with a barostat damping time Pdamp = 1 ps (500 timesteps): the box expands by about 5% within 0.5 ps as the +36 kbar of the NVT stage relaxes (3% in the first 20 steps), after which the pressure fluctuates by a few kbar around zero (normal for a 500-atom cell) and the volume by about 0.5%.
cat > in.al_npt <<'IN'
units metal
atom_style atomic
lattice fcc 4.05
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
pair_style eam/alloy
pair_coeff * * /usr/share/lammps/potentials/Al_zhou.eam.alloy Al
velocity all create 600 5512 mom yes rot yes
timestep 0.002
thermo 20
thermo_style custom step temp press vol lx pe etotal
thermo_modify flush yes
# equilibrate the temperature at fixed volume first
fix 1 all nvt temp 300 300 0.1
run 1500
unfix 1
# then relax the box to zero pressure
fix 2 all npt temp 300 300 0.1 iso 0.0 0.0 1.0
run 1000
IN
lmp -in in.al_npt
