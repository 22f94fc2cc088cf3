package octave_test

import (
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/octave"
)

var lang = kerneltest.Lang{
	Start:  octave.Start,
	SetA:   "a = 42;",
	PrintA: "disp(a)",
	Loop:   "k = 0;\nwhile true\n  k = k + 1;\nend",
	PrintK: "disp(k)",
	Ticks:  "for i = 1:5\n  printf(\"tick %d\\n\", i);\n  pause(0.1);\nend",
	Count:  "printf(\"%%d\\n\", 1:%d);",
	Log:    "labmate_log(\"energy\", 2.5);",
	Errors: []kerneltest.ErrorCell{
		{Name: "undefined", Code: "x = 1;\ny = undefined_function_xyz(2);", Want: "'undefined_function_xyz' undefined", Line: 2},
		{Name: "syntax", Code: "a = 1;\nb = (2 + ;\nc = 3;", Want: "parse error near line 2", Line: 2},
		{Name: "nonconformant", Code: "u = [1 2 3];\nv = u * [4 5 6];", Want: "nonconformant arguments", Line: 2},
		{Name: "unterminated", Code: "for i = 1:3\n  x = i;\n", Want: "parse error"},
		{Name: "inFunction", Code: "function r = half(x)\n  r = x / undefined_q;\nend\nhalf(2)", Want: "'undefined_q' undefined", Line: 2},
		{Name: "errorCall", Code: "error(\"mylab:bad\", \"flux %d too high\", 7);", Want: "flux 7 too high", Line: 1},
	},
	Connect:   "[s, ok] = urlread(sprintf(\"http://127.0.0.1:%d/\"));\nif ok\n  disp(\"CONNECTED\")\nelse\n  disp(\"BLOCKED\")\nend",
	WriteFile: "fid = fopen(\"%s\", \"w\");\nif fid < 0\n  disp(\"BLOCKED\")\nelse\n  fprintf(fid, \"x\"); fclose(fid); disp(\"WROTE\")\nend",
	BigAlloc:  "try\n  x = zeros(1.25e9, 1);\n  disp(\"ALLOCATED\")\ncatch err\n  disp(\"RECOVERED\")\nend",
	Flood:     "s = repmat('x', 1, 1023);\nfor i = 1:1048576\n  disp(s);\nend",
}

func TestKernel(t *testing.T) { kerneltest.Run(t, lang, testutil.KernelOptions(t)) }

func BenchmarkKernel(b *testing.B) {
	kerneltest.Bench(b, kerneltest.BenchLang{
		Lang:      lang,
		Trivial:   "x = 1;",
		Stamps:    "for i = 1:%d\n  printf(\"%%.6f\\n\", time());\n  pause(0.001);\nend",
		BareArgv:  []string{octave.Binary, "--no-gui", "--quiet", "--norc", "--no-history", "--interactive", "--no-line-editing"},
		BareSetup: "PS1(\"\"); PS2(\"\"); more off;",
		BareCell:  "x = 1; disp(\"BARE_DONE\")",
	}, testutil.KernelOptions(b))
}
