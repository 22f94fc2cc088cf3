package python_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/protocol"
)

func TestSnapshots(t *testing.T) {
	kerneltest.Snapshots(t, kerneltest.SnapLang{
		Lang: lang,
		Set: `import numpy as np
from collections import OrderedDict
x = np.arange(12.0).reshape(3, 4)
big = np.linspace(0, 1, 300_000)  # 2.4 MB: read into anonymous memory
xt = x.T  # not contiguous: pickled in-band
d = {"k": [1, 2.5, "s"], "arr": np.eye(2)}
od = OrderedDict(a=1)
n, s, b = 7, "text", b"\x00\x01"
f = lambda v: v + 1
fh = open("notes.txt", "w")
g = (i for i in range(3))
def defined_in_cell():
    return 1
`,
		Saved: []string{"np", "OrderedDict", "x", "big", "xt", "d", "od", "n", "s", "b"},
		Skipped: map[string]string{
			"f":               "PicklingError",
			"fh":              "cannot pickle '_io.TextIOWrapper' object",
			"g":               "cannot pickle 'generator' object",
			"defined_in_cell": "PicklingError",
		},
		Check: `ok = (np.array_equal(x, np.arange(12.0).reshape(3, 4)) and np.array_equal(xt, x.T) and
      d["k"] == [1, 2.5, "s"] and np.array_equal(d["arr"], np.eye(2)) and list(od) == ["a"] and
      (n, s, b) == (7, "text", b"\x00\x01") and np.array_equal(big, np.linspace(0, 1, 300_000)))
x[0, 0] = big[0] = 5.0  # restored arrays can be written
print("OK" if ok else "WRONG")`,
	}, testutil.KernelOptions(t))
}

// BenchmarkSnapshot saves and restores a 100 MiB workspace (a 100 MiB numpy array, a dict of
// 10,000 strings, a 100×100 matrix and a lambda that is skipped); Cell is the round trip of a
// trivial cell in the same session, the baseline; SaveSmall saves a workspace of a few small
// variables, what the agent adds to a typical operation.
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	start := func(b *testing.B, code string) (kernel.Kernel, kernel.Snapshotter, string) {
		opts := testutil.KernelOptions(b)
		opts.Workspace = b.TempDir()
		k, err := python.Start(ctx, &opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { k.Close() })
		exec(b, k, code)
		return k, k.(kernel.Snapshotter), filepath.Join(opts.Workspace, ".labmate", "state", "python")
	}
	k, s, dir := start(b, `import numpy as np
big = np.random.default_rng(1).random(100 * 2**20 // 8)
words = {i: str(i) * 3 for i in range(10000)}
m = np.eye(100)
f = lambda v: v`)
	b.Run("Cell", func(b *testing.B) {
		for b.Loop() {
			exec(b, k, "x = 1")
		}
	})
	b.Run("SaveSmall", func(b *testing.B) {
		_, small, dir := start(b, "import numpy as np\na, b = 1.5, np.linspace(0, 1, 100)\nparams = {'kp': 2.0, 'ki': 0.5}")
		for b.Loop() {
			if _, err := small.Save(ctx, dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Save", func(b *testing.B) {
		for b.Loop() {
			snap, err := s.Save(ctx, dir)
			if err != nil || len(snap.Skipped) != 1 {
				b.Fatalf("%v %+v", err, snap)
			}
			b.SetBytes(snap.Size)
		}
	})
	b.Run("Restore", func(b *testing.B) {
		for b.Loop() {
			snap, err := s.Restore(ctx, dir)
			if err != nil || !slices.Contains(snap.Saved, "big") || len(snap.Skipped) != 1 {
				b.Fatalf("%v %+v", err, snap)
			}
			b.SetBytes(snap.Size)
		}
	})
}

func exec(b *testing.B, k kernel.Kernel, code string) {
	b.Helper()
	if r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: code}); r.Err != nil || r.Res.Status != protocol.StatusOK {
		b.Fatalf("%v %+v\n%s", r.Err, r.Res, r.Output())
	}
}
