#!/usr/bin/env bash
# eos-scan.sh CODE TEMPLATE A1 A2 … — one run of CODE (pw.x or lmp) per lattice parameter A,
# with every @A@ in TEMPLATE replaced by it; prints one line per point, in order:
#
#   A ENERGY [MAGNETIZATION]
#
#   pw.x  ENERGY is the converged total energy of the cell in Ry (the "!" line); a point whose
#         SCF did not converge is reported on stderr and left out. MAGNETIZATION is the total
#         magnetization in Bohr magnetons per cell, when the run is spin-polarized.
#   lmp   ENERGY is what the input prints after EOS_ENERGY (eV per atom).
#
# Each point's input and output stay beside the template (point-A.in, point-A.out). $LAUNCH
# prefixes every run, e.g. LAUNCH="mpirun -np 2". The exit status is 1 when a point failed.
set -u
if [ $# -lt 3 ]; then
	echo "usage: eos-scan.sh pw.x|lmp TEMPLATE A1 A2 …" >&2
	exit 2
fi
code=$1 tmpl=$2
shift 2
[ -r "$tmpl" ] || { echo "eos-scan: cannot read the template $tmpl" >&2; exit 2; }
grep -q '@A@' "$tmpl" || { echo "eos-scan: the template $tmpl has no @A@ placeholder" >&2; exit 2; }
case "$code" in
pw.x | lmp) ;;
*) echo "eos-scan: unknown code $code (pw.x or lmp)" >&2; exit 2 ;;
esac
dir=$(dirname "$tmpl")
status=0
for a in "$@"; do
	in="$dir/point-$a.in" out="$dir/point-$a.out"
	sed "s/@A@/$a/g" "$tmpl" >"$in"
	m=""
	if [ "$code" = pw.x ]; then
		(cd "$dir" && ${LAUNCH:-} pw.x -in "point-$a.in") >"$out" 2>&1
		if ! grep -q "convergence has been achieved" "$out"; then
			echo "eos-scan: a = $a: pw.x did not converge (see $out)" >&2
			status=1
			continue
		fi
		e=$(awk '/^!/ { e = $5 } END { print e }' "$out")
		m=$(awk '/total magnetization/ { m = $4 } END { print m }' "$out")
	else
		(cd "$dir" && ${LAUNCH:-} lmp -in "point-$a.in" -log none) >"$out" 2>&1
		e=$(awk '$1 == "EOS_ENERGY" { e = $2 } END { print e }' "$out")
	fi
	if [ -z "$e" ]; then
		echo "eos-scan: a = $a: no energy in $out:" >&2
		grep -m3 -E "ERROR|Error|%%%%" "$out" >&2
		status=1
		continue
	fi
	echo "$a $e${m:+ $m}"
done
exit $status
