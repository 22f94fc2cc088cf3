package octave_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/protocol"
)

// TestScience runs what scripts/deps installs for Octave in the sandbox: every packaged
// toolbox loads without a warning, the control package's step response (plotted and as data),
// and headless plots written as PNG the three usual ways.
func TestScience(t *testing.T) {
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	k, err := octave.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	cells := []struct {
		name, code, want string
	}{
		{"pkg load", "pkg load control signal optim statistics symbolic", ""},
		{"step plot", "pkg load control; step(tf(1,[1 2 1]))", ""},
		{"step data", `[y, tt] = step(tf(1,[1 2 1])); printf("%d %.3f\n", numel(y) > 50, y(end));`, "1 0.9"},
		{"symbolic", `syms x; disp(char(diff(sin(x)^2, x)))`, "2*sin(x)*cos(x)"},
		{"plots", `x = linspace(0, 2*pi, 200); plot(x, sin(x)); title("sin"); xlabel("x");
print -dpng plot_dpng.png
saveas(gcf, "plot_saveas.png");
figure; step(tf(4, [1 1.6 4])); print("-dpngcairo", "plot_step.png");`, ""},
	}
	for _, c := range cells {
		r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: c.code, Timeout: time.Minute})
		if r.Err != nil || r.Res == nil || r.Res.Status != protocol.StatusOK {
			t.Fatalf("%s: %v %+v\n%s", c.name, r.Err, r.Res, r.Output())
		}
		if len(r.Stderr) > 0 {
			t.Errorf("%s: stderr (a warning is a Warning verdict):\n%s", c.name, strings.Join(r.Stderr, "\n"))
		}
		out := strings.Join(r.Stdout, "\n")
		if c.want != "" && !strings.Contains(out, c.want) {
			t.Errorf("%s: stdout %q, want %q in it", c.name, out, c.want)
		}
		if c.want == "" && c.name != "symbolic" && strings.TrimSpace(out) != "" {
			// An invisible figure prints nothing; a visible one would be gnuplot's ASCII art.
			t.Errorf("%s: stdout %q, want none", c.name, out)
		}
	}
	for _, name := range []string{"plot_dpng.png", "plot_saveas.png", "plot_step.png"} {
		checkPNG(t, filepath.Join(opts.Workspace, name))
	}
}

// checkPNG checks the signature and the IHDR chunk of a PNG: a sane size and a plausible file.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if len(b) < 24 || string(b[:8]) != "\x89PNG\r\n\x1a\n" || string(b[12:16]) != "IHDR" {
		t.Errorf("%s: not a PNG (%d bytes: %q…)", path, len(b), b[:min(len(b), 16)])
		return
	}
	w, h := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24])
	if w < 300 || h < 200 || w > 4000 || h > 4000 || len(b) < 4000 {
		t.Errorf("%s: %dx%d, %d bytes: want a real plot", path, w, h, len(b))
	}
}
