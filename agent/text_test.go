package agent

import (
	"fmt"
	"strings"
	"testing"
)

func TestHeadTail(t *testing.T) {
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprint("line ", i))
	}
	got := headTail(strings.Join(lines, "\n"), 3, 10000)
	want := "line 0\nline 1\nline 2\n[… 94 lines elided …]\nline 97\nline 98\nline 99"
	if got != want {
		t.Errorf("headTail lines = %q, want %q", got, want)
	}
	long := strings.Repeat("é", 1000) // 2000 bytes
	got = headTail(long, 3, 100)
	if !strings.Contains(got, "bytes elided") || len(got) > 140 || !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "éé") {
		t.Errorf("headTail bytes = %q", got)
	}
	if s := "short\ntext"; headTail(s, 3, 100) != s {
		t.Errorf("headTail changed a short text")
	}
}
