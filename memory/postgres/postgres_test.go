package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/memorytest"
)

// dsn is the test server: LABMATE_TEST_POSTGRES when set (CI; then an unreachable server fails
// the tests), else a throw-away cluster started by scripts/postgres-test for this run.
var dsn string

func TestMain(m *testing.M) {
	dsn = os.Getenv("LABMATE_TEST_POSTGRES")
	var dir string
	if dsn == "" {
		out, err := exec.Command("../../scripts/postgres-test", "start").Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "memory/postgres: no test server (LABMATE_TEST_POSTGRES unset, scripts/postgres-test start: %v); skipping\n", err)
			os.Exit(0)
		}
		for line := range strings.Lines(string(out)) {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "LABMATE_TEST_POSTGRES="); ok {
				dsn = v
			}
			if v, ok := strings.CutPrefix(line, "PGTEST_DIR="); ok {
				dir = v
			}
		}
	}
	code := m.Run()
	if dir != "" {
		exec.Command("../../scripts/postgres-test", "stop", dir).Run()
	}
	os.Exit(code)
}

var schemas atomic.Int64

// open returns a store in a new, empty schema of the test server.
func open(t testing.TB, e memory.Embedder) *Store {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), schemas.Add(1))
	if _, err := db.ExecContext(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE; CREATE SCHEMA "+name); err != nil {
		t.Fatalf("PostgreSQL at %s: %v", dsn, err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	s, err := Open(context.Background(), u.String(), &Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store { return open(t, nil) })
}

// TestLongQueries: whole SciBench problems as queries find the entry with their rarest words
// (after ANALYZE, which tells which words are common, so that each word's rank is weighed by
// its rarity). Before that weighing, 14 of the 64 searches ranked first a distractor that
// shares more common words.
func TestLongQueries(t *testing.T) {
	memorytest.RunLongQueries(t, func(t *testing.T) memory.Store { return open(t, nil) }, func(s memory.Store) error {
		_, err := s.(*Store).DB().ExecContext(t.Context(), "ANALYZE entries")
		return err
	}, 0)
}

// TestMerge is the merge table: the same fact reworded is merged, a different number, unit,
// sign, polarity, comparison, material or version is kept.
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

func TestUnreachable(t *testing.T) {
	_, err := Open(t.Context(), "postgres://nobody:secret@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", nil)
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("unreachable server: %v", err)
	}
}

// TestCommonTerms: after ANALYZE, a word in thousands of entries is estimated as such, a rare
// word and a stop word as rare, and a query naming both still ranks the entry with the rare word
// first (the common word is left out of the ranking, not the search's answer).
func TestCommonTerms(t *testing.T) {
	ctx := t.Context()
	s := open(t, nil)
	var facts []*memory.Fact
	now := time.Now().UTC()
	add := func(text string) {
		facts = append(facts, &memory.Fact{ID: fmt.Sprintf("f%d", len(facts)), Namespace: "n", Kind: memory.KindObservation,
			Text: text, Status: memory.StatusActive, CreatedAt: now, UpdatedAt: now, ValidFrom: now})
	}
	for i := range 3000 {
		add(fmt.Sprintf("copper sample %d annealed", i))
	}
	add("copper whisker grew overnight")
	for i := 0; i < len(facts); i += 1000 {
		if _, err := s.Import(ctx, &memory.ImportParams{Facts: facts[i:min(i+1000, len(facts))], Actor: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().ExecContext(ctx, "ANALYZE entries"); err != nil {
		t.Fatal(err)
	}
	n, err := (&termDocs{}).docs(ctx, s.DB(), []string{"copper", "whisker", "the", "copper sample"})
	if err != nil {
		t.Fatal(err)
	}
	if n[0] < 2700 || n[0] > 3300 || n[1] > 10 || n[2] != 0 || n[3] < 2700 || n[3] > 3300 {
		t.Errorf("estimates for copper, whisker, the, \"copper sample\": %v, want about 3001, 1, 0, 3000", n)
	}
	var got []string
	for r, err := range s.Search(ctx, &memory.Query{Text: "copper whisker", Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Fact.Text)
	}
	if len(got) == 0 || got[0] != "copper whisker grew overnight" {
		t.Errorf("search copper whisker: %q", got)
	}
}
