# label: faulty
# fault: stagnation
# runtime: 12
# what: a bash integer search `while (( 4*n*n*n != natoms ))` for the fcc box holding 1000 atoms (4 n^3 atoms per n x n x n cells): 1000 is not of that form (864, 1372), so n steps past 6 and 7 and the search runs on silently in the shell (4 n^3 wraps around 2^63 but can never equal 1000) until its 12 s guard on $SECONDS prints `error:` and returns 1.
# Set up a molecular-dynamics box of an fcc crystal with the requested number of atoms: an n x n x n
# block of cubic unit cells holds 4 n^3 atoms, so search the n with 4 n^3 == natoms. 1000 atoms is not
# of that form (4 * 6^3 = 864, 4 * 7^3 = 1372), and the search steps past it without ever stopping.
natoms=1000
a0=5.26   # lattice constant of solid argon, Angstrom

find_cells() {
  local n=1
  SECONDS=0
  while (( 4 * n * n * n != natoms )); do
    n=$(( n + 1 ))
    if (( n % 20000 == 0 && SECONDS >= 12 )); then
      echo "error: no fcc box with $natoms atoms found after trying n = 1..$n" >&2
      return 1
    fi
  done
  echo "$n"
}

echo "searching the number of fcc unit cells per side for $natoms atoms ..."
labmate_log onset 1        # the search below never meets its condition
ncell=$(find_cells) &&
  echo "box: $ncell x $ncell x $ncell cells, side $(awk -v n="$ncell" -v a="$a0" 'BEGIN { print n * a }') Angstrom, $natoms atoms"
