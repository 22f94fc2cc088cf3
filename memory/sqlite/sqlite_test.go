package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/memorytest"
	"github.com/labmate/labmate/memory/statement"
)

func open(t testing.TB, e memory.Embedder) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "memory.db"), &Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store { return open(t, nil) })
}

// TestMerge is the merge table: the same fact reworded is merged, a different number, unit,
// sign, polarity, comparison, material or version is kept.
// TestLongQueries: whole SciBench problems as queries find the entry with their rarest words.
func TestLongQueries(t *testing.T) {
	memorytest.RunLongQueries(t, func(t *testing.T) memory.Store { return open(t, nil) }, nil, 0)
}

func TestMerge(t *testing.T) {
	memorytest.RunMerge(t, func(t *testing.T) memory.Store { return open(t, nil) })
}

// TestGraph is the entity graph: links, expansion, aliases, invalidation with validity times.
func TestGraph(t *testing.T) {
	memorytest.RunGraph(t, func(t *testing.T) memory.Store { return open(t, nil) })
}

func TestEmbedding(t *testing.T) {
	memorytest.RunEmbedding(t, func(t *testing.T, e memory.Embedder) memory.Store { return open(t, e) })
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.AddFact(t.Context(), &memory.AddFactParams{Fact: &memory.Fact{Namespace: "a", Text: "survives a restart"}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if e, err := s.Get(t.Context(), &memory.GetParams{ID: r.Fact.ID}); err != nil || e.Fact.Text != "survives a restart" {
		t.Errorf("after reopening: %+v, %v", e, err)
	}
	// A newer schema is refused.
	if _, err := s.DB().Exec("UPDATE memory_meta SET value = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.Context(), path, nil); !errors.Is(err, memory.ErrNewerStore) {
		t.Errorf("opening a newer schema: %v; want ErrNewerStore", err)
	}
	if _, err := Open(t.Context(), filepath.Join(t.TempDir(), "no", "dir", "m.db"), nil); err == nil {
		t.Error("opening in a missing directory succeeded")
	}
}

// TestTwoProcesses runs this test binary twice at once (as helpers writing the same file) and
// checks that no write was lost.
func TestTwoProcesses(t *testing.T) {
	if path := os.Getenv("MEMORY_SQLITE_HELPER"); path != "" {
		helper(path, os.Getenv("MEMORY_SQLITE_WHO"))
		return
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(t.Context(), path, nil) // create the schema first
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var cmds []*exec.Cmd
	for _, who := range []string{"a", "b"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcesses$")
		cmd.Env = append(os.Environ(), "MEMORY_SQLITE_HELPER="+path, "MEMORY_SQLITE_WHO="+who)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// And this process writes too.
	for i := range helperWrites {
		if _, err := s.AddFact(t.Context(), &memory.AddFactParams{Fact: &memory.Fact{Namespace: "p", Text: fmt.Sprintf("parent fact %d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	n := 0
	for _, err := range s.Search(t.Context(), &memory.Query{Namespaces: []string{"p"}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3*helperWrites {
		t.Errorf("%d facts after %d writes from three processes", n, 3*helperWrites)
	}
	h := 0
	for _, err := range s.History(t.Context(), &memory.HistoryParams{Namespace: "p"}) {
		if err != nil {
			t.Fatal(err)
		}
		h++
	}
	if h != 3*helperWrites {
		t.Errorf("%d history entries; want %d", h, 3*helperWrites)
	}
}

const helperWrites = 1000

func helper(path, who string) {
	ctx := context.Background()
	s, err := Open(ctx, path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer s.Close()
	for i := range helperWrites {
		if _, err := s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "p", Text: "helper " + who + " fact " + strconv.Itoa(i)}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// TestMigrateV1 opens a store written by schema version 1 — whose duplicate key dropped signs
// and decimal points — and checks that it is migrated: keys recomputed (so that "T = 5 K" is no
// longer a duplicate of "T = -5 K") and every entry linked to its entities.
func TestMigrateV1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "a", Text: "The Seebeck coefficient of Cu is -1.8 µV/K"}})
	if err != nil {
		t.Fatal(err)
	}
	// Make it a version-1 store: the old key (letters and digits only), no graph.
	old := sha256.Sum256([]byte(statement.Words(r.Fact.Text)))
	for _, q := range []string{"UPDATE memory_meta SET value = 1", "DELETE FROM entity_links", "DELETE FROM entities", "DELETE FROM entity_aliases", "DELETE FROM relations"} {
		if _, err := s.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().Exec("UPDATE entries SET norm = ?", hex.EncodeToString(old[:16])); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.DB().QueryRow("SELECT value FROM memory_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != 2 {
		t.Fatalf("schema version %d, %v; want 2", v, err)
	}
	add, err := s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "a", Text: "The Seebeck coefficient of Cu is 1.8 µV/K"}})
	if err != nil || add.Merged {
		t.Errorf("the opposite sign was merged after the migration: %+v, %v", add, err)
	}
	again, err := s.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "a", Text: "the Seebeck coefficient of Cu is -1.8 µV/K!"}})
	if err != nil || !again.Merged || again.Fact.ID != r.Fact.ID {
		t.Errorf("an exact duplicate of the migrated fact was not merged: %+v, %v", again, err)
	}
	var ents []string
	for e, err := range s.Entities(ctx, &memory.EntityQuery{Entry: r.Fact.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		ents = append(ents, e.Name)
	}
	if !slices.Contains(ents, "Cu") {
		t.Errorf("the migrated fact is linked to %v; want Cu among them", ents)
	}
}

// TestAnotherWriter: the term counts and rankings one store reuses between its searches do not
// hide what another store on the same file (another process) writes: a word no entry had, then
// one, is found at once, and an entry another writer invalidates is gone.
func TestAnotherWriter(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memory.db")
	a, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, text := range []string{"the furnace anneals copper at 400 C", "the furnace door seal leaks above 900 C"} {
		if _, err := a.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "lab", Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	find := func(q string) []string {
		t.Helper()
		var out []string
		for r, err := range a.Search(ctx, &memory.Query{Text: q}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r.Fact.Text)
		}
		return out
	}
	const q = "does the furnace crucible survive while the furnace anneals copper"
	if got := find(q); len(got) != 2 || !strings.Contains(got[0], "anneals") {
		t.Fatalf("before: %q", got)
	}
	r, err := b.AddFact(ctx, &memory.AddFactParams{Fact: &memory.Fact{Namespace: "lab", Kind: memory.KindWarning, Text: "an alumina crucible shattered on quenching"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := find(q); len(got) != 3 || !slices.Contains(got, "an alumina crucible shattered on quenching") {
		t.Errorf("after another store wrote a fact with the absent word: %q", got)
	}
	if _, err := b.Invalidate(ctx, &memory.InvalidateParams{ID: r.Fact.ID, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if got := find(q); len(got) != 2 {
		t.Errorf("after another store invalidated it: %q", got)
	}
}
