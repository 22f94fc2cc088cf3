// Package textcut cuts text for prompts, logs and stored evidence without splitting a UTF-8
// sequence.
package textcut

import (
	"strings"
	"unicode/utf8"
)

// Head is s cut to n bytes (on a rune boundary) with "…" when cut.
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// FirstLine is s up to its first newline.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
