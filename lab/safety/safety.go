// Package safety is the substance screen: the agent refuses a task that names a hazardous or
// controlled substance before it plans anything. The list is small and curated (Substances),
// not a chemical database: the agents of the Chemical Weapons Convention's Schedule 1 and
// their key precursors, biological toxins of that schedule, primary and high explosives, and
// drugs of the US DEA's Schedules I and II with their common precursors (its List I
// chemicals). A name matches on word boundaries, case-insensitively, with punctuation and
// punctuation taken as spaces and hyphens dropped ("Nitro-glycerin", "3,4-methylenedioxy…"), so that ordinary
// reagents whose names contain a listed one (toluene, glycerin, acetone, ricinoleic acid) pass.
package safety

import (
	"fmt"
	"strings"
	"unicode"
)

// Class is why a substance is listed.
type Class string

// The classes of Substances.
const (
	ChemicalWeapon Class = "a chemical-weapon agent or precursor (CWC Schedule 1)"
	Toxin          Class = "a toxin listed as a chemical weapon (CWC Schedule 1)"
	Explosive      Class = "an explosive"
	ControlledDrug Class = "a controlled drug or its precursor (DEA Schedule I/II, List I)"
)

// Substance is a listed substance: its name and the other names it goes by.
type Substance struct {
	Name     string
	Class    Class
	Synonyms []string
}

// Substances is the curated list. Short abbreviations that are ordinary words or symbols
// elsewhere (GB, DF, QL, P2P) are left out on purpose: the screen must not refuse ordinary work.
var Substances = []Substance{
	{"sarin", ChemicalWeapon, []string{"isopropyl methylphosphonofluoridate"}},
	{"soman", ChemicalWeapon, []string{"pinacolyl methylphosphonofluoridate"}},
	{"tabun", ChemicalWeapon, []string{"ethyl dimethylphosphoramidocyanidate"}},
	{"cyclosarin", ChemicalWeapon, []string{"cyclohexyl methylphosphonofluoridate"}},
	{"VX", ChemicalWeapon, []string{"VX nerve agent"}},
	{"novichok", ChemicalWeapon, []string{"A-230", "A-232", "A-234"}},
	{"sulfur mustard", ChemicalWeapon, []string{"sulphur mustard", "mustard gas", "yperite", "bis(2-chloroethyl) sulfide", "bis(2-chloroethyl) sulphide"}},
	{"nitrogen mustard", ChemicalWeapon, []string{"HN-1", "HN-2", "HN-3", "tris(2-chloroethyl)amine"}},
	{"lewisite", ChemicalWeapon, []string{"2-chlorovinyldichloroarsine"}},
	{"methylphosphonyl difluoride", ChemicalWeapon, []string{"methylphosphonic difluoride"}},
	{"methylphosphonyl dichloride", ChemicalWeapon, []string{"methylphosphonic dichloride"}},
	{"ricin", Toxin, nil},
	{"saxitoxin", Toxin, nil},
	{"TATP", Explosive, []string{"triacetone triperoxide", "acetone peroxide"}},
	{"HMTD", Explosive, []string{"hexamethylene triperoxide diamine"}},
	{"nitroglycerin", Explosive, []string{"nitroglycerine", "glyceryl trinitrate", "trinitroglycerin"}},
	{"PETN", Explosive, []string{"pentaerythritol tetranitrate"}},
	{"RDX", Explosive, []string{"cyclonite", "hexogen", "cyclotrimethylenetrinitramine"}},
	{"HMX", Explosive, []string{"octogen"}},
	{"TNT", Explosive, []string{"trinitrotoluene", "2,4,6-trinitrotoluene"}},
	{"lead azide", Explosive, nil},
	{"mercury fulminate", Explosive, []string{"mercuric fulminate"}},
	{"heroin", ControlledDrug, []string{"diacetylmorphine", "diamorphine"}},
	{"LSD", ControlledDrug, []string{"lysergic acid diethylamide", "lysergide"}},
	{"MDMA", ControlledDrug, []string{"ecstasy", "3,4-methylenedioxymethamphetamine"}},
	{"psilocybin", ControlledDrug, nil},
	{"mescaline", ControlledDrug, nil},
	{"DMT", ControlledDrug, []string{"dimethyltryptamine", "N,N-dimethyltryptamine"}},
	{"methcathinone", ControlledDrug, []string{"cathinone", "mephedrone"}},
	{"GHB", ControlledDrug, []string{"gamma-hydroxybutyrate", "gamma-hydroxybutyric acid"}},
	{"fentanyl", ControlledDrug, []string{"carfentanil", "acetylfentanyl"}},
	{"methamphetamine", ControlledDrug, []string{"crystal meth", "desoxyephedrine"}},
	{"amphetamine", ControlledDrug, nil},
	{"cocaine", ControlledDrug, []string{"benzoylmethylecgonine"}},
	{"phencyclidine", ControlledDrug, []string{"PCP angel dust"}},
	{"oxycodone", ControlledDrug, nil},
	{"ephedrine", ControlledDrug, []string{"pseudoephedrine"}},
	{"phenyl-2-propanone", ControlledDrug, []string{"phenylacetone", "benzyl methyl ketone"}},
	{"safrole", ControlledDrug, []string{"isosafrole"}},
	{"NPP", ControlledDrug, []string{"N-phenethyl-4-piperidone"}},
	{"ANPP", ControlledDrug, []string{"4-anilino-N-phenethylpiperidine"}},
	{"lysergic acid", ControlledDrug, nil},
}

// Match is a listed substance a text names.
type Match struct {
	Substance Substance
	Term      string // the name or synonym it was found by
}

// Error says why the task is refused.
func (m *Match) Error() string {
	how := ""
	if !strings.EqualFold(m.Term, m.Substance.Name) {
		how = fmt.Sprintf(" (as %q)", m.Term)
	}
	return fmt.Sprintf("the task names %s%s, %s: labmate refuses tasks about hazardous or controlled substances",
		m.Substance.Name, how, m.Substance.Class)
}

// Screen returns the first listed substance text names, or nil.
func Screen(text string) *Match {
	t := " " + normalize(text) + " "
	for _, s := range Substances {
		for _, term := range append([]string{s.Name}, s.Synonyms...) {
			if strings.Contains(t, " "+normalize(term)+" ") {
				return &Match{Substance: s, Term: term}
			}
		}
	}
	return nil
}

// normalize lowercases s, drops hyphens (nitro-glycerin is nitroglycerin) and turns every run
// of other characters that are not letters or digits into one space.
func normalize(s string) string {
	s = strings.NewReplacer("-", "", "\u2010", "", "\u2011", "").Replace(strings.ToLower(s))
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}
