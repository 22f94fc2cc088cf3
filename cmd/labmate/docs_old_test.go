package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/internal/sqlitefile"
)

// An index an earlier labmate built does not stop labmate serve: it is moved aside, said so,
// and the server starts with an empty index.
func TestServeOldDocsIndex(t *testing.T) {
	data := t.TempDir()
	path := filepath.Join(data, "docs.db")
	db, err := sqlitefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE chunks (id INTEGER PRIMARY KEY, source TEXT NOT NULL, name TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	t.Setenv("LABMATE_DOCS_DB", "")
	_, url := serve(t, data, "--no-token")
	healthy(t, url)
	if _, err := os.Stat(path + ".old"); err != nil {
		t.Errorf("the old index was not kept aside: %v", err)
	}
	_, errOut, code := labmate(t, t.TempDir(), "", "docs", "search", "--store", path+".old", "ode")
	if code != 2 || !strings.Contains(errOut, "index the documents again") {
		t.Errorf("docs search of the old index: exit %d, %s", code, errOut)
	}
}
