// Package textcut cuts text for prompts, logs and stored evidence without splitting a UTF-8
// sequence.
package textcut

import "unicode/utf8"

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
