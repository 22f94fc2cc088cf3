package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEvalMaterials(t *testing.T) {
	out, errOut, code := labmate(t, t.TempDir(), "", "eval", "materials", "--elements", "Cu", "--methods", "lammps", "--json")
	var v struct {
		Results []struct {
			Element, Method, Verdict string
			Fit                      struct{ A0 float64 }
			Points                   []struct{ A, E float64 }
		}
		Summary []struct{ Method string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if len(v.Results) != 1 || v.Results[0].Verdict != "Correct" || v.Results[0].Fit.A0 < 3.6 || v.Results[0].Fit.A0 > 3.63 || len(v.Results[0].Points) != 7 {
		t.Errorf("results %+v", v.Results)
	}
	if !strings.HasPrefix(errOut, "labmate eval materials: 1 scan (lammps Cu), ") || !strings.Contains(errOut, "[1/1] lammps Cu: a0 3.61") {
		t.Errorf("no first line and progress line on stderr: %q", errOut)
	}
	out, _, code = labmate(t, t.TempDir(), "", "eval", "materials", "--elements", "Cu", "--methods", "lammps", "--markdown")
	if code != 0 || !strings.Contains(out, "| Cu | fcc | LAMMPS | `Cu_u3.eam (eam)` | 3.615 | 3.596 |") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
	_, errOut, code = labmate(t, t.TempDir(), "", "eval", "materials", "--elements", "Ag", "--methods", "qe")
	if code == 0 || !strings.Contains(errOut, "no Ag pseudopotential") {
		t.Errorf("Ag with qe: exit %d, stderr %q", code, errOut)
	}
}
