package skillmd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/sqlite"
)

func TestParseErrors(t *testing.T) {
	long := strings.Repeat("x", 1025)
	for _, tc := range []struct {
		name, path, file, want string
	}{
		{"bad name", "skills/bad_name/SKILL.md", "---\nname: Bad_Name\ndescription: d\n---\nbody\n",
			`skills/bad_name/SKILL.md:2: name "Bad_Name": only lowercase letters, digits and hyphens`},
		{"folder", "skills/other/SKILL.md", "---\nname: fit-curve\ndescription: d\n---\n",
			`skills/other/SKILL.md:2: name "fit-curve" must equal the skill's folder name "other"`},
		{"unknown key", "s/a/SKILL.md", "---\nname: a\ndescription: d\nauthor: me\n---\n",
			`s/a/SKILL.md:4: key "author" is not allowed: only name, description, license, compatibility, metadata, allowed-tools (put other fields under metadata)`},
		{"missing description", "s/a/SKILL.md", "---\nname: a\n---\n",
			`s/a/SKILL.md:2: description is required (what the skill does and when to use it)`},
		{"empty description", "s/a/SKILL.md", "---\nname: a\nlicense: MIT\ndescription: \"  \"\n---\n",
			`s/a/SKILL.md:4: description is required (what the skill does and when to use it)`},
		{"long description", "s/a/SKILL.md", "---\nname: a\ndescription: " + long + "\n---\n",
			`s/a/SKILL.md:3: description is 1025 characters; at most 1024`},
		{"broken yaml", "s/a/SKILL.md", "---\nname: a\ndescription: [unclosed\nlicense: MIT\n---\n",
			`s/a/SKILL.md:`},
		{"no front matter", "s/a/SKILL.md", "# Just markdown\n", `s/a/SKILL.md:1: no front matter`},
		{"unclosed", "s/a/SKILL.md", "---\nname: a\n", `s/a/SKILL.md:1: front matter is not closed`},
		{"hyphens", "s/a--b/SKILL.md", "---\nname: a--b\ndescription: d\n---\n", `s/a--b/SKILL.md:2: name "a--b": must not contain two hyphens in a row`},
		{"too long", "x.md", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", `x.md:2: name "aaaa`},
		{"metadata list", "s/a/SKILL.md", "---\nname: a\ndescription: d\nmetadata:\n  k: [1, 2]\n---\n", `s/a/SKILL.md:5: metadata "k": values must be strings`},
		{"metadata labmate", "s/a/SKILL.md", "---\nname: a\ndescription: d\nmetadata:\n  labmate-uses: many\n---\n", `s/a/SKILL.md:5: metadata labmate-uses: strconv.Atoi`},
		{"duplicate key", "s/a/SKILL.md", "---\nname: a\ndescription: d\nname: a\n---\n", `s/a/SKILL.md:`},
		{"name not string", "s/a/SKILL.md", "---\nname: [a]\ndescription: d\n---\n", `s/a/SKILL.md:2: name must be a string`},
	} {
		_, err := Parse(tc.path, []byte(tc.file))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, memory.ErrBadSkill) {
			t.Errorf("%s: %v\n want prefix %s", tc.name, err, tc.want)
		}
	}
	// A YAML error names its line in the file.
	_, err := Parse("s/a/SKILL.md", []byte("---\nname: a\ndescription: d\n  bad: indent\n---\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "s/a/SKILL.md:4: broken YAML") {
		t.Errorf("broken YAML: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 2, 3, 4, 5000, time.UTC)
	sk := &memory.Skill{ID: "id-1", Namespace: "user/skills", Name: "tune-pid", Description: "Tune a PID loop.\nUse when: overshoot.",
		License: "MIT", Compatibility: "octave >= 8", AllowedTools: "octave python", Metadata: map[string]string{"author": "ann", "z": "last: value"},
		Body: "# Tune\n\n```octave\nkp = 1;\n```\n  trailing  \n", Tags: []string{"control", "pid"},
		Provenance: memory.Provenance{Operations: []string{"op-1"}, Model: "m"}, Version: 3, Uses: 5, Successes: 4, Failures: 1,
		Status: memory.StatusActive, CreatedAt: t0, UpdatedAt: t0.Add(time.Hour)}
	b, err := Encode(sk)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("skills/tune-pid/SKILL.md", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if diff := cmp.Diff(sk, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s\n%s", diff, b)
	}
	b2, _ := Encode(got)
	if string(b) != string(b2) {
		t.Errorf("encode is not stable:\n%s\n%s", b, b2)
	}
	if !strings.HasPrefix(string(b), "---\nname: tune-pid\ndescription: ") {
		t.Errorf("layout:\n%s", b)
	}
	// A minimal hand-written file.
	min := "---\nname: fit\ndescription: Fit a curve.\n---\nUse lsqcurvefit.\n"
	sk2, err := Parse("skills/fit/SKILL.md", []byte(min))
	if err != nil {
		t.Fatal(err)
	}
	if sk2.Name != "fit" || sk2.Description != "Fit a curve." || sk2.Body != "Use lsqcurvefit.\n" {
		t.Errorf("minimal: %+v", sk2)
	}
	if b, _ := Encode(sk2); !strings.Contains(string(b), "labmate-uses: \"0\"") || !strings.HasSuffix(string(b), "---\nUse lsqcurvefit.\n") {
		t.Errorf("minimal encoded:\n%s", b)
	}
	if _, err := Encode(&memory.Skill{Name: "a", Description: "d", Metadata: map[string]string{"labmate-id": "x"}}); !errors.Is(err, memory.ErrBadSkill) {
		t.Errorf("reserved metadata: %v", err)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, FileName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSync(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	write(t, dir, "fit", "---\nname: fit\ndescription: Fit a curve.\n---\nUse lsqcurvefit.\n")
	write(t, dir, "tune-pid", "---\nname: tune-pid\ndescription: Tune PID.\n---\nRelay test.\n")
	write(t, dir, "bad", "---\nname: bad\n---\n")
	write(t, dir, "worse", "---\nname: worse\ndescription: d\nversion: 2\n---\n")
	_, err = Sync(ctx, s, dir, "user/skills", "sync")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "bad", "SKILL.md")+":2: description is required") ||
		!strings.Contains(err.Error(), filepath.Join(dir, "worse", "SKILL.md")+":4: key \"version\" is not allowed") {
		t.Fatalf("sync of a folder with bad skills: %v", err)
	}
	nss, _ := s.Namespaces(ctx)
	if len(nss) != 0 {
		t.Fatalf("a failed sync wrote %+v", nss)
	}
	os.RemoveAll(filepath.Join(dir, "bad"))
	os.RemoveAll(filepath.Join(dir, "worse"))
	res, err := Sync(ctx, s, dir, "user/skills", "sync")
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 2 || res.Updated != 0 {
		t.Errorf("first sync: %+v", res)
	}
	write(t, dir, "fit", "---\nname: fit\ndescription: Fit a curve.\n---\nUse lsqcurvefit; check residuals.\n")
	res, err = Sync(ctx, s, dir, "user/skills", "sync")
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 0 || res.Updated != 1 || res.Unchanged != 1 {
		t.Errorf("second sync: %+v", res)
	}
	e, err := s.Get(ctx, &memory.GetParams{Namespace: "user/skills", Name: "fit"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Skill.Version != 2 || e.Skill.Body != "Use lsqcurvefit; check residuals.\n" {
		t.Errorf("synced skill: %+v", e.Skill)
	}
	if _, err := s.Use(ctx, &memory.UseParams{ID: e.Skill.ID, Success: true}); err != nil {
		t.Fatal(err)
	}
	e, _ = s.Get(ctx, &memory.GetParams{ID: e.Skill.ID})
	if e.Skill.Uses != 1 || e.Skill.Successes != 1 {
		t.Errorf("counts: %+v", e.Skill)
	}
}

// A library in an fs.FS: its skills by name, and one skill's scripts copied executable.
func TestLibraryNamesAndScripts(t *testing.T) {
	lib := fstest.MapFS{
		"b/SKILL.md":         {Data: []byte("x")},
		"a/SKILL.md":         {Data: []byte("x")},
		"a/scripts/run.sh":   {Data: []byte("#!/bin/sh\necho a\n")},
		"a/scripts/fit.py":   {Data: []byte("print(1)\n")},
		"notes/README.md":    {Data: []byte("not a skill")},
		"b/scripts/other.sh": {Data: []byte("echo b\n")},
	}
	if got := Names(lib); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Names = %v, want [a b]", got)
	}
	dir := t.TempDir()
	if err := CopyScripts(lib, "a", dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		fi, _ := e.Info()
		if fi.Mode().Perm()&0o100 == 0 {
			t.Errorf("%s is not executable: %v", e.Name(), fi.Mode())
		}
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"fit.py", "run.sh"}) {
		t.Errorf("copied %v, want [fit.py run.sh]", names)
	}
	if err := CopyScripts(lib, "missing", dir); err == nil {
		t.Error("the scripts of a missing skill copied without an error")
	}
}
