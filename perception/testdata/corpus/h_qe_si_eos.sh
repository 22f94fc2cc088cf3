# label: healthy
# fault: none
# requires: pw.x
# runtime: 4
# what: Quantum ESPRESSO equation of state of silicon: six SCF runs at lattice constants 9.8-10.8 bohr (each SCF cycle restarts its iteration count and its accuracy from 0.1 Ry), then a table of alat and total energy; the minimum is near 10.2 bohr.
printf 'alat energy\n' > eos.txt
for a in 9.8 10.0 10.2 10.4 10.6 10.8; do
  cat > si_$a.in <<IN
&control
  calculation = 'scf', prefix = 'si$a', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 2, celldm(1) = $a, nat = 2, ntyp = 1, ecutwfc = 12
/
&electrons
  conv_thr = 1e-9
/
ATOMIC_SPECIES
Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
Si 0.00 0.00 0.00
Si 0.25 0.25 0.25
K_POINTS automatic
4 4 4 1 1 1
IN
  pw.x < si_$a.in > si_$a.out
  grep -E 'iteration #|estimated scf accuracy|^!' si_$a.out
  printf '%s %s\n' "$a" "$(awk '/^!/ {print $5}' si_$a.out)" >> eos.txt
done
cat eos.txt
