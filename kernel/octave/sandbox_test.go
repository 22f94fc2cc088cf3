package octave_test

import (
	"context"
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
	"github.com/labmate/labmate/sandbox"
)

// TestInSandbox checks what Octave needs of the minimal sandbox: a user name and a HOME that
// are not the workspace, BLAS through /etc/alternatives, and Debian's packages (pkg load).
func TestInSandbox(t *testing.T) {
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	k, err := octave.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	code := `[~, user] = system("whoami"); printf("%s %s %d\n", getenv("HOME"), strtrim(user), getuid());
printf("%g\n", det(inv(magic(3)) * magic(3)));`
	want := []string{sandbox.Home + " " + sandbox.User + " 1000", "1"}
	if pkgs, _ := filepath.Glob("/usr/share/octave/packages/control-*"); len(pkgs) > 0 {
		code += "\npkg load control\nsys = feedback(tf(1, [1 2 1]), 1); [y, tt] = step(sys); printf(\"%.2f %.2f\\n\", dcgain(sys), y(end));"
		want = append(want, "0.50 0.50")
	} else {
		t.Log("octave-control is not installed: pkg load control not tried")
	}
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: code, Timeout: time.Minute})
	if r.Err != nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("%v %+v\n%s", r.Err, r.Res, r.Output())
	}
	if strings.Join(r.Stdout, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout %q; want %q\n%s", r.Stdout, want, r.Output())
	}
	entries, _ := os.ReadDir(opts.Workspace)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != ".labmate" { // labmate's own, made before the kernel
			t.Errorf("%s appeared in the workspace", e.Name())
		}
	}
}
