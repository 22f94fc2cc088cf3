package sqlite_test

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/labmate/labmate/internal/sqlitefile"
	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/indextest"
	"github.com/labmate/labmate/knowledge/sqlite"
)

func TestSuite(t *testing.T) {
	indextest.Run(t, func(t *testing.T) knowledge.Index {
		ix, err := sqlite.Open(filepath.Join(t.TempDir(), "sub", "docs.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	})
}

// conceptEmbedder embeds a text as the bag of its concepts: words mapped through a small
// synonym table and hashed into 64 dimensions. It is deterministic and local, enough to show
// that fusion brings a chunk BM25 cannot find (no shared word) into the results.
type conceptEmbedder struct{ calls atomic.Int64 }

var concepts = map[string]string{"thermometer": "temperature", "heat": "temperature", "temperature": "temperature",
	"kelvin": "temperature", "probe": "sensor", "sensor": "sensor"}

func (e *conceptEmbedder) Name() string { return "concept" }

func (e *conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if c, ok := concepts[w]; ok {
				w = c
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		out[i] = v
	}
	return out, nil
}

func TestEmbeddingsFused(t *testing.T) {
	emb := &conceptEmbedder{}
	ix, err := sqlite.Open(filepath.Join(t.TempDir(), "docs.db"), &sqlite.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	err = ix.Add(ctx,
		&knowledge.Doc{Source: "a.md", Format: "markdown", Text: "# Thermometer\nRead the thermometer probe after two minutes.\n"},
		&knowledge.Doc{Source: "b.md", Format: "markdown", Text: "# Pipette\nRinse the pipette twice.\n"},
		&knowledge.Doc{Source: "c.md", Format: "markdown", Text: "# Heat\nThe heat sensor reports kelvin.\n"})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, &knowledge.Query{Text: "temperature", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Source)
	}
	// No chunk contains "temperature": BM25 alone finds nothing; the embedding finds both.
	if len(hits) < 2 || (got[0] != "c.md" && got[0] != "a.md") || math.IsNaN(hits[0].Score) {
		t.Errorf("fused hits %v", got)
	}
	plain, _ := sqlite.Open(filepath.Join(t.TempDir(), "plain.db"), nil)
	defer plain.Close()
	plain.Add(ctx, &knowledge.Doc{Source: "a.md", Format: "markdown", Text: "# Thermometer\nRead the thermometer probe.\n"})
	if h, _ := plain.Search(ctx, &knowledge.Query{Text: "temperature"}); len(h) != 0 {
		t.Errorf("BM25 alone found %v", h)
	}
	if emb.calls.Load() != 2 {
		t.Errorf("%d Embed calls; want one batch for the chunks and one for the query", emb.calls.Load())
	}
}

func TestSeeAlso(t *testing.T) {
	got := strings.Join(sqlite.SeeAlso("Body.\nSee also: ode45, ode23s,\n odeset.\n\nNext para mentions see also nothing"), " ")
	if got != "ode45 ode23s odeset nothing" {
		t.Errorf("SeeAlso = %q", got)
	}
}

func TestReplace(t *testing.T) {
	ix, err := sqlite.Open(filepath.Join(t.TempDir(), "docs.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	doc := func(name string) *knowledge.Doc {
		return &knowledge.Doc{Source: "octave:" + name, Title: name, Format: "help", Text: name + " computes things."}
	}
	if err := ix.Add(ctx, doc("oldfn"), doc("keep"), &knowledge.Doc{Source: "notes.md", Format: "text", Text: "computes"}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Replace(ctx, "octave:", doc("keep"), doc("newfn")); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, &knowledge.Query{Text: "computes", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Source)
	}
	slices.Sort(got)
	if strings.Join(got, " ") != "notes.md octave:keep octave:newfn" {
		t.Errorf("after Replace: %v", got)
	}
	if err := ix.Replace(ctx, ""); err == nil {
		t.Error("Replace with an empty prefix would empty the index")
	}
}

func TestSeeAlsoNumpy(t *testing.T) {
	got := strings.Join(sqlite.SeeAlso("Returns x.\n\nSee Also\n--------\nscipy.linalg.lstsq : Similar function in SciPy.\npinv, solve\n\nNotes\n-----\nMore."), " ")
	if got != "scipy.linalg.lstsq pinv solve" {
		t.Errorf("SeeAlso = %q", got)
	}
}

// TestNonCompound: "non-stiff" is indexed as one word, so "stiff" does not find it, and
// replacing the document removes that word from the index.
func TestNonCompound(t *testing.T) {
	ix, err := sqlite.Open(filepath.Join(t.TempDir(), "docs.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	search := func(q string) (got []string) {
		t.Helper()
		hits, err := ix.Search(ctx, &knowledge.Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			got = append(got, h.Name)
		}
		return got
	}
	doc := func(name, text string) *knowledge.Doc {
		return &knowledge.Doc{Source: "octave:" + name, Title: name, Format: "help", Text: text}
	}
	if err := ix.Add(ctx, doc("stiffsolver", "Solve a stiff problem."), doc("explicit", "Solve a non-stiff problem.")); err != nil {
		t.Fatal(err)
	}
	if got := search("stiff"); !slices.Equal(got, []string{"stiffsolver"}) {
		t.Errorf("stiff: %v, want [stiffsolver]", got)
	}
	if got := search("non-stiff"); len(got) == 0 || got[0] != "explicit" {
		t.Errorf("non-stiff: %v, want explicit first", got)
	}
	if err := ix.Add(ctx, doc("explicit", "Solve an ordinary problem.")); err != nil {
		t.Fatal(err)
	}
	if got := search("nonstiff"); len(got) != 0 {
		t.Errorf("nonstiff after replacing its only document: %v", got)
	}
}

// TestOldIndex: an index written before the schema had a version is refused with a message
// saying to index again, and left as it was.
func TestOldIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.db")
	db, err := sqlitefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE chunks (id INTEGER PRIMARY KEY, source TEXT NOT NULL, name TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ix, err := sqlite.Open(path, nil)
	if err == nil {
		ix.Close()
		t.Fatal("opened an index of schema version 0")
	}
	if !errors.Is(err, sqlite.ErrOldIndex) || !strings.Contains(err.Error(), "labmate docs index") {
		t.Errorf("error %q does not say to index again", err)
	}
	// A new index is stamped with its version and opens again.
	fresh := filepath.Join(t.TempDir(), "new.db")
	for range 2 {
		ix, err := sqlite.Open(fresh, nil)
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
	}
}
