package software

import (
	"strings"
	"testing"
)

func TestWriteTable(t *testing.T) {
	items := []Item{
		{Group: "octave", Name: "octave", Version: "9.2.0", Path: "/usr/bin/octave"},
		{Group: "octave", Name: "packages", Features: []string{"control", "signal"}},
		{Group: "quantum-espresso", Name: "pw.x", Error: "not found: apt-get install quantum-espresso"},
		{Group: "quantum-espresso", Name: "pseudo", Data: &Data{Dir: "/usr/share/espresso/pseudo", Count: 3, What: "pseudopotentials",
			Elements: []string{"Al", "Cu"}, Kinds: map[string]int{"upf": 2, "UPF": 1}}},
	}
	var b strings.Builder
	if err := WriteTable(&b, items); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"SOFTWARE    VERSION        FOUND",
		"octave      9.2.0          /usr/bin/octave",
		"  packages                 control signal",
		"pw.x        NOT AVAILABLE  not found: apt-get install quantum-espresso",
		"  pseudo                   /usr/share/espresso/pseudo: 3 pseudopotentials for Al Cu (upf 2, UPF 1, …)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
}
