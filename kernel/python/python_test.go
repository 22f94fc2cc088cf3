package python_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/python"
)

var lang = kerneltest.Lang{
	Start:  python.Start,
	SetA:   "a = 42",
	PrintA: "print(a)",
	Loop:   "k = 0\nwhile True:\n    k += 1",
	PrintK: "print(k)",
	Ticks:  "import time\nfor i in range(1, 6):\n    print('tick', i)\n    time.sleep(0.1)",
	Count:  "for i in range(1, %d + 1):\n    print(i)",
	Log:    "labmate.log('energy', 2.5)",
	Errors: []kerneltest.ErrorCell{
		{Name: "name", Code: "x = 1\ny = undefined_name + 1", Want: "NameError: name 'undefined_name' is not defined", Line: 2},
		{Name: "syntax", Code: "a = 1\nb = (2 +\nc = 3", Want: "SyntaxError", Line: 2},
		{Name: "unterminated", Code: "for i in range(3):\n", Want: "IndentationError"},
		{Name: "inFunction", Code: "def f(x):\n    return x / 0\n\nf(1)", Want: "ZeroDivisionError: division by zero", Line: 2},
		{Name: "numpyShapes", Code: "import numpy as np\nnp.ones(3) @ np.ones(4)", Want: "ValueError", Line: 2},
		{Name: "systemExit", Code: "import sys\nsys.exit(3)", Want: "SystemExit: 3", Line: 2},
	},
	Connect:   "import socket\ntry:\n    socket.create_connection(('127.0.0.1', %d), timeout=2).close()\n    print('CONNECTED')\nexcept OSError:\n    print('BLOCKED')",
	WriteFile: "try:\n    open(%q, 'w').write('x')\n    print('WROTE')\nexcept OSError:\n    print('BLOCKED')",
	BigAlloc:  "try:\n    b = bytearray(10 * 2**30)\n    print('ALLOCATED')\nexcept MemoryError:\n    print('RECOVERED')",
	ForkBomb:  "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
	Flood:     "import sys\nline = 'x' * 1023 + '\\n'\nfor _ in range(1 << 20):\n    sys.stdout.write(line)",
}

// startKernel starts a Python kernel as the suite does, in a fresh workspace (returned),
// closed when the test ends.
func startKernel(t *testing.T) (kernel.Kernel, string) {
	t.Helper()
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	k, err := python.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k, opts.Workspace
}

func TestKernel(t *testing.T) { kerneltest.Run(t, lang, testutil.KernelOptions(t)) }

func BenchmarkKernel(b *testing.B) {
	kerneltest.Bench(b, kerneltest.BenchLang{
		Lang:      lang,
		Trivial:   "x = 1",
		Stamps:    "import time\nfor _ in range(%d):\n    print('%%.6f' %% time.time())\n    time.sleep(0.001)",
		BareArgv:  []string{python.Binary, "-u", "-i", "-q"},
		BareSetup: "import sys; sys.ps1 = sys.ps2 = ''",
		BareCell:  "x = 1; print('BARE_DONE')",
	}, testutil.KernelOptions(b))
}

func TestWarningsRepeatAcrossCells(t *testing.T) {
	k, _ := startKernel(t)
	for i := 0; i < 2; i++ {
		r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "import numpy as np\nnp.float64(1e308) * 10"})
		if !strings.Contains(strings.Join(r.Stderr, "\n"), "RuntimeWarning: overflow") {
			t.Errorf("cell %d: the overflow warning was not shown:\n%s", i+1, r.Output())
		}
	}
}

// A cell is the main program (__name__ is "__main__"), but an Opentrons protocol's cell, the
// one lab/benchrun ends with labmate._run_protocol(), is not, as on the robot; the next cell is
// the main program again.
func TestMainName(t *testing.T) {
	k, _ := startKernel(t)
	for i, tc := range []struct{ code, want string }{
		{"print('name', __name__)", "name __main__"},
		{"print('name', __name__)\n__import__('labmate')._run_protocol()", "name builtins"},
		{"print('name', __name__)", "name __main__"},
	} {
		r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: tc.code})
		if r.Err != nil || !slices.Contains(r.Stdout, tc.want) {
			t.Errorf("cell %d: %v, want %q in:\n%s", i+1, r.Err, tc.want, r.Output())
		}
	}
}
