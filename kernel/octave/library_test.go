package octave_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/protocol"
)

// Options.Library's octave/ functions are callable from every cell, and only those: the
// python/ part and a kernel started without a library offer nothing.
func TestLibrary(t *testing.T) {
	ctx := context.Background()
	cell := &kernel.Cell{Code: `disp (labmate_twice (21)); disp (exist ("labmate_py"))`, Timeout: time.Minute}
	opts := testutil.KernelOptions(t)
	opts.Library = fstest.MapFS{
		"octave/labmate_twice.m": {Data: []byte("function y = labmate_twice (x)\n  y = 2 * x;\nend\n")},
		"python/labmate_py.m":    {Data: []byte("function labmate_py ()\nend\n")},
	}
	k, err := octave.Start(ctx, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if r := kerneltest.Exec(ctx, k, cell); r.Res == nil || r.Res.Status != protocol.StatusOK || strings.Join(r.Stdout, ",") != "42,0" {
		t.Fatalf("with the library: %+v\n%s", r.Res, r.Output())
	}

	opts.Library = nil
	bare, err := octave.Start(ctx, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if r := kerneltest.Exec(ctx, bare, cell); r.Res == nil || r.Res.Status != protocol.StatusError || !strings.Contains(r.Output(), "labmate_twice") {
		t.Fatalf("without a library labmate_twice is undefined: %+v\n%s", r.Res, r.Output())
	}
}
