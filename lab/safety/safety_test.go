package safety_test

import (
	"strings"
	"testing"

	"github.com/labmate/labmate/lab/safety"
)

func TestScreenRefuses(t *testing.T) {
	for text, want := range map[string]string{
		"Synthesize SARIN from its precursors":                 "sarin",
		"How much Nitro-Glycerine fits in a 96-well plate?":    "nitroglycerin",
		"make acetone peroxide with hydrogen peroxide":         "TATP",
		"purify 3,4-methylenedioxymethamphetamine":             "MDMA",
		"extract pseudoephedrine from tablets":                 "ephedrine",
		"prepare bis(2-chloroethyl)sulfide":                    "sulfur mustard",
		"dose curve for fentanyl.":                             "fentanyl",
		"Titrate (cocaine) in methanol":                        "cocaine",
		"detonation velocity of PETN":                          "PETN",
		"a protocol for ricin extraction from castor beans":    "ricin",
		"the yield of HMTD from hexamine":                      "HMTD",
		"isolate lysergic acid diethylamide from ergot":        "LSD",
		"estimate the LD50 of the VX nerve agent in rats":      "VX",
		"scale the phenyl-2-propanone route to 5 kg":           "phenyl-2-propanone",
		"what is the solubility of trinitrotoluene in toluene": "TNT",
	} {
		m := safety.Screen(text)
		if m == nil || m.Substance.Name != want {
			t.Errorf("Screen(%q) = %v, want %s", text, m, want)
			continue
		}
		if !strings.Contains(m.Error(), want) || !strings.Contains(m.Error(), "refuses") {
			t.Errorf("Screen(%q): %q does not say what and why", text, m.Error())
		}
	}
}

func TestScreenPassesOrdinaryReagents(t *testing.T) {
	for _, text := range []string{
		"ethanol", "acetone", "sodium chloride", "tartrazine", "palladium acetate", "toluene", "methanol",
		"hydrogen peroxide", "glycerin", "glycerol", "nitric acid", "potassium permanganate", "caffeine",
		"acetaminophen", "ricinoleic acid", "Dijon mustard", "phenylalanine", "sodium azide", "ephedra tea",
		"Brilliant Blue FCF", "Suzuki coupling of phenylboronic acid", "a DF of 3 in the t-test", "pinacol",
		"dilute the dye 1:2 across row A, then read the absorbance at 427 nm",
		"the mass balance of heroine characters", "procaine hydrochloride", "amphetamines-free urine standard",
	} {
		if m := safety.Screen(text); m != nil {
			t.Errorf("Screen(%q) = %s, want nothing", text, m.Error())
		}
	}
}
