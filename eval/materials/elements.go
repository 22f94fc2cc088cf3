package materials

// Structures of the cubic elements: the conventional cube holds 4, 2 or 8 atoms; labmate's
// inputs use the primitive cell (1, 1 or 2 atoms).
const (
	FCC     = "fcc"
	BCC     = "bcc"
	Diamond = "diamond"
)

// Methods.
const (
	QE     = "qe"     // Quantum ESPRESSO pw.x, plane-wave DFT
	LAMMPS = "lammps" // LAMMPS lmp, embedded-atom potentials
)

// atomsPerCube is how many atoms the conventional cubic cell of a structure holds.
var atomsPerCube = map[string]int{FCC: 4, BCC: 2, Diamond: 8}

// atomsPerPrimitive is how many atoms the primitive cell of a structure holds.
var atomsPerPrimitive = map[string]int{FCC: 1, BCC: 1, Diamond: 2}

// Reference is an element's experimental lattice constant and bulk modulus.
type Reference struct {
	A0 float64 `json:"a0"` // Å, zero-point corrected where the source gives it
	B0 float64 `json:"b0"` // GPa
}

// References are the experimental values the benchmark compares with. Lattice constants: the
// Sol27LC set (Csonka et al., J. Chem. Theory Comput. 5, 902 (2009)), i.e. low-temperature
// experiment corrected for the zero-point anharmonic expansion as tabulated by Haas, Tran and
// Blaha, Phys. Rev. B 79, 085104 (2009); Pb, which is not in Sol27LC, from the same table. Bulk
// moduli (for information; the criterion is on a0): Hao et al., Phys. Rev. B 85, 014111 (2012),
// and Kittel.
var References = map[string]Reference{
	"Li": {3.451, 13.0},
	"Al": {4.019, 79.4},
	"Fe": {2.853, 168.3},
	"Ni": {3.508, 188},
	"Cu": {3.596, 142},
	"Rh": {3.793, 269},
	"Pd": {3.876, 195},
	"Ag": {4.062, 109},
	"W":  {3.160, 314},
	"Pt": {3.913, 278.3},
	"Au": {4.062, 180},
	"Pb": {4.912, 48.8},
	"C":  {3.555, 443},
	"Si": {5.422, 99.2},
	"Ge": {5.644, 75.8},
}

// Setup is how one element is computed by one method: the structure, the scan's centre and,
// for Quantum ESPRESSO, the pseudopotential and the numerical parameters, or, for LAMMPS, the
// potential file and its pair style.
type Setup struct {
	Element   string  `json:"element"`
	Structure string  `json:"structure"`
	Method    string  `json:"method"`
	Guess     float64 `json:"guess"` // Å: the centre of the scan, a0 as the functional usually gives it

	// Quantum ESPRESSO.
	Pseudo     string  `json:"pseudo,omitempty"`     // a file in the pseudopotential folder
	Functional string  `json:"functional,omitempty"` // the pseudopotential's: LDA, PBE, PBEsol
	Ecutwfc    float64 `json:"ecutwfc,omitempty"`    // Ry
	Ecutrho    float64 `json:"ecutrho,omitempty"`    // Ry: 4 × ecutwfc for norm-conserving, 8–10 × for ultrasoft and PAW
	K          int     `json:"k,omitempty"`          // an unshifted K×K×K Monkhorst–Pack grid
	Degauss    float64 `json:"degauss,omitempty"`    // Ry, Marzari–Vanderbilt smearing; 0: fixed occupations (insulators)
	Spin       bool    `json:"spin,omitempty"`       // collinear spin polarization, starting_magnetization 0.5
	SpinOrbit  bool    `json:"spin_orbit,omitempty"` // a fully relativistic pseudopotential needs noncolin and lspinorb
	Mixing     float64 `json:"mixing,omitempty"`     // mixing_beta; 0: 0.5

	// LAMMPS.
	Potential string `json:"potential,omitempty"`  // a file in the potentials folder
	PairStyle string `json:"pair_style,omitempty"` // eam (funcfl), eam/alloy or eam/fs

	// Cost is the scan's expected CPU time in seconds here, for scheduling the longest first.
	Cost float64 `json:"-"`
}

// Setups are the benchmark's elements: every cubic element Debian ships a Quantum ESPRESSO
// pseudopotential for (quantum-espresso-data 6.7; there is none for Ag, Pd or W), and every one
// Debian's lammps-data has a single-element EAM potential for. Cutoffs, k-points and smearing
// are chosen so that each scan takes seconds on one core while a0 is converged well below the
// 5% criterion: raising each cutoff by 10–20 Ry moves a0 by less than 0.1% (Li's 1s semicore
// needs 60 Ry, and Fe's lattice constant and bulk modulus need 12³ k-points).
var Setups = []Setup{
	{Element: "Al", Structure: FCC, Method: QE, Guess: 3.98, Pseudo: "Al.pz-vbc.UPF", Functional: "LDA", Ecutwfc: 20, Ecutrho: 80, K: 10, Degauss: 0.02, Cost: 6},
	{Element: "Cu", Structure: FCC, Method: QE, Guess: 3.53, Pseudo: "Cu.pz-d-rrkjus.UPF", Functional: "LDA", Ecutwfc: 25, Ecutrho: 200, K: 8, Degauss: 0.02, Cost: 8},
	{Element: "Ni", Structure: FCC, Method: QE, Guess: 3.52, Pseudo: "Ni.pbe-nd-rrkjus.UPF", Functional: "PBE", Ecutwfc: 25, Ecutrho: 200, K: 8, Degauss: 0.02, Spin: true, Cost: 20},
	{Element: "Rh", Structure: FCC, Method: QE, Guess: 3.83, Pseudo: "Rh.pbe-rrkjus_lb.UPF", Functional: "PBE", Ecutwfc: 25, Ecutrho: 200, K: 8, Degauss: 0.02, Cost: 17},
	{Element: "Au", Structure: FCC, Method: QE, Guess: 4.06, Pseudo: "Au.pz-rrkjus_aewfc.UPF", Functional: "LDA", Ecutwfc: 25, Ecutrho: 250, K: 8, Degauss: 0.02, Cost: 17},
	{Element: "Pt", Structure: FCC, Method: QE, Guess: 3.90, Pseudo: "Pt.rel-pz-n-rrkjus.UPF", Functional: "LDA", Ecutwfc: 25, Ecutrho: 200, K: 8, Degauss: 0.02, SpinOrbit: true, Cost: 40},
	{Element: "Pb", Structure: FCC, Method: QE, Guess: 4.88, Pseudo: "Pb.pz-d-van.UPF", Functional: "LDA", Ecutwfc: 25, Ecutrho: 200, K: 8, Degauss: 0.02, Cost: 22},
	{Element: "Fe", Structure: BCC, Method: QE, Guess: 2.84, Pseudo: "Fe.pbe-nd-rrkjus.UPF", Functional: "PBE", Ecutwfc: 25, Ecutrho: 200, K: 12, Degauss: 0.02, Spin: true, Cost: 33},
	{Element: "Li", Structure: BCC, Method: QE, Guess: 3.43, Pseudo: "Li.pbesol-s-rrkjus_psl.0.2.1.UPF", Functional: "PBEsol", Ecutwfc: 60, Ecutrho: 480, K: 8, Degauss: 0.02, Cost: 38},
	{Element: "Si", Structure: Diamond, Method: QE, Guess: 5.40, Pseudo: "Si.pz-vbc.UPF", Functional: "LDA", Ecutwfc: 20, Ecutrho: 80, K: 6, Cost: 5},
	{Element: "C", Structure: Diamond, Method: QE, Guess: 3.53, Pseudo: "C.pz-rrkjus.UPF", Functional: "LDA", Ecutwfc: 30, Ecutrho: 240, K: 6, Mixing: 0.7, Cost: 6},
	{Element: "Ge", Structure: Diamond, Method: QE, Guess: 5.76, Pseudo: "Ge.pbe-kjpaw.UPF", Functional: "PBE", Ecutwfc: 25, Ecutrho: 100, K: 6, Degauss: 0.01, Cost: 21},

	{Element: "Al", Structure: FCC, Method: LAMMPS, Guess: 4.05, Potential: "Al_mm.eam.fs", PairStyle: "eam/fs", Cost: 1},
	{Element: "Cu", Structure: FCC, Method: LAMMPS, Guess: 3.615, Potential: "Cu_u3.eam", PairStyle: "eam", Cost: 1},
	{Element: "Ni", Structure: FCC, Method: LAMMPS, Guess: 3.52, Potential: "Ni_u3.eam", PairStyle: "eam", Cost: 1},
	{Element: "Pd", Structure: FCC, Method: LAMMPS, Guess: 3.89, Potential: "Pd_u3.eam", PairStyle: "eam", Cost: 1},
	{Element: "Ag", Structure: FCC, Method: LAMMPS, Guess: 4.09, Potential: "Ag_u3.eam", PairStyle: "eam", Cost: 1},
	{Element: "Pt", Structure: FCC, Method: LAMMPS, Guess: 3.92, Potential: "Pt_u3.eam", PairStyle: "eam", Cost: 1},
	{Element: "Au", Structure: FCC, Method: LAMMPS, Guess: 4.08, Potential: "Au_u3.eam", PairStyle: "eam", Cost: 1},
	{Element: "Fe", Structure: BCC, Method: LAMMPS, Guess: 2.855, Potential: "Fe_mm.eam.fs", PairStyle: "eam/fs", Cost: 1},
	{Element: "W", Structure: BCC, Method: LAMMPS, Guess: 3.165, Potential: "W_zhou.eam.alloy", PairStyle: "eam/alloy", Cost: 1},
}

// Missing are the elements the issue asks for that a method cannot do here, and why.
var Missing = map[string]string{
	"Ag/" + QE:     "Debian's quantum-espresso-data ships no Ag pseudopotential",
	"Li/" + LAMMPS: "Debian's lammps-data has no Li EAM potential",
	"Pb/" + LAMMPS: "Debian's lammps-data has no Pb EAM potential",
}
