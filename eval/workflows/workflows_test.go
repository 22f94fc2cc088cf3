package workflows

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/examples/skills"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel/shell"
	"github.com/labmate/labmate/memory/skillmd"
)

// TestLoad: every skill of the library is a valid SKILL.md, and the workflows cover at least ten
// kinds, each with a cited reference and a quick subset of LAMMPS and QE skills.
func TestLoad(t *testing.T) {
	if _, err := skillmd.ReadDir(filepath.Join("..", "..", "examples", "skills")); err != nil {
		t.Fatal(err)
	}
	all, err := Load(skills.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 11 || len(all) != len(skills.Names()) {
		t.Errorf("%d workflows of %d skills, want every skill (≥ 11) to declare one", len(all), len(skills.Names()))
	}
	codes := map[string]int{}
	for _, w := range all {
		if w.Quick {
			codes[w.Code]++
		}
		for _, c := range w.Checks {
			if len(c.Citation) < 20 || !strings.ContainsAny(c.Citation, "0123456789") {
				t.Errorf("%s %s: citation %q names no publication", w.Skill, c.Quantity, c.Citation)
			}
		}
	}
	if codes["qe"] == 0 || codes["lammps"] == 0 {
		t.Errorf("quick subset %v: want QE and LAMMPS skills in it", codes)
	}
	if _, err := Select(all, []string{"no-such-skill"}, false); err == nil || !strings.Contains(err.Error(), "cu-vacancy-formation") {
		t.Errorf("Select of an unknown skill: %v, want an error listing the skills", err)
	}
}

func TestParseCheck(t *testing.T) {
	c, err := ParseCheck("k", "Ef = 1.28 ± 0.03 eV | Foiles 1986")
	if err != nil || c.Quantity != "Ef" || c.Reference != 1.28 || c.Tolerance != 0.03 || c.Unit != "eV" || c.Citation != "Foiles 1986" {
		t.Errorf("ParseCheck: %+v, %v", c, err)
	}
	for _, bad := range []struct{ in, want string }{
		{"Ef = 1.28 ± 0.03 eV", "no citation"},
		{"1.28 ± 0.03 eV | x", "no quantity"},
		{"Ef = 1.28 eV | x", "no ±"},
		{"Ef = one ± 0.03 eV | x", "invalid syntax"},
		{"Ef = 1.28 ± -1 eV | x", "positive"},
	} {
		if _, err := ParseCheck("workflow-check-ef", bad.in); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "workflow-check-ef") {
			t.Errorf("ParseCheck(%q) = %v, want an error with %q naming the key", bad.in, err, bad.want)
		}
	}
	for _, in := range []string{"RESULT Ef = 1.2847", "  RESULT m_l = 0.95 m_e"} {
		if _, _, ok := resultLine(in); !ok {
			t.Errorf("resultLine(%q) not read", in)
		}
	}
	if _, _, ok := resultLine(`print "RESULT Ef = $(v_Ef)"`); ok {
		t.Error("an echoed print command read as a result")
	}
}

func run(t testing.TB, wfs []Workflow) ([]*Result, float64) {
	start := time.Now()
	res, err := Run(context.Background(), wfs, &Options{Start: shell.Start, Kernel: testutil.KernelOptions(t), // Timeout: the CLI's default
		Progress: func(r *Result) {
			t.Logf("%s: pass %v in %.1f s (%s) %s", r.Skill, r.Pass, r.WallS, r.Perception, r.Error)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return res, time.Since(start).Seconds()
}

// TestQuick runs the quick subset — QE and LAMMPS skills of seconds each — in the sandbox:
// every check passes within its tolerance, perception watched every run, and the JSON and
// Markdown tables carry the values.
func TestQuick(t *testing.T) {
	all, err := Load(skills.FS)
	if err != nil {
		t.Fatal(err)
	}
	quick, err := Select(all, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	res, wall := run(t, quick)
	var text, md bytes.Buffer
	if err := WriteText(&text, res, wall); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	for _, r := range res {
		if !r.Pass {
			t.Errorf("%s failed: %s %+v", r.Skill, r.Error, r.Rows)
		}
		if r.Perception == "" {
			t.Errorf("%s: no perception verdict", r.Skill)
		}
	}
	if err := WriteMarkdown(&md, res, wall); err != nil || !strings.Contains(md.String(), "| cu-vacancy-formation | lammps | Ef | 1.28") {
		t.Errorf("markdown: %v\n%s", err, md.String())
	}
	b, err := json.Marshal(res)
	if err != nil || !strings.Contains(string(b), `"wall_s":`) {
		t.Errorf("json: %v %s", err, b)
	}
	// About 75 s on 2 cores shared with other work (the codes need ~20 s of CPU); the wall
	// time depends on what else runs, so only a hang fails here (each run is also bounded).
	t.Logf("quick subset: %.1f s wall", wall)
	if wall > 20*60 {
		t.Errorf("the quick subset took %.0f s", wall)
	}
}

// TestFailingCheck: a result outside its tolerance fails, and a run that prints no result fails
// with the run's last lines.
func TestFailingCheck(t *testing.T) {
	all, err := Load(skills.FS)
	if err != nil {
		t.Fatal(err)
	}
	wfs, err := Select(all, []string{"cu-cohesive-energy"}, false)
	if err != nil {
		t.Fatal(err)
	}
	wfs[0].Checks[0].Reference = 3.0 // 0.54 eV off
	bad := wfs[0]
	bad.Skill, bad.Run = "cu-cohesive-energy", "bash run.sh; echo no result; exit 3"
	bad.Checks = []Check{{Quantity: "missing", Reference: 1, Tolerance: 1, Citation: "none"}}
	res, _ := run(t, []Workflow{wfs[0], bad})
	if res[0].Pass || res[0].Rows[0].Pass || res[0].Rows[0].Value == nil || *res[0].Rows[0].Error < 0.5 {
		t.Errorf("a value 0.54 eV off passed: %+v", res[0].Rows)
	}
	if res[1].Pass || res[1].Rows[0].Value != nil || !strings.Contains(res[1].Error, "no result") {
		t.Errorf("a run without its result: %+v", res[1])
	}
}

// BenchmarkWorkflows runs every skill's workflow and reports the table and its wall time. Run
// with -benchtime 1x -v.
func BenchmarkWorkflows(b *testing.B) {
	all, err := Load(skills.FS)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		res, wall := run(b, all)
		var text bytes.Buffer
		if err := WriteMarkdown(&text, res, wall); err != nil {
			b.Fatal(err)
		}
		b.Logf("\n%s", text.String())
		s := Summarize(res, wall)
		b.ReportMetric(float64(s.ChecksPassed), "checks-passed")
		b.ReportMetric(float64(s.Checks), "checks")
		b.ReportMetric(wall, "wall-s")
	}
}
