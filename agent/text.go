package agent

import (
	"github.com/labmate/labmate/internal/textcut"
)

// head is s cut to n bytes (on a rune boundary) with "…" when cut.
func head(s string, n int) string { return textcut.Head(s, n) }

// headTail keeps the first and last lines and bytes of s (textcut.HeadTail).
func headTail(s string, keep, maxBytes int) string { return textcut.HeadTail(s, keep, maxBytes) }
