package shell_test

import (
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/shell"
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
