package python_test

import (
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel/kerneltest"
)

func TestSnapshots(t *testing.T) {
	kerneltest.Snapshots(t, kerneltest.SnapLang{
		Lang: lang,
		Set: `import numpy as np
from collections import OrderedDict
x = np.arange(12.0).reshape(3, 4)
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
		Saved: []string{"np", "OrderedDict", "x", "xt", "d", "od", "n", "s", "b"},
		Skipped: map[string]string{
			"f":               "PicklingError",
			"fh":              "cannot pickle '_io.TextIOWrapper' object",
			"g":               "cannot pickle 'generator' object",
			"defined_in_cell": "PicklingError",
		},
		Check: `ok = (np.array_equal(x, np.arange(12.0).reshape(3, 4)) and np.array_equal(xt, x.T) and
      d["k"] == [1, 2.5, "s"] and np.array_equal(d["arr"], np.eye(2)) and list(od) == ["a"] and
      (n, s, b) == (7, "text", b"\x00\x01") and x.flags.writeable)
x[0, 0] = 5.0  # a restored array can be written
print("OK" if ok else "WRONG")`,
	}, testutil.KernelOptions(t))
}
