package report_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/report"
	"golang.org/x/sys/unix"
)

// pty opens a pseudo-terminal: the terminal side, where labmate writes, and the side that
// reads what the terminal shows.
func pty(t *testing.T) (term, reader *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, m
}

// TestAttackTerminalEscapes: a job (any sandboxed code) prints terminal control sequences —
// OSC 52 sets the clipboard of the operator's terminal, others retitle it, move the cursor to
// rewrite what was printed above, or make it answer a query as if typed. labmate job logs, job
// status (a reason carries the last log line), labmate exec and session show print the
// sandbox's lines verbatim, so they reach the operator's terminal as commands.
func TestAttackTerminalEscapes(t *testing.T) {
	t.Skip("hole: job/report.Lines, protocol/report and agent/report write sandboxed output to a terminal verbatim (ESC, CSI, OSC, C1 controls): a cell's \\x1b]52;c;… sets the operator's clipboard when they read its log; a fix renders control characters visibly when the writer is a terminal, in every printer of sandboxed text")
	term, reader := pty(t)
	out := report.NewLines(term, false)
	evil := "result = 42\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2A\x1b[2Kall tests passed"
	if err := out.Line(&job.Line{Stream: "stdout", Text: evil}); err != nil {
		t.Fatal(err)
	}
	reader.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4096)
	n, _ := reader.Read(buf)
	if bytes.Contains(buf[:n], []byte{0x1b}) {
		t.Errorf("the terminal received the job's escape sequences: %q", buf[:n])
	}
}
