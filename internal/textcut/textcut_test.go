package textcut

import (
	"fmt"
	"strings"
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

func TestHeadTail(t *testing.T) {
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprint("line ", i))
	}
	got := HeadTail(strings.Join(lines, "\n"), 3, 10000)
	want := "line 0\nline 1\nline 2\n[… 94 lines elided …]\nline 97\nline 98\nline 99"
	if got != want {
		t.Errorf("headTail lines = %q, want %q", got, want)
	}
	long := strings.Repeat("é", 1000) // 2000 bytes
	got = HeadTail(long, 3, 100)
	if !strings.Contains(got, "bytes elided") || len(got) > 140 || !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "éé") {
		t.Errorf("headTail bytes = %q", got)
	}
	if s := "short\ntext"; HeadTail(s, 3, 100) != s {
		t.Errorf("headTail changed a short text")
	}
}
