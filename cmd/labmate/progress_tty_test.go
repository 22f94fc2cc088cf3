package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// onTerminal runs labmate with its stderr on a pseudo-terminal (stdout to a buffer) and
// returns what the terminal showed, the longest silence on it from the start to the exit, how
// long the first output took, and the exit status.
func onTerminal(t *testing.T, dir string, args ...string) (shown string, longest, first time.Duration, code int) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals here:", err)
	}
	defer ptm.Close()
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals here:", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Stderr = dir, pts
	var out strings.Builder
	cmd.Stdout = &out
	type chunk struct {
		at   time.Time
		text string
	}
	chunks := make(chan chunk, 1024)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	go func() {
		defer close(chunks)
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				chunks <- chunk{time.Now(), string(buf[:n])}
			}
			if err != nil {
				return
			}
		}
	}()
	werr := cmd.Wait()
	end := time.Now()
	var b strings.Builder
	last := start
	for c := range chunks {
		if c.at.After(end) {
			c.at = end
		}
		if first == 0 {
			first = c.at.Sub(start)
		}
		longest = max(longest, c.at.Sub(last))
		last = c.at
		b.WriteString(c.text)
	}
	longest = max(longest, end.Sub(last))
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
	} else if werr != nil {
		t.Fatal(werr)
	}
	return b.String(), longest, first, code
}

// TestProgressOnTerminal: the commands that take longer than 2 s say so on a terminal at
// once and keep saying it: docs index --octave (10–20 s) and eval materials (a scan takes
// seconds to minutes) are never silent for more than a few seconds.
func TestProgressOnTerminal(t *testing.T) {
	for _, c := range []struct {
		name  string
		needs string
		args  func(dir string) []string
		want  []string
	}{
		{"docs index --octave", "octave-cli", func(dir string) []string {
			return []string{"docs", "index", "--store", filepath.Join(dir, "docs.db"), "--octave"}
		}, []string{"harvesting the help of the installed Octave", "indexed octave: "}},
		{"eval materials", "lmp", func(string) []string {
			return []string{"eval", "materials", "--elements", "Cu", "--methods", "lammps"}
		}, []string{"labmate eval materials: 1 scan (lammps Cu)", "0 of 1 done… ", "[1/1] lammps Cu: a0 3.6"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			needs(t, c.needs)
			dir := t.TempDir()
			shown, longest, first, code := onTerminal(t, dir, c.args(dir)...)
			t.Logf("first output after %v, longest silence %v", first.Round(time.Millisecond), longest.Round(time.Millisecond))
			if code != 0 {
				t.Fatalf("exit %d; the terminal showed:\n%s", code, shown)
			}
			for _, want := range c.want {
				if !strings.Contains(shown, want) {
					t.Errorf("the terminal lacks %q:\n%q", want, shown)
				}
			}
			// The status redraws every second; a loaded machine gets some slack.
			if first > 2*time.Second || longest > 3*time.Second {
				t.Errorf("first output after %v, a silence of %v: want progress at once and at least every 2 s (3 s under load)\n%q", first, longest, shown)
			}
		})
	}
}

// needs skips t when program is not installed.
func needs(t *testing.T, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		t.Skipf("%s is not installed", program)
	}
}
