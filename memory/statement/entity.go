package statement

import (
	"slices"
	"strings"
	"unicode"

	"github.com/labmate/labmate/memory"
)

// known is one entry of the dictionary: a canonical name, its kind and its aliases.
type known struct {
	name    string
	kind    memory.EntityKind
	aliases []string // lower case, words separated by single spaces
}

// elements are the chemical elements, symbol and name (both spellings where they differ).
const elements = `H hydrogen|He helium|Li lithium|Be beryllium|B boron|C carbon|N nitrogen|O oxygen|F fluorine|Ne neon|
Na sodium|Mg magnesium|Al aluminium aluminum|Si silicon|P phosphorus|S sulfur sulphur|Cl chlorine|Ar argon|K potassium|
Ca calcium|Sc scandium|Ti titanium|V vanadium|Cr chromium|Mn manganese|Fe iron|Co cobalt|Ni nickel|Cu copper|Zn zinc|
Ga gallium|Ge germanium|As arsenic|Se selenium|Br bromine|Kr krypton|Rb rubidium|Sr strontium|Y yttrium|Zr zirconium|
Nb niobium|Mo molybdenum|Tc technetium|Ru ruthenium|Rh rhodium|Pd palladium|Ag silver|Cd cadmium|In indium|Sn tin|
Sb antimony|Te tellurium|I iodine|Xe xenon|Cs caesium cesium|Ba barium|La lanthanum|Ce cerium|Pr praseodymium|
Nd neodymium|Pm promethium|Sm samarium|Eu europium|Gd gadolinium|Tb terbium|Dy dysprosium|Ho holmium|Er erbium|
Tm thulium|Yb ytterbium|Lu lutetium|Hf hafnium|Ta tantalum|W tungsten|Re rhenium|Os osmium|Ir iridium|Pt platinum|
Au gold|Hg mercury|Tl thallium|Pb lead|Bi bismuth|Po polonium|At astatine|Rn radon|Fr francium|Ra radium|Ac actinium|
Th thorium|Pa protactinium|U uranium|Np neptunium|Pu plutonium|Am americium|Cm curium|Bk berkelium|Cf californium|
Es einsteinium|Fm fermium|Md mendelevium|No nobelium|Lr lawrencium|Rf rutherfordium|Db dubnium|Sg seaborgium|
Bh bohrium|Hs hassium|Mt meitnerium|Ds darmstadtium|Rg roentgenium|Cn copernicium|Nh nihonium|Fl flerovium|
Mc moscovium|Lv livermorium|Ts tennessine|Og oganesson`

// dictionary are the entities labmate knows by name: compounds, structures, software, methods,
// parameters and properties of the sciences it works in. Names a text uses that are not here
// (a potential's label, a formula) are found by their shape (see Extract).
var dictionary = []known{
	{"H2O", memory.EntityMaterial, []string{"water"}},
	{"NaCl", memory.EntityMaterial, []string{"sodium chloride", "rock salt"}},
	{"SiO2", memory.EntityMaterial, []string{"silicon dioxide", "silica", "quartz"}},
	{"TiO2", memory.EntityMaterial, []string{"titanium dioxide", "titania", "rutile", "anatase"}},
	{"CO2", memory.EntityMaterial, []string{"carbon dioxide"}},
	{"CH4", memory.EntityMaterial, []string{"methane"}},
	{"NH3", memory.EntityMaterial, []string{"ammonia"}},
	{"GaAs", memory.EntityMaterial, []string{"gallium arsenide"}},
	{"ZnO", memory.EntityMaterial, []string{"zinc oxide"}},
	{"MgO", memory.EntityMaterial, []string{"magnesium oxide", "magnesia"}},
	{"Al2O3", memory.EntityMaterial, []string{"aluminium oxide", "aluminum oxide", "alumina", "sapphire"}},
	{"Fe2O3", memory.EntityMaterial, []string{"iron oxide", "hematite"}},
	{"LiFePO4", memory.EntityMaterial, []string{"lithium iron phosphate"}},
	{"fcc", memory.EntityMaterial, []string{"face centred cubic", "face centered cubic", "face-centred cubic", "face-centered cubic"}},
	{"bcc", memory.EntityMaterial, []string{"body centred cubic", "body centered cubic"}},
	{"hcp", memory.EntityMaterial, []string{"hexagonal close packed", "hexagonal close-packed"}},
	{"perovskite", memory.EntityMaterial, nil},
	{"wurtzite", memory.EntityMaterial, nil},
	{"zincblende", memory.EntityMaterial, []string{"zinc blende", "sphalerite"}},
	{"Quantum ESPRESSO", memory.EntitySoftware, []string{"quantum espresso", "qe", "pw.x", "pwscf", "espresso"}},
	{"LAMMPS", memory.EntitySoftware, []string{"lammps", "lmp"}},
	{"VASP", memory.EntitySoftware, []string{"vasp"}},
	{"GROMACS", memory.EntitySoftware, []string{"gromacs", "gmx"}},
	{"CP2K", memory.EntitySoftware, []string{"cp2k"}},
	{"GNU Octave", memory.EntitySoftware, []string{"octave", "gnu octave"}},
	{"MATLAB", memory.EntitySoftware, []string{"matlab"}},
	{"Python", memory.EntitySoftware, []string{"python", "python3", "cpython"}},
	{"NumPy", memory.EntitySoftware, []string{"numpy", "np"}},
	{"SciPy", memory.EntitySoftware, []string{"scipy"}},
	{"ASE", memory.EntitySoftware, []string{"ase", "atomic simulation environment"}},
	{"pymatgen", memory.EntitySoftware, nil},
	{"OpenMM", memory.EntitySoftware, []string{"openmm"}},
	{"explicit Euler", memory.EntityMethod, []string{"explicit euler", "forward euler", "euler method", "euler's method", "explicit euler method", "forward euler method"}},
	{"implicit Euler", memory.EntityMethod, []string{"implicit euler", "backward euler", "backward euler method", "implicit euler method"}},
	{"Runge-Kutta", memory.EntityMethod, []string{"runge kutta", "runge-kutta", "rk4", "rk45", "dormand prince"}},
	{"ode45", memory.EntityMethod, nil},
	{"ode15s", memory.EntityMethod, nil},
	{"ode23", memory.EntityMethod, nil},
	{"solve_ivp", memory.EntityMethod, []string{"solve ivp"}},
	{"Crank-Nicolson", memory.EntityMethod, []string{"crank nicolson", "crank-nicolson"}},
	{"velocity Verlet", memory.EntityMethod, []string{"velocity verlet", "verlet"}},
	{"DFT", memory.EntityMethod, []string{"dft", "density functional theory"}},
	{"molecular dynamics", memory.EntityMethod, []string{"molecular dynamics"}},
	{"EAM", memory.EntityMethod, []string{"eam", "embedded atom method", "embedded-atom method", "embedded atom"}},
	{"PBE", memory.EntityMethod, []string{"pbe"}},
	{"LDA", memory.EntityMethod, []string{"lda", "local density approximation"}},
	{"B3LYP", memory.EntityMethod, []string{"b3lyp"}},
	{"BFGS", memory.EntityMethod, []string{"bfgs"}},
	{"Newton-Raphson", memory.EntityMethod, []string{"newton raphson", "newton-raphson", "newton's method"}},
	{"Monte Carlo", memory.EntityMethod, []string{"monte carlo"}},
	{"SCF", memory.EntityMethod, []string{"scf", "self consistent field", "self-consistent field"}},
	{"NVE", memory.EntityMethod, []string{"nve", "microcanonical"}},
	{"NVT", memory.EntityMethod, []string{"nvt", "canonical ensemble"}},
	{"NPT", memory.EntityMethod, []string{"npt"}},
	{"PID", memory.EntityMethod, []string{"pid", "pid controller"}},
	{"Ziegler-Nichols", memory.EntityMethod, []string{"ziegler nichols", "ziegler-nichols"}},
	{"least squares", memory.EntityMethod, []string{"least squares", "least-squares"}},
	{"mixing_beta", memory.EntityParameter, []string{"mixing_beta", "mixing beta"}},
	{"ecutwfc", memory.EntityParameter, []string{"ecutwfc", "wavefunction cutoff", "plane wave cutoff", "plane-wave cutoff"}},
	{"ecutrho", memory.EntityParameter, []string{"ecutrho", "charge density cutoff"}},
	{"conv_thr", memory.EntityParameter, []string{"conv_thr", "convergence threshold"}},
	{"degauss", memory.EntityParameter, []string{"degauss"}},
	{"k-points", memory.EntityParameter, []string{"k points", "kpoints", "k point grid", "k-point grid"}},
	{"time step", memory.EntityParameter, []string{"time step", "timestep", "dt", "step size"}},
	{"Kp", memory.EntityParameter, []string{"kp", "proportional gain"}},
	{"Ki", memory.EntityParameter, []string{"ki", "integral gain"}},
	{"Kd", memory.EntityParameter, []string{"kd", "derivative gain"}},
	{"lattice constant", memory.EntityProperty, []string{"lattice constant", "lattice parameter", "a0"}},
	{"band gap", memory.EntityProperty, []string{"band gap", "bandgap"}},
	{"bulk modulus", memory.EntityProperty, []string{"bulk modulus"}},
	{"cohesive energy", memory.EntityProperty, []string{"cohesive energy"}},
	{"total energy", memory.EntityProperty, []string{"total energy"}},
	{"Fermi energy", memory.EntityProperty, []string{"fermi energy", "fermi level"}},
	{"overshoot", memory.EntityProperty, []string{"overshoot"}},
	{"settling time", memory.EntityProperty, []string{"settling time"}},
	{"yield", memory.EntityProperty, []string{"yield"}},
}

// structures precede a material to name its phase ("fcc Cu").
var structures = map[string]bool{"fcc": true, "bcc": true, "hcp": true, "perovskite": true, "wurtzite": true, "zincblende": true}

// ambiguousSymbols are element symbols that are also common words or units: they name the element
// only inside a formula or spelled out.
var ambiguousSymbols = map[string]bool{"In": true, "As": true, "At": true, "Be": true, "He": true, "No": true,
	"Am": true, "Es": true, "Pa": true, "Cm": true, "Md": true, "Ts": true, "Mt": true, "Ds": true, "Hs": true}

type dictEntry struct {
	words []string
	k     *known
}

var (
	symbols   = map[string]string{}          // element symbol → its canonical name (the symbol)
	byFirst   = map[string][]dictEntry{}     // first word of an alias → the aliases starting with it
	knownByID = map[string]*known{}          // entity id → its dictionary entry
	elemNames = map[string]*known{}          // element symbol → entry
	aliasSets = map[*known]map[string]bool{} // entry → its aliases
)

func init() {
	var all []*known
	for _, e := range strings.Split(strings.ReplaceAll(elements, "\n", ""), "|") {
		f := strings.Fields(e)
		k := &known{name: f[0], kind: memory.EntityMaterial, aliases: append([]string{strings.ToLower(f[0])}, f[1:]...)}
		symbols[f[0]] = f[0]
		elemNames[f[0]] = k
		all = append(all, k)
	}
	for i := range dictionary {
		k := &dictionary[i]
		if !slices.Contains(k.aliases, strings.ToLower(k.name)) {
			k.aliases = append([]string{strings.ToLower(k.name)}, k.aliases...)
		}
		all = append(all, k)
	}
	for _, k := range all {
		knownByID[memory.EntityID(k.kind, k.name)] = k
		aliasSets[k] = map[string]bool{}
		for _, a := range k.aliases {
			aliasSets[k][a] = true
			ws := aliasWords(a)
			if len(ws) == 0 {
				continue
			}
			if k.kind == memory.EntityMaterial && symbols[k.name] != "" && a == strings.ToLower(k.name) {
				continue // symbols are matched by case (see Extract)
			}
			byFirst[stem(ws[0])] = append(byFirst[stem(ws[0])], dictEntry{words: ws, k: k})
		}
	}
	for w := range byFirst {
		slices.SortStableFunc(byFirst[w], func(a, b dictEntry) int { return len(b.words) - len(a.words) })
	}
}

// aliasWords splits an alias into the words the tokenizer sees.
func aliasWords(a string) []string {
	var out []string
	for _, t := range tokenize(a) {
		if t.kind == tokWord {
			out = append(out, t.low)
		}
	}
	return out
}

// Extract finds the entities a text mentions: names from labmate's dictionary (materials,
// software, methods, parameters, properties, in any of their aliases), element symbols written
// with their case ("Cu", not "cu"), chemical formulas ("TiO2"), phases ("fcc Cu"), software
// versions ("QE 7.2"), and other proper names by their shape (identifiers with digits or
// underscores such as "Cu_u3", words in capitals such as "EAM"). Relations found on the way
// (a phase and its material, a version and its software) are returned too.
func Extract(text string) ([]memory.Mention, []memory.Relation) {
	return extract(tokenize(text))
}

func extractFromTokens(toks []token) []memory.Mention {
	m, _ := extract(toks)
	return m
}

// entityWordSet is the indices of the word tokens that are part of an entity mention.
func entityWordSet(toks []token) map[int]bool {
	out := map[int]bool{}
	walkEntities(toks, func(i, n int, _ memory.Mention) {
		for j := i; j < i+n; j++ {
			out[j] = true
		}
	})
	return out
}

func extract(toks []token) ([]memory.Mention, []memory.Relation) {
	var out []memory.Mention
	var rels []memory.Relation
	seen := map[string]bool{}
	type at struct {
		m    memory.Mention
		i, n int
	}
	var found []at
	walkEntities(toks, func(i, n int, m memory.Mention) { found = append(found, at{m, i, n}) })
	for k, f := range found {
		if !seen[f.m.ID] {
			seen[f.m.ID] = true
			out = append(out, f.m)
		}
		// A structure right before a material is a phase ("fcc Cu").
		if f.m.Kind == memory.EntityMaterial && structures[strings.ToLower(f.m.Name)] && k+1 < len(found) && found[k+1].i == f.i+f.n &&
			found[k+1].m.Kind == memory.EntityMaterial && !structures[strings.ToLower(found[k+1].m.Name)] {
			mat := found[k+1].m
			name := strings.ToLower(f.m.Name) + " " + mat.Name
			p := memory.Mention{ID: memory.EntityID(memory.EntityMaterial, name), Name: name, Kind: memory.EntityMaterial, Text: f.m.Text + " " + mat.Text}
			if !seen[p.ID] {
				seen[p.ID] = true
				out = append(out, p)
			}
			rels = append(rels, memory.Relation{From: p.ID, Rel: memory.RelPhaseOf, To: mat.ID}, memory.Relation{From: p.ID, Rel: "has_structure", To: f.m.ID})
		}
		// Software followed by a version number is that version.
		if f.m.Kind == memory.EntitySoftware {
			j := f.i + f.n
			if j < len(toks) && toks[j].kind == tokNumber && toks[j].unit == "" {
				v := strings.TrimPrefix(toks[j].text, "v")
				name := f.m.Name + " " + v
				p := memory.Mention{ID: memory.EntityID(memory.EntitySoftware, name), Name: name, Kind: memory.EntitySoftware, Text: f.m.Text + " " + v}
				if !seen[p.ID] {
					seen[p.ID] = true
					out = append(out, p)
				}
				rels = append(rels, memory.Relation{From: p.ID, Rel: memory.RelVersionOf, To: f.m.ID})
			}
		}
	}
	return out, rels
}

// walkEntities calls fn for every entity mention: at word i, n words long.
func walkEntities(toks []token, fn func(i, n int, m memory.Mention)) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tokWord {
			continue
		}
		// The longest dictionary alias starting here.
		matched := false
		for _, e := range byFirst[stem(t.low)] {
			if i+len(e.words) > len(toks) {
				continue
			}
			ok := true
			for j, w := range e.words {
				if toks[i+j].kind != tokWord || stem(toks[i+j].low) != stem(w) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			// A one-letter or very short alias in lower case is a name only when it looks like one.
			if len(e.words) == 1 && len(t.low) <= 2 && t.text == t.low && e.k.kind != memory.EntityParameter && !strings.ContainsAny(t.low, "0123456789") {
				continue
			}
			texts := make([]string, len(e.words))
			for j := range e.words {
				texts[j] = toks[i+j].text
			}
			fn(i, len(e.words), mention(e.k, strings.Join(texts, " ")))
			i += len(e.words) - 1
			matched = true
			break
		}
		if matched {
			continue
		}
		if sym, ok := symbols[t.text]; ok && (len(sym) == 2 && !ambiguousSymbols[sym]) {
			fn(i, 1, mention(elemNames[sym], t.text))
			continue
		}
		if f := formula(t.text); f != "" {
			k := knownByID[memory.EntityID(memory.EntityMaterial, f)]
			if k != nil {
				fn(i, 1, mention(k, t.text))
			} else {
				fn(i, 1, memory.Mention{ID: memory.EntityID(memory.EntityMaterial, f), Name: f, Kind: memory.EntityMaterial, Text: t.text})
			}
			continue
		}
		if looksLikeName(t, i) {
			fn(i, 1, memory.Mention{ID: memory.EntityID(memory.EntityName, t.text), Name: t.text, Kind: memory.EntityName, Text: t.text})
		}
	}
}

func mention(k *known, text string) memory.Mention {
	return memory.Mention{ID: memory.EntityID(k.kind, k.name), Name: k.name, Kind: k.kind, Aliases: slices.Clone(k.aliases), Text: text}
}

// formula returns text when it is a chemical formula of at least two elements or one element
// with a count ("TiO2", "NaCl", "H2O", "O2"), else "".
func formula(text string) string {
	rs := []rune(text)
	n, elems, counted := 0, 0, false
	for n < len(rs) {
		if !unicode.IsUpper(rs[n]) {
			return ""
		}
		sym := string(rs[n])
		if n+1 < len(rs) && unicode.IsLower(rs[n+1]) && symbols[string(rs[n:n+2])] != "" {
			sym = string(rs[n : n+2])
		}
		if symbols[sym] == "" {
			return ""
		}
		n += len([]rune(sym))
		elems++
		for n < len(rs) && unicode.IsDigit(rs[n]) {
			n++
			counted = true
		}
	}
	if elems >= 2 || elems == 1 && counted {
		return text
	}
	return ""
}

// looksLikeName is a proper name by its shape: an identifier with letters and digits or an
// underscore ("Cu_u3", "ode45", "mixing_beta"), a word of two or more capitals ("EAM"), or a
// capitalised word that does not start its sentence ("Robertson").
func looksLikeName(t token, i int) bool {
	w := t.text
	if len(w) < 2 || stopWords[t.low] {
		return false
	}
	letters, digits, uppers, under := 0, 0, 0, false
	for _, r := range w {
		switch {
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				uppers++
			}
		case unicode.IsDigit(r):
			digits++
		case r == '_' || r == '.':
			under = true
		}
	}
	switch {
	case letters > 0 && (digits > 0 || under):
		return true
	case uppers >= 2:
		return true
	case t.cap && i != t.upos:
		return true
	}
	return false
}
