package shell_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/shell"
	"github.com/labmate/labmate/protocol"
)

var lang = kerneltest.Lang{
	Start:  shell.Start,
	SetA:   "a=42",
	PrintA: "echo $a",
	Loop:   "k=0\nwhile true; do k=$((k+1)); done",
	PrintK: "echo $k",
	Ticks:  "for i in 1 2 3 4 5; do echo tick $i; sleep 0.1; done",
	Count:  "seq 1 %d",
	Log:    "labmate_log energy 2.5",
	Errors: []kerneltest.ErrorCell{
		{Name: "notFound", Code: "x=1\nnonexistent_command_xyz", Want: "nonexistent_command_xyz: command not found"},
		{Name: "unterminated", Code: "for i in 1 2; do\n  echo $i\n", Want: "syntax error"},
		{Name: "failingLast", Code: "ls /nonexistent-dir-xyz", Want: "No such file or directory"},
	},
	Connect:   "if (exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null; then echo CONNECTED; else echo BLOCKED; fi",
	WriteFile: "if (echo x > %q) 2>/dev/null; then echo WROTE; else echo BLOCKED; fi",
	ForkBomb:  "bomb() { bomb | bomb & }\nbomb\nwait",
	Flood:     "yes \"$(printf 'x%.0s' $(seq 1 1023))\" | head -c 1073741824",
}

func TestKernel(t *testing.T) { kerneltest.Run(t, lang, testutil.KernelOptions(t)) }

func BenchmarkKernel(b *testing.B) {
	kerneltest.Bench(b, kerneltest.BenchLang{
		Lang:      lang,
		Trivial:   "x=1",
		Stamps:    "for ((i = 0; i < %d; i++)); do echo $EPOCHREALTIME; sleep 0.001; done",
		BareArgv:  []string{shell.Binary, "--norc", "--noprofile"},
		BareSetup: "",
		BareCell:  "x=1; echo BARE_DONE",
	}, testutil.KernelOptions(b))
}

// TestLineBuffered: a program that writes to the kernel's pipe through C stdio (sed here,
// LAMMPS' thermo table in real use) delivers each line as it is written, not in 4 KiB blocks
// at its exit.
func TestLineBuffered(t *testing.T) {
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	k, err := shell.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "for i in 1 2 3; do echo $i; sleep 0.4; done | sed 's/^/line /'"})
	if r.Err != nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("%v %+v", r.Err, r.Res)
	}
	var first, last time.Time
	for _, o := range r.Obs {
		if o.Kind == protocol.ObsStdout && strings.HasPrefix(o.Line, "line ") {
			if first.IsZero() {
				first = o.Time
			}
			last = o.Time
		}
	}
	if gap := last.Sub(first); gap < 500*time.Millisecond {
		t.Errorf("the three lines arrived within %v of each other: sed's output was held in a block", gap)
	}
}
