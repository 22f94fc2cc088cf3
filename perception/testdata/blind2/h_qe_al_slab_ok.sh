# label: healthy
# fault: none
# requires: pw.x
# runtime: 8
# what: Quantum ESPRESSO SCF of 4- and 6-layer Al(001) slabs (the system of f_qe_al_slab_slosh.sh) with sensible settings: Marzari-Vanderbilt smearing 0.03 Ry and local-TF mixing with beta 0.2: each SCF converges in 11-12 iterations, the estimated accuracy falling from 0.03-0.06 Ry to below 1e-7 with small bumps.
for nl in 4 6; do
  c=$(awk -v n=$nl 'BEGIN { printf "%.4f", (n * 3.82 + 16.0) / 5.40 }')
  {
    cat <<IN
&control
  calculation = 'scf', prefix = 'alslab$nl', outdir = './qe_tmp', pseudo_dir = '/usr/share/espresso/pseudo'
/
&system
  ibrav = 6, celldm(1) = 5.40, celldm(3) = $c, nat = $nl, ntyp = 1, ecutwfc = 12,
  occupations = 'smearing', smearing = 'mv', degauss = 0.03
/
&electrons
  mixing_mode = 'local-TF', mixing_beta = 0.2, electron_maxstep = 80, conv_thr = 1e-7
/
ATOMIC_SPECIES
Al 26.98 Al.pz-vbc.UPF
ATOMIC_POSITIONS bohr
IN
    for i in $(seq 0 $((nl - 1))); do
      if [ $((i % 2)) -eq 0 ]; then xy="0.00 0.00"; else xy="2.70 2.70"; fi
      echo "Al $xy $(awk -v i=$i 'BEGIN { printf "%.2f", i * 3.82 }')"
    done
    printf 'K_POINTS automatic\n2 1 1 0 0 0\n'
  } > slab$nl.in
  echo "=== Al(001) slab, $nl layers ==="
  pw.x < slab$nl.in
done
