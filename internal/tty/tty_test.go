package tty_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/internal/tty"
)

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if tty.IsTerminal(f) || tty.IsTerminal(&bytes.Buffer{}) {
		t.Error("a file or a buffer is taken for a terminal")
	}
	if tty.Safe(f) != f {
		t.Error("a file is not written as it is")
	}
	term, _ := testutil.Pty(t)
	if !tty.IsTerminal(term) || !tty.IsTerminal(tty.Safe(term)) || tty.Raw(tty.Safe(term)) != term {
		t.Error("a pseudo-terminal, or a Safe writer on it, is not taken for one")
	}
}

// TestSafe: on a terminal, text others wrote cannot command it — set the clipboard (OSC 52),
// move the cursor up to rewrite a line, ring, answer a query — but its colours pass, and so
// does UTF-8 text.
func TestSafe(t *testing.T) {
	term, screen := testutil.Pty(t)
	w := tty.Safe(term)
	evil := "result = 42\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2A\x1b[2K\rall tests passed \x1b[31mred\x1b[0m Å ±\u009b6n \xff\n"
	if n, err := w.Write([]byte(evil)); err != nil || n != len(evil) {
		t.Fatalf("Write = %d, %v; want %d", n, err, len(evil))
	}
	want := `result = 42^[]52;c;cm0gLXJmIH4K^G^[[2A^[[2K^Mall tests passed ` + "\x1b[31mred\x1b[0m Å ±" + `\u009b6n \xff` + "\n"
	screen.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4096)
	n, _ := screen.Read(buf)
	if got := string(buf[:n]); got != want {
		t.Errorf("the terminal was sent\n%q\nwant\n%q", got, want)
	}
}
