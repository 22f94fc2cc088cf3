# label: faulty
# fault: explosion
# requires: lmp
# onset-line: ^\s+1520\s
# runtime: 6
# what: LAMMPS aluminium (500 atoms, Zhou EAM) equilibrated at 300 K by NVT for 3 ps, then switched to NPT at 0 bar with a barostat damping time Pdamp = 0.02 ps, 10 timesteps (the manual recommends about 1000): the box answers the +36 kbar of the NVT stage with a violent expansion, the volume grows twelvefold within the first 20 steps, the crystal is torn into a gas (pe from -1768 eV to ~0) and the box keeps expanding (volume x1.8e5 by the end) while the pressure reads ~0 bar; LAMMPS says nothing.
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
fix 2 all npt temp 300 300 0.1 iso 0.0 0.0 0.02
run 1000
IN
lmp -in in.al_npt
