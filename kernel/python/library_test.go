package python_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/protocol"
)

// Options.Library's python/ packages and modules are importable from every cell, and only
// those: the octave/ part and a kernel started without a library offer nothing.
func TestLibrary(t *testing.T) {
	ctx := context.Background()
	cell := &kernel.Cell{Code: `from labmate_pkg.twice import twice
import importlib.util
print(twice(21), importlib.util.find_spec("labmate_oct"))`, Timeout: time.Minute}
	opts := testutil.KernelOptions(t)
	opts.Library = fstest.MapFS{
		"python/labmate_pkg/__init__.py": {Data: []byte("")},
		"python/labmate_pkg/twice.py":    {Data: []byte("def twice(x):\n    return 2 * x\n")},
		"octave/labmate_oct.py":          {Data: []byte("")},
	}
	k, err := python.Start(ctx, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if r := kerneltest.Exec(ctx, k, cell); r.Res == nil || r.Res.Status != protocol.StatusOK || strings.Join(r.Stdout, ",") != "42 None" {
		t.Fatalf("with the library: %+v\n%q", r.Res, r.Output())
	}

	opts.Library = nil
	bare, err := python.Start(ctx, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if r := kerneltest.Exec(ctx, bare, cell); r.Res == nil || r.Res.Status != protocol.StatusError || !strings.Contains(r.Output(), "labmate_pkg") {
		t.Fatalf("without a library labmate_pkg is not importable: %+v\n%s", r.Res, r.Output())
	}
}
