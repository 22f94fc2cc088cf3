package python_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/protocol"
)

// TestScience runs what scripts/deps installs for Python in the sandbox: a matplotlib plot
// written as PNG with the Agg backend, and sympy, pandas and ASE (building a crystal).
func TestScience(t *testing.T) {
	k, ws := start(t, nil)
	code := `import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
x = np.linspace(0, 2 * np.pi, 200)
fig, ax = plt.subplots()
ax.plot(x, np.sin(x)); ax.set_title("sin"); ax.set_xlabel("x")
fig.savefig("sin.png", dpi=100)
import sympy, pandas, ase.build
s = sympy.Symbol("s")
print("sympy", sympy.diff(sympy.sin(s) ** 2, s))
print("pandas", pandas.DataFrame({"a": [1, 2, 3]})["a"].sum())
si = ase.build.bulk("Si", "diamond", a=5.43)
print("ase", len(si), round(si.get_volume(), 3))
`
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: code, Timeout: time.Minute})
	if r.Err != nil || r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("%v %+v\n%s", r.Err, r.Res, r.Output())
	}
	if len(r.Stderr) > 0 {
		t.Errorf("stderr:\n%s", strings.Join(r.Stderr, "\n"))
	}
	// The diamond primitive cell holds 2 atoms in a^3/4.
	want := "sympy 2*sin(s)*cos(s)\npandas 6\nase 2 40.026"
	if got := strings.Join(r.Stdout, "\n"); got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(ws, "sin.png"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 24 || string(b[:8]) != "\x89PNG\r\n\x1a\n" || string(b[12:16]) != "IHDR" {
		t.Fatalf("sin.png is not a PNG (%d bytes)", len(b))
	}
	if w, h := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24]); w != 640 || h != 480 || len(b) < 5000 {
		t.Errorf("sin.png: %dx%d, %d bytes; want matplotlib's 640x480 at 100 dpi", w, h, len(b))
	}
}
