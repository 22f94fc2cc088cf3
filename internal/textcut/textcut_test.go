package textcut

import (
	"testing"
	"unicode/utf8"
)

func TestHead(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"a3.597 Å", 7, "a3.597 …"}, // Å is two bytes: the cut backs off to its start
		{"ÅÅ", 1, "…"},
	} {
		got := Head(c.s, c.n)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("Head(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
