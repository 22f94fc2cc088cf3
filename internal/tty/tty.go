// Package tty is what labmate knows about terminals: whether a writer is one, and a writer
// that keeps what sandboxed code printed from acting on it.
package tty

import (
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether w is a terminal, or a Safe writer on one (a file or a pipe is
// not).
func IsTerminal(w io.Writer) bool {
	f, ok := Raw(w).(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Safe returns w itself unless w is a terminal; on a terminal, a writer through which text
// that labmate did not write — a cell's or a job's output, a model's answer — cannot command
// the terminal: control characters other than newline and tab (ESC, carriage return,
// backspace, bell, the C1 controls) are shown in caret or \u notation, so an escape sequence
// cannot set the clipboard (OSC 52), retitle the window, move the cursor to rewrite what was
// printed above, or make the terminal answer a query as if typed. Colours (SGR sequences,
// `ESC [ … m`) pass as they are: they only paint. Bytes that are not UTF-8 are shown as \xNN.
// Each Write is judged alone: a sequence split across two writes is shown, not obeyed.
func Safe(w io.Writer) io.Writer {
	if !IsTerminal(w) {
		return w
	}
	return safe{w}
}

type safe struct{ w io.Writer }

// Raw is the terminal under a Safe writer, for what labmate draws itself (a progress bar
// redrawn with carriage returns); any other writer as it is.
func Raw(w io.Writer) io.Writer {
	if s, ok := w.(safe); ok {
		return s.w
	}
	return w
}

func (s safe) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\n' || c == '\t' || c >= 0x20 && c < 0x7f:
			out = append(out, c)
			i++
		case c == 0x1b:
			if n := sgr(p[i:]); n > 0 {
				out = append(out, p[i:i+n]...)
				i += n
				continue
			}
			out = append(out, '^', '[')
			i++
		case c < 0x20 || c == 0x7f:
			out = append(out, '^', c^0x40)
			i++
		default:
			r, n := utf8.DecodeRune(p[i:])
			switch {
			case r == utf8.RuneError && n <= 1:
				out = append(out, `\x`...)
				out = strconv.AppendUint(out, uint64(c)>>4, 16)
				out = strconv.AppendUint(out, uint64(c)&0xf, 16)
				n = 1
			case r >= 0x80 && r < 0xa0:
				out = append(out, `\u00`...)
				out = strconv.AppendUint(out, uint64(r), 16)
			default:
				out = append(out, p[i:i+n]...)
			}
			i += n
		}
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// sgr is the length of the colour sequence `ESC [ digits and semicolons m` at the start of p,
// 0 if p does not start with one.
func sgr(p []byte) int {
	if len(p) < 3 || p[1] != '[' {
		return 0
	}
	for i := 2; i < len(p) && i < 64; i++ {
		switch c := p[i]; {
		case c == 'm':
			return i + 1
		case c != ';' && (c < '0' || c > '9'):
			return 0
		}
	}
	return 0
}
