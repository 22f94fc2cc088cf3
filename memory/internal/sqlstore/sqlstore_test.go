package sqlstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/internal/sqlstore"
	"github.com/labmate/labmate/memory/sqlite"
)

// open opens a store on a real SQLite file (the SQLite dialect of this package).
func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fact(ns, text string) *memory.AddFactParams {
	return &memory.AddFactParams{Fact: &memory.Fact{Namespace: ns, Text: text}, Actor: "test"}
}

func texts(t *testing.T, s memory.Store, q string) []string {
	t.Helper()
	var out []string
	for r, err := range s.Search(context.Background(), &memory.Query{Text: q}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Fact.Text)
	}
	return out
}

// Open writes the schema and its version once; a second store on the same file finds them.
func TestOpenSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	a := open(t, path)
	var v int
	if err := a.DB().QueryRow("SELECT value FROM memory_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != sqlstore.SchemaVersion {
		t.Fatalf("schema_version %d, %v; want %d", v, err, sqlstore.SchemaVersion)
	}
	if _, err := a.AddFact(context.Background(), fact("user", "Cu is fcc")); err != nil {
		t.Fatal(err)
	}
	b := open(t, path)
	if got := texts(t, b, "Cu fcc"); !slices.Equal(got, []string{"Cu is fcc"}) {
		t.Errorf("a second store on the file finds %v", got)
	}
}

// A closed store refuses every call with ErrClosed, and closing twice is not an error.
func TestClosed(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("closing twice: %v", err)
	}
	ctx := context.Background()
	if _, err := s.AddFact(ctx, fact("user", "x")); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("AddFact after Close: %v", err)
	}
	for _, err := range s.Search(ctx, &memory.Query{Text: "x"}) {
		if !errors.Is(err, memory.ErrClosed) {
			t.Errorf("Search after Close: %v", err)
		}
	}
	for _, err := range s.History(ctx, &memory.HistoryParams{}) {
		if !errors.Is(err, memory.ErrClosed) {
			t.Errorf("History after Close: %v", err)
		}
	}
}

// Writes from two stores on one file at once all land, an exact duplicate merges into one
// row, and a write to a frozen namespace leaves no trace.
func TestWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	a, b := open(t, path), open(t, path)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i, s := range []*sqlite.Store{a, b, a, b} {
		wg.Go(func() {
			for j := range 10 {
				if _, err := s.AddFact(ctx, fact("user", "writer "+string(rune('a'+i))+" fact "+string(rune('a'+j)))); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	count := func() int {
		var n int
		if err := a.DB().QueryRow("SELECT COUNT(*) FROM entries").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 40 {
		t.Fatalf("%d entries after 40 concurrent writes from two stores", n)
	}
	r, err := b.AddFact(ctx, fact("user", "Writer A fact A."))
	if err != nil || !r.Merged || count() != 40 {
		t.Errorf("an exact duplicate: %+v, %v, %d entries; want merged into the 40", r, err, count())
	}
	if err := a.Freeze(ctx, &memory.FreezeParams{Namespace: "user", Frozen: true, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	before := len(history(t, a, ""))
	if _, err := b.AddFact(ctx, fact("user", "a new fact")); !errors.Is(err, memory.ErrFrozen) {
		t.Errorf("a write to a frozen namespace: %v", err)
	}
	if n, after := count(), len(history(t, a, "")); n != 40 || after != before {
		t.Errorf("the refused write left %d entries and %d changes (want 40 and %d)", n, after, before)
	}
}

// Terms are the normalised words full-text search looks for, each once, in order.
func TestTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"Cu lattice constant, Cu's lattice?": {"cu", "lattice", "constant", "s"},
		"  ":                                 nil,
		"ecutwfc=40 Ry":                      {"ecutwfc", "40", "ry"},
	} {
		if got := sqlstore.Terms(in); !slices.Equal(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", in, got, want)
		}
	}
}

// A store's search sees what another store on the same file wrote after its last search: the
// term statistics it keeps are refreshed when the index changes.
func TestSearchSeesOtherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	a, b := open(t, path), open(t, path)
	ctx := context.Background()
	if _, err := a.AddFact(ctx, fact("user", "the SCF of Fe needs smearing")); err != nil {
		t.Fatal(err)
	}
	if got := texts(t, a, "smearing SCF"); len(got) != 1 {
		t.Fatalf("first search: %v", got)
	}
	if _, err := b.AddFact(ctx, fact("user", "Gaussian smearing of 0.02 Ry suits Ni")); err != nil {
		t.Fatal(err)
	}
	if got := texts(t, a, "smearing Ni"); len(got) != 2 || got[0] != "Gaussian smearing of 0.02 Ry suits Ni" {
		t.Errorf("after the other store's write: %v", got)
	}
}

func history(t *testing.T, s memory.Store, entry string) []*memory.Change {
	t.Helper()
	var out []*memory.Change
	for c, err := range s.History(context.Background(), &memory.HistoryParams{EntryID: entry}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// Import writes entries verbatim into another file with their history; importing them again
// overwrites each with one more change, and History is in write order.
func TestImportAndHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := open(t, filepath.Join(dir, "a.db"))
	r, err := src.AddFact(ctx, fact("user", "pw.x diverges with mixing_beta 0.9"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.UpdateFact(ctx, &memory.UpdateFactParams{ID: r.Fact.ID, Text: "pw.x diverges with mixing_beta 0.9 for Fe", Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	e, err := src.Get(ctx, &memory.GetParams{ID: r.Fact.ID})
	if err != nil {
		t.Fatal(err)
	}
	dst := open(t, filepath.Join(dir, "b.db"))
	for range 2 {
		res, err := dst.Import(ctx, &memory.ImportParams{Facts: []*memory.Fact{e.Fact}, Actor: "import"})
		if err != nil || res.Facts != 1 {
			t.Fatalf("import: %+v, %v", res, err)
		}
	}
	got, err := dst.Get(ctx, &memory.GetParams{ID: r.Fact.ID})
	if err != nil || got.Fact.Text != e.Fact.Text || !got.Fact.CreatedAt.Equal(e.Fact.CreatedAt) {
		t.Fatalf("imported %+v, %v; want %+v verbatim", got, err, e.Fact)
	}
	hs := history(t, dst, r.Fact.ID)
	if len(hs) != 2 {
		t.Fatalf("history after two imports: %d changes, want 2", len(hs))
	}
	for i := 1; i < len(hs); i++ {
		if hs[i].Seq <= hs[i-1].Seq {
			t.Errorf("history out of order: %d after %d", hs[i].Seq, hs[i-1].Seq)
		}
	}
	if n := len(history(t, src, r.Fact.ID)); n != 2 {
		t.Errorf("the source's history: %d changes (add, update), want 2", n)
	}
}
