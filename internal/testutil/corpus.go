package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// CorpusInput returns the input file that perception's corpus case name
// (perception/testdata/corpus/NAME.sh) writes with its first here-document (cat > FILE <<IN),
// with each of replace's old, new pairs applied: the real scientific inputs the corpus
// documents, reused by other packages' tests rather than copied.
func CorpusInput(t testing.TB, name string, replace ...string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(here), "..", "..", "perception", "testdata", "corpus", name+".sh")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("corpus input: %v", err)
	}
	s := string(b)
	start := strings.Index(s, "<<")
	if start < 0 {
		t.Fatalf("corpus input: %s has no here-document", path)
	}
	nl := strings.IndexByte(s[start:], '\n')
	word := strings.Trim(strings.TrimSpace(s[start+2:start+nl]), `'"`)
	body := s[start+nl+1:]
	end := strings.Index(body, "\n"+word+"\n")
	if end < 0 {
		t.Fatalf("corpus input: %s: the here-document has no end line %q", path, word)
	}
	in := body[:end+1]
	if len(replace)%2 != 0 {
		t.Fatalf("corpus input: replace takes old, new pairs")
	}
	for i := 0; i < len(replace); i += 2 {
		if !strings.Contains(in, replace[i]) {
			t.Fatalf("corpus input: %s has no %q to replace", name, replace[i])
		}
		in = strings.ReplaceAll(in, replace[i], replace[i+1])
	}
	return in
}
