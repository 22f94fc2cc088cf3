# label: healthy
# fault: none
# runtime: 8
# what: a `while read` loop over a list of 10 temperatures that runs one quiet awk integration (4.5 million midpoint nodes) of the Lennard-Jones second virial coefficient B2*(T*) per line, each writing its result to a file, with nothing on stdout for about 8 s; then the table (B2*(1) = -5.31) and the Boyle temperature 3.42.
# Second virial coefficient of the Lennard-Jones fluid in reduced units,
# B2*(T*) = -2 pi int_0^inf (exp(-u(r)/T*) - 1) r^2 dr, u(r) = 4 (r^-12 - r^-6),
# for a list of temperatures: one quiet awk integration (midpoint rule) per line of the list, each writing
# its result to a file; then the table and the Boyle temperature, where B2 changes sign (about 3.42).
cat > temperatures.txt <<'LIST'
0.8
1.0
1.3
1.8
2.5
3.0
3.3
3.6
5.0
10.0
LIST
mkdir -p b2
echo "B2(T) of the Lennard-Jones fluid for $(wc -l < temperatures.txt) temperatures, one integration each ..."
while read -r T; do
  awk -v T="$T" -v N=4500000 'BEGIN {
    rmax = 12.0; dr = rmax / N; s = 0.0
    for (i = 0; i < N; i++) {
      r = (i + 0.5) * dr
      ir6 = 1.0 / (r * r * r * r * r * r)
      u = 4.0 * (ir6 * ir6 - ir6)
      x = -u / T
      if (x < -700) f = -1.0; else f = exp(x) - 1.0
      s += f * r * r * dr
    }
    printf "%s %.8f\n", T, -2.0 * 3.141592653589793 * s
  }' > "b2/T_$T.dat"
done < temperatures.txt
echo "   T*        B2*"
cat b2/T_*.dat | sort -g | awk '{ printf "%6.2f %12.6f\n", $1, $2 }'
sort -g b2/T_*.dat | awk 'NR > 1 && pb < 0 && $2 >= 0 {
  printf "Boyle temperature T_B* = %.3f (linear interpolation between T* = %s and %s)\n", pt - pb * ($1 - pt) / ($2 - pb), pt, $1 }
  { pt = $1; pb = $2 }'
