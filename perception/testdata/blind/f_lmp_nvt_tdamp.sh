# label: faulty
# fault: constraint
# requires: lmp
# runtime: 10
# what: LAMMPS NVT of a copper crystal (256 atoms, EAM) meant to be held at 600 K, started from 50 K, with the thermostat damping time typed as if in femtoseconds (fix nvt temp 600 600 100.0 in metal units: Tdamp = 100 ps, 50,000 timesteps instead of ~50-100): the Nose-Hoover thermostat is so weak that the temperature (which halves to ~25 K in the first 100 fs, as the kinetic energy shares itself with the potential) stays at 21-32 K for the whole 3000-step run, some 575 K below its declared 600 K setpoint throughout.
cat > in.nvt <<'IN'
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
velocity all create 50 4321 mom yes rot yes
fix 1 all nvt temp 600 600 100.0
timestep 0.002
thermo 25
thermo_style custom step temp pe etotal press
thermo_modify flush yes
run 3000
IN
labmate_log onset 1
lmp -in in.nvt
