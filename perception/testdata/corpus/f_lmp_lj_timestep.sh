# label: faulty
# fault: explosion
# requires: lmp
# runtime: 1
# what: the Lennard-Jones melt with a timestep of 0.02 tau, four times the usual 0.005, and neighbor lists rebuilt only every 20 steps without checks: in NVE the total energy drifts up, atoms get too close, and the reduced temperature explodes from 3 to 1e7 within 1500 steps, and the atoms fly out of the box; with lost atoms ignored the empty box then races through the remaining 18,000 steps and the run ends ok.
cat > in.melt <<'IN'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 8 0 8 0 8
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
timestep 0.02
thermo 100
thermo_modify flush yes lost ignore
run 20000
IN
labmate_log onset 1
lmp -in in.melt
