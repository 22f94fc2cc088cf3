package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
)

// TestTerminalEscapes: a cell prints terminal control sequences — OSC 52 to set the
// operator's clipboard, a cursor move up to rewrite what was printed above, a query the
// terminal would answer as if typed — on stdout and stderr. labmate exec, on a terminal, shows
// them and does not send them; its colours pass.
func TestTerminalEscapes(t *testing.T) {
	term, screen := testutil.Pty(t)
	cell := write(t, t.TempDir(), "evil.sh", `printf 'result = 42\033]52;c;cm0gLXJmIH4K\a\033[2A\033[2Kall tests passed \033[32mgreen\033[0m\n'
printf 'warning\033[6n\033]0;owned\a\n' >&2
`)
	cmd := exec.Command(bin, "exec", "--workspace", t.TempDir(), cell)
	cmd.Stdout, cmd.Stderr = term, term
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			screen.SetReadDeadline(time.Now().Add(60 * time.Second))
			n, err := screen.Read(buf)
			seen.Write(buf[:n])
			if err != nil || strings.Contains(seen.String(), "labmate: ok") {
				return
			}
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("labmate exec: %v\n%q", err, seen.String())
	}
	term.Close()
	<-read
	io.Copy(io.Discard, screen)
	got := seen.String()
	if i := strings.IndexByte(strings.ReplaceAll(strings.ReplaceAll(got, "\x1b[32m", ""), "\x1b[0m", ""), 0x1b); i >= 0 || strings.ContainsRune(got, '\a') {
		t.Errorf("the terminal was sent the cell's escape sequences:\n%q", got)
	}
	for _, want := range []string{`result = 42^[]52;c;cm0gLXJmIH4K^G^[[2A^[[2Kall tests passed ` + "\x1b[32mgreen\x1b[0m", `warning^[[6n^[]0;owned^G`} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal does not show %q:\n%q", want, got)
		}
	}
}
