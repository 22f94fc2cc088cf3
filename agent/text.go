package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/labmate/labmate/internal/textcut"
)

// head is s cut to n bytes (on a rune boundary) with "…" when cut.
func head(s string, n int) string { return textcut.Head(s, n) }

// headTail keeps the first and last lines of s when it has more than 2*keep lines, and its
// first and last bytes when it is longer than maxBytes, with a marker saying what was cut.
// Long outputs cost tokens on every later call; their beginning (set-up, first values) and end
// (the error, the last values) carry nearly all the evidence.
func headTail(s string, keep, maxBytes int) string {
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

// lineBuf keeps the first and last lines of a stream of unbounded length, in bounded memory.
type lineBuf struct {
	keep  int
	first []string
	last  []string // ring
	next  int
	n     int
}

func (b *lineBuf) add(line string) {
	b.n++
	if len(b.first) < b.keep {
		b.first = append(b.first, line)
		return
	}
	if len(b.last) < b.keep {
		b.last = append(b.last, line)
		return
	}
	b.last[b.next] = line
	b.next = (b.next + 1) % b.keep
}

func (b *lineBuf) String() string {
	var sb strings.Builder
	for _, l := range b.first {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	if cut := b.n - len(b.first) - len(b.last); cut > 0 {
		fmt.Fprintf(&sb, "[… %d lines elided …]\n", cut)
	}
	for i := range b.last {
		sb.WriteString(b.last[(b.next+i)%len(b.last)])
		sb.WriteByte('\n')
	}
	return sb.String()
}
