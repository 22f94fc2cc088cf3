package statement

import "testing"

func TestNormalize(t *testing.T) {
	if a, b := Normalize("Use ode15s for stiff problems."), Normalize("use ODE15s  for stiff problems"); a != b {
		t.Errorf("same words, other case and spacing: %q vs %q", a, b)
	}
	if a, b := Normalize("T > -5 K"), Normalize("T < 5 K"); a == b {
		t.Errorf("a sign and a comparison merged: both %q", a)
	}
}

func TestDistinguish(t *testing.T) {
	for _, tt := range []struct {
		a, b   string
		differ bool
	}{
		{"The lattice constant of Cu is 3.615 Å", "Cu's lattice constant is 0.3615 nm", false},
		{"The lattice constant of Cu is 3.615 Å", "The lattice constant of Al is 3.615 Å", true},
		{"mixing_beta above 0.7 makes the SCF diverge", "mixing_beta below 0.7 makes the SCF diverge", true},
	} {
		if got := Distinguish(tt.a, tt.b); (got != "") != tt.differ {
			t.Errorf("Distinguish(%q, %q) = %q, want different: %v", tt.a, tt.b, got, tt.differ)
		}
	}
}

func TestFunctionWord(t *testing.T) {
	for w, want := range map[string]bool{"the": true, "how": true, "and": true, "if": true, "me": true,
		"value": false, "fourier": false, "run": false, "absolute": false} {
		if FunctionWord(w) != want {
			t.Errorf("FunctionWord(%q) = %v, want %v", w, !want, want)
		}
	}
	// The words every report uses are no content of a statement, but a question may need them.
	if !stopWords["value"] || !stopWords["the"] {
		t.Error("value and the are stop words of a statement")
	}
}

func TestExtract(t *testing.T) {
	ms, _ := Extract("Relax fcc Cu with Quantum ESPRESSO 7.2 and TiO2")
	names := map[string]bool{}
	for _, m := range ms {
		names[m.Name] = true
	}
	for _, want := range []string{"Cu", "TiO2"} {
		if !names[want] {
			t.Errorf("Extract missed %s: %+v", want, ms)
		}
	}
}
