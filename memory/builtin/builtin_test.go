package builtin

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/examples/skills"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/folder"
	"github.com/labmate/labmate/memory/skillmd"
	"github.com/labmate/labmate/memory/sqlite"
)

func open(t *testing.T) memory.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestImportFrozen: the library lands in a frozen namespace on first use, once; a second
// import changes nothing; nobody writes into it.
func TestImportFrozen(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	did, err := Ensure(ctx, s, "test")
	if err != nil || !did {
		t.Fatalf("Ensure on an empty store: %v, %v", did, err)
	}
	if did, err := Ensure(ctx, s, "test"); err != nil || did {
		t.Fatalf("Ensure again: %v, %v (want nothing done)", did, err)
	}
	res, err := Import(ctx, s, "test")
	if err != nil || res.Unchanged != len(skills.Names()) || res.Created+res.Updated != 0 {
		t.Fatalf("import again: %+v, %v", res, err)
	}
	nss, err := s.Namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range nss {
		if n.Name == Namespace {
			found = true
			if !n.Frozen || n.Skills != len(skills.Names()) {
				t.Errorf("namespace %+v: want frozen with %d skills", n, len(skills.Names()))
			}
		}
	}
	if !found {
		t.Fatalf("no namespace %s in %+v", Namespace, nss)
	}
	sk := &memory.Skill{Namespace: Namespace, Name: "cu-vacancy-formation", Description: "mine", Body: "x"}
	if _, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: sk, Actor: "user"}); !errors.Is(err, memory.ErrFrozen) {
		t.Errorf("a user's write into %s: %v, want ErrFrozen", Namespace, err)
	}
	var hits []string
	for r, err := range s.Search(ctx, &memory.Query{Text: "vacancy formation energy of Cu", Namespaces: []string{Namespace}, Kinds: []memory.Kind{memory.KindSkill}, Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Skill.Provenance.Source != Source(r.Skill.Name) {
			t.Errorf("%s: provenance %+v", r.Skill.Name, r.Skill.Provenance)
		}
		hits = append(hits, r.Skill.Name)
	}
	if !slices.Contains(hits, "cu-vacancy-formation") {
		t.Errorf("the two best hits for the vacancy task: %v", hits)
	}
}

// TestRoundTrip: every shipped skill validates, and export → import → export gives the same
// bytes, with the shipped body, references and validation record kept.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	if _, err := skillmd.ReadDir(filepath.Join("..", "..", "examples", "skills")); err != nil {
		t.Fatal(err)
	}
	a, b := open(t), open(t)
	if _, err := Import(ctx, a, "test"); err != nil {
		t.Fatal(err)
	}
	d1, d2 := t.TempDir(), t.TempDir()
	if _, err := folder.Export(ctx, a, d1, &folder.ExportOptions{Namespaces: []string{Namespace}}); err != nil {
		t.Fatal(err)
	}
	if r, err := folder.Import(ctx, b, d1, "test"); err != nil || r.Skills != len(skills.Names()) {
		t.Fatalf("import: %+v, %v", r, err)
	}
	if _, err := folder.Export(ctx, b, d2, &folder.ExportOptions{Namespaces: []string{Namespace}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range skills.Names() {
		p := filepath.Join(folder.SkillsDir, name, skillmd.FileName)
		x, err1 := os.ReadFile(filepath.Join(d1, p))
		y, err2 := os.ReadFile(filepath.Join(d2, p))
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s: export → import → export changed the bytes", name)
		}
		orig, _ := fs.ReadFile(skills.FS, name+"/SKILL.md")
		shipped, _ := skillmd.Parse(name, orig)
		got, err := skillmd.Parse(p, x)
		if err != nil {
			t.Fatal(err)
		}
		if got.Body != shipped.Body || got.Description != shipped.Description || got.Namespace != Namespace || got.Provenance.Source != Source(name) {
			t.Errorf("%s: the exported skill differs from the shipped one", name)
		}
		for k, v := range shipped.Metadata {
			if got.Metadata[k] != v {
				t.Errorf("%s: metadata %s = %q, shipped %q", name, k, got.Metadata[k], v)
			}
		}
		run, _ := fs.ReadFile(skills.FS, name+"/scripts/run.sh")
		for _, d := range []string{d1, d2} {
			if b, err := os.ReadFile(filepath.Join(d, folder.SkillsDir, name, "scripts", "run.sh")); err != nil || !bytes.Equal(b, run) {
				t.Errorf("%s: the export in %s lacks the shipped scripts/run.sh: %v", name, d, err)
			}
		}
		if !strings.Contains(string(x), "workflow-check-") || !strings.Contains(string(x), "workflow-validated") {
			t.Errorf("%s: the export lacks its references or its validation record", name)
		}
	}
}
