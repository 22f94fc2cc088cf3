// Package textcut cuts text for prompts, logs and stored evidence without splitting a UTF-8
// sequence.
package textcut

import (
	"fmt"
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

// HeadTail keeps the first and last lines of s when it has more than 2*keep lines, and its
// first and last bytes when it is longer than maxBytes, with a marker saying what was cut.
// Long texts cost tokens on every later call; their beginning (set-up, first values) and end
// (the error, the last values) carry nearly all the evidence.
func HeadTail(s string, keep, maxBytes int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 2*keep {
		cut := len(lines) - 2*keep
		lines = append(append(lines[:keep:keep], fmt.Sprintf("[… %d lines elided …]", cut)), lines[len(lines)-keep:]...)
		s = strings.Join(lines, "\n")
	}
	if len(s) > maxBytes {
		h, t := maxBytes/2, maxBytes/2
		for h > 0 && !utf8.RuneStart(s[h]) {
			h--
		}
		start := len(s) - t
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
		s = s[:h] + fmt.Sprintf("\n[… %d bytes elided …]\n", start-h) + s[start:]
	}
	return s
}
