package folder_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/folder"
	"github.com/labmate/labmate/memory/sqlite"
)

func open(t *testing.T) memory.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// tree reads every file under dir.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fill(t *testing.T, s memory.Store) {
	ctx := t.Context()
	for _, f := range []*memory.Fact{
		{Namespace: "user", Text: "ode45 diverges on stiff problems: use ode15s", Kind: memory.KindWarning, Tags: []string{"octave", "ode"},
			Evidence: []string{"t=0.3: NaN", "step size 1e-14"}, Confidence: 0.9,
			Provenance: memory.Provenance{Operations: []string{"op-1"}, Session: "s-1", Model: "openai:gpt-x", Source: "https://x.org/a?b=c", Time: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)}},
		{Namespace: "user/proj", Text: "Text with: colons, \"quotes\", # hashes\nand a second line", Kind: memory.KindReference},
		{Namespace: "user", Text: "water boils at 90 C", Kind: memory.KindObservation},
	} {
		r, err := s.AddFact(ctx, &memory.AddFactParams{Fact: f, Actor: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(f.Text, "water") {
			if _, err := s.Invalidate(ctx, &memory.InvalidateParams{ID: r.Fact.ID, Reason: "100 C at sea level"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A guardrail with the settings that failed and worked, and a duplicate merged into it (its
	// provenance kept).
	g := &memory.Fact{Namespace: "user", Text: "Explicit Euler on y' = -50 y diverges with dt = 0.06; dt = 0.01 works", Kind: memory.KindBoundary,
		Tried: []string{"dt = 0.06"}, Worked: []string{"dt = 0.01"}, Provenance: memory.Provenance{Operations: []string{"op-a", "op-b"}, Session: "run-1"}}
	if _, err := s.AddFact(ctx, &memory.AddFactParams{Fact: g}); err != nil {
		t.Fatal(err)
	}
	dup := *g
	dup.Text += "."
	dup.Provenance = memory.Provenance{Operations: []string{"op-c"}, Session: "run-2", Model: "anthropic:x", Time: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)}
	if r, err := s.AddFact(ctx, &memory.AddFactParams{Fact: &dup}); err != nil || !r.Merged || len(r.Fact.Provenance.Merged) != 1 {
		t.Fatalf("duplicate: %+v, %v", r, err)
	}
	// The graph: an alias a person added, an entity invalidated.
	gr := s.(memory.Graph)
	if _, err := gr.PutEntity(ctx, &memory.PutEntityParams{Entity: &memory.Entity{Name: "Cu_u3", Kind: memory.EntityName, Aliases: []string{"Mishin Cu potential"}}, Actor: "user:ann"}); err != nil {
		t.Fatal(err)
	}
	if _, err := gr.PutEntity(ctx, &memory.PutEntityParams{Entity: &memory.Entity{Name: "Cu_u3", Kind: memory.EntityName, Aliases: []string{"Cu_u3.eam"}}, Actor: "user:ann"}); err != nil {
		t.Fatal(err)
	}
	if err := gr.InvalidateEntity(ctx, &memory.InvalidateEntityParams{ID: "name:cu_u3", Reason: "renamed", Actor: "user:ann"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: &memory.Skill{Namespace: "user/skills", Name: "tune-pid", Description: "Tune a PID: relay test.",
		Body: "# Steps\n\n1. relay\n2. ZN rules\n", Tags: []string{"control"}, Metadata: map[string]string{"author": "ann"}}}); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := t.Context()
	a := open(t)
	fill(t, a)
	e, _ := a.Get(ctx, &memory.GetParams{Namespace: "user/skills", Name: "tune-pid"})
	a.Use(ctx, &memory.UseParams{ID: e.Skill.ID, Success: true})

	dir1 := t.TempDir()
	res, err := folder.Export(ctx, a, dir1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Facts != 4 || res.Skills != 1 {
		t.Errorf("export: %+v", res)
	}
	b := open(t)
	if res, err := folder.Import(ctx, b, dir1, "import"); err != nil || res.Facts != 4 || res.Skills != 1 {
		t.Fatalf("import: %+v, %v", res, err)
	}
	dir2 := t.TempDir()
	if _, err := folder.Export(ctx, b, dir2, nil); err != nil {
		t.Fatal(err)
	}
	t1, t2 := tree(t, dir1), tree(t, dir2)
	if len(t1) != 6 {
		t.Errorf("files: %v", t1)
	}
	// The new fields are in the files.
	var guard string
	for name, c := range t1 {
		if strings.Contains(c, "Explicit Euler") {
			guard = name
		}
	}
	for _, want := range []string{"tried:\n  - dt = 0.06\n", "worked:\n  - dt = 0.01\n", "merged:\n", "session: run-2", "model: anthropic:x"} {
		if !strings.Contains(t1[guard], want) {
			t.Errorf("%s lacks %q:\n%s", guard, want, t1[guard])
		}
	}
	for _, want := range []string{"id: name:cu_u3", "mishin cu potential", "cu_u3.eam", "status: invalidated", "reason: renamed"} {
		if !strings.Contains(t1["graph.yaml"], want) {
			t.Errorf("graph.yaml lacks %q:\n%s", want, t1["graph.yaml"])
		}
	}
	for name, c := range t1 {
		if t2[name] != c {
			t.Errorf("%s differs after export → import → export:\n%s\n---\n%s", name, c, t2[name])
		}
	}
	if len(t2) != len(t1) {
		t.Errorf("%d files then %d", len(t1), len(t2))
	}
	// A person can read it.
	skill := t1[filepath.Join("skills", "tune-pid", "SKILL.md")]
	if !strings.HasPrefix(skill, "---\nname: tune-pid\ndescription: 'Tune a PID: relay test.'\n") || !strings.Contains(skill, "labmate-uses: \"1\"") {
		t.Errorf("SKILL.md:\n%s", skill)
	}
	// Exporting again replaces, and a namespace filter selects.
	if res, err := folder.Export(ctx, a, dir1, &folder.ExportOptions{Namespaces: []string{"user/proj"}}); err != nil || res.Facts != 1 || res.Skills != 0 {
		t.Errorf("filtered export: %+v, %v", res, err)
	}
	if n := len(tree(t, dir1)); n != 2 { // the fact, and graph.yaml of the whole store before
		t.Errorf("after a filtered export %d files remain", n)
	}
}

func TestImportAllOrNothing(t *testing.T) {
	ctx := t.Context()
	a := open(t)
	fill(t, a)
	dir := t.TempDir()
	if _, err := folder.Export(ctx, a, dir, nil); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "facts"))
	victim := filepath.Join(dir, "facts", entries[0].Name())
	orig, _ := os.ReadFile(victim)
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"unknown key", strings.Replace(string(orig), "kind:", "colour: red\nkind:", 1), ":4: key \"colour\" is not allowed"},
		{"bad kind", strings.Replace(string(orig), "kind: ", "kind: rumour-", 1), ":4: fact"},
		{"broken yaml", strings.Replace(string(orig), "namespace: ", "namespace: [", 1), ": broken YAML"},
		{"bad time", strings.Replace(string(orig), "created_at: ", "created_at: yesterday-", 1), "is not an RFC 3339 time"},
		{"empty text", string(orig[:strings.LastIndex(string(orig), "---\n")+4]), "empty text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(victim, []byte(tc.edit), 0o644); err != nil {
				t.Fatal(err)
			}
			b := open(t)
			_, err := folder.Import(ctx, b, dir, "import")
			if err == nil || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("import of a folder with a bad file: %v\nwant %s…%s", err, victim, tc.want)
			}
			n := 0
			for range b.Search(ctx, &memory.Query{Status: []memory.Status{memory.StatusActive, memory.StatusInvalidated}}) {
				n++
			}
			if n != 0 {
				t.Errorf("a failed import wrote %d entries", n)
			}
		})
	}
	os.WriteFile(victim, orig, 0o644)
	// A bad SKILL.md also stops everything.
	sk := filepath.Join(dir, "skills", "tune-pid", "SKILL.md")
	skb, _ := os.ReadFile(sk)
	os.WriteFile(sk, []byte(strings.Replace(string(skb), "name: tune-pid", "name: Tune_PID", 1)), 0o644)
	b := open(t)
	if _, err := folder.Import(ctx, b, dir, "x"); err == nil || !strings.Contains(err.Error(), sk+":2: name \"Tune_PID\"") || !errors.Is(err, memory.ErrBadSkill) {
		t.Errorf("bad skill: %v", err)
	}
	if _, err := folder.Import(ctx, b, t.TempDir(), "x"); err == nil {
		t.Error("importing an empty folder succeeded")
	}
}
