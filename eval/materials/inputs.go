package materials

import (
	"fmt"
	"math"
	"strings"
)

// Unit conversions (CODATA 2018).
const (
	bohr          = 0.529177210903 // Å
	rydberg       = 13.605693122994
	evPerA3InGPa  = 160.21766208
	placeholderA  = "@A@"
	scanPoints    = 7
	scanHalfWidth = 0.03 // ±3% in the lattice parameter, ±9% in volume
)

// Where Debian's packages put the data.
var (
	PseudoDir     = "/usr/share/espresso/pseudo"
	PotentialsDir = "/usr/share/lammps/potentials"
)

// ibrav is Quantum ESPRESSO's Bravais-lattice index of each structure's primitive cell.
var ibrav = map[string]int{FCC: 2, BCC: 3, Diamond: 2}

// Template is the input of one scan point with the lattice parameter as @A@: celldm(1) in bohr
// for pw.x, the lattice command's constant in Å for lmp.
func (s *Setup) Template() (string, error) {
	switch s.Method {
	case QE:
		return s.qeTemplate()
	case LAMMPS:
		return s.lammpsTemplate()
	}
	return "", fmt.Errorf("%s: unknown method %q", s.Element, s.Method)
}

func (s *Setup) qeTemplate() (string, error) {
	ib, ok := ibrav[s.Structure]
	if !ok {
		return "", fmt.Errorf("%s: unknown structure %q", s.Element, s.Structure)
	}
	if s.Pseudo == "" || s.Ecutwfc <= 0 || s.K <= 0 {
		return "", fmt.Errorf("%s: a Quantum ESPRESSO setup needs a pseudopotential, ecutwfc and k-points", s.Element)
	}
	ecutrho := s.Ecutrho
	if ecutrho == 0 {
		ecutrho = 4 * s.Ecutwfc
	}
	mixing := s.Mixing
	if mixing == 0 {
		mixing = 0.5
	}
	var sys strings.Builder
	fmt.Fprintf(&sys, "  ibrav = %d, celldm(1) = %s, nat = %d, ntyp = 1,\n", ib, placeholderA, atomsPerPrimitive[s.Structure])
	fmt.Fprintf(&sys, "  ecutwfc = %g, ecutrho = %g,\n", s.Ecutwfc, ecutrho)
	if s.Degauss > 0 {
		fmt.Fprintf(&sys, "  occupations = 'smearing', smearing = 'mv', degauss = %g,\n", s.Degauss)
	}
	if s.Spin {
		sys.WriteString("  nspin = 2, starting_magnetization(1) = 0.5,\n")
	}
	if s.SpinOrbit {
		sys.WriteString("  noncolin = .true., lspinorb = .true.,\n")
	}
	positions := fmt.Sprintf("  %s 0.00 0.00 0.00\n", s.Element)
	if s.Structure == Diamond {
		positions += fmt.Sprintf("  %s 0.25 0.25 0.25\n", s.Element)
	}
	return fmt.Sprintf(`&control
  calculation = 'scf', prefix = '%s', outdir = './tmp', pseudo_dir = '%s', disk_io = 'none'
/
&system
%s/
&electrons
  conv_thr = 1e-9, mixing_beta = %g
/
ATOMIC_SPECIES
  %s 1.0 %s
ATOMIC_POSITIONS alat
%sK_POINTS automatic
  %d %d %d 0 0 0
`, s.Element, PseudoDir, sys.String(), mixing, s.Element, s.Pseudo, positions, s.K, s.K, s.K), nil
}

func (s *Setup) lammpsTemplate() (string, error) {
	if _, ok := atomsPerCube[s.Structure]; !ok {
		return "", fmt.Errorf("%s: unknown structure %q", s.Element, s.Structure)
	}
	coeff := "* * " + PotentialsDir + "/" + s.Potential + " " + s.Element
	switch s.PairStyle {
	case "eam":
		coeff = "1 1 " + PotentialsDir + "/" + s.Potential
	case "eam/alloy", "eam/fs":
	default:
		return "", fmt.Errorf("%s: pair style %q (eam, eam/alloy or eam/fs)", s.Element, s.PairStyle)
	}
	// A 4×4×4 block of conventional cells: far larger than the potentials' cutoffs.
	return fmt.Sprintf(`units metal
atom_style atomic
boundary p p p
lattice %s %s
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
pair_style %s
pair_coeff %s
thermo_style one
run 0
print "EOS_ENERGY $(pe/atoms:%%.10f)"
`, s.Structure, placeholderA, s.PairStyle, coeff), nil
}

// ScanPoints are the lattice parameters of a scan centred on a (Å): scanPoints values evenly
// spaced within ±scanHalfWidth, in the code's unit (bohr for pw.x, Å for lmp), as the text the
// scan script receives.
func (s *Setup) ScanPoints(a float64) []string {
	unit := 1.0
	if s.Method == QE {
		unit = 1 / bohr
	}
	out := make([]string, scanPoints)
	for i := range out {
		f := 1 + scanHalfWidth*(2*float64(i)/float64(scanPoints-1)-1)
		out[i] = fmt.Sprintf("%.6f", a*f*unit)
	}
	return out
}

// perAtom converts a scan line's lattice parameter and energy into Å and eV per atom.
func (s *Setup) perAtom(a, e float64) (float64, float64) {
	if s.Method == QE {
		return a * bohr, e * rydberg / float64(atomsPerPrimitive[s.Structure])
	}
	return a, e
}

// volumePerAtom is a cubic crystal's volume per atom (Å³) at lattice constant a (Å).
func volumePerAtom(structure string, a float64) float64 {
	return math.Pow(a, 3) / float64(atomsPerCube[structure])
}
