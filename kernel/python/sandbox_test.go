package python_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// start starts a Python kernel in a sandbox with policy p and a fresh workspace.
func start(t *testing.T, p *sandbox.Policy) (kernel.Kernel, string) {
	t.Helper()
	mode, err := sandbox.Detect()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(mode, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.CheckLimits(); err != nil {
		if os.Geteuid() == 0 {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ws := t.TempDir()
	k, err := python.Start(context.Background(), &kernel.Options{Sandbox: sb, Workspace: ws, Grace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k, ws
}

func run(t *testing.T, k kernel.Kernel, code string) *kerneltest.Result {
	t.Helper()
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: code, Timeout: 2 * time.Minute})
	if r.Err != nil || r.Res == nil {
		t.Fatalf("Exec: %v, %+v", r.Err, r.Res)
	}
	return r
}

// TestQuotaStopsCell: two 1000 MiB files over a 1.5 GiB workspace quota. The cell is stopped
// while writing the second, and its result says why; the interpreter lives on.
func TestQuotaStopsCell(t *testing.T) {
	k, ws := start(t, &sandbox.Policy{DiskBytes: 3 << 29})
	r := run(t, k, `
chunk = b"x" * (1 << 20)
for name in ("a.bin", "b.bin"):
    with open(name, "wb") as f:
        for i in range(1000):
            f.write(chunk)
    print("wrote", name, flush=True)
`)
	if r.Res.Status != protocol.StatusError || !strings.HasPrefix(r.Res.Error, "workspace quota exceeded: ") || !strings.Contains(r.Res.Error, "of 1.5 GiB written to the workspace "+ws) {
		t.Errorf("result %s %q; want error: workspace quota exceeded: … of 1.5 GiB\n%s", r.Res.Status, r.Res.Error, r.Output())
	}
	if !r.Res.WorkspaceOK {
		t.Error("the interpreter did not survive the quota stop")
	}
	if fi, err := os.Stat(filepath.Join(ws, "b.bin")); err != nil || fi.Size() >= 1000<<20 {
		t.Errorf("b.bin: %v, %v; want it cut short", fi, err)
	}
	for _, l := range r.Stdout {
		if l == "wrote b.bin" {
			t.Error("the second file was completed")
		}
	}
	if r := run(t, k, "print(6 * 7)"); r.Res.Status != protocol.StatusOK {
		t.Errorf("the next cell: %s %q", r.Res.Status, r.Res.Error)
	}
	t.Logf("%s", r.Res.Error)
}

// TestOutOfMemoryResult: four children of 2.5 GB under a 4 GiB budget. The kernel kills what
// does not fit; the cell, whose code saw only exit codes, ends in an error that says why.
func TestOutOfMemoryResult(t *testing.T) {
	k, _ := start(t, &sandbox.Policy{MemoryBytes: 4 << 30})
	r := run(t, k, `
import subprocess, sys
child = "b = b'x' * (2500 * 1000 * 1000); import time; time.sleep(2)"
ps = [subprocess.Popen([sys.executable, "-c", child]) for _ in range(4)]
print([p.wait() for p in ps])
`)
	if r.Res.Status != protocol.StatusError || !strings.HasPrefix(r.Res.Error, "out of memory: the sandbox's 4.0 GiB budget") {
		t.Errorf("result %s %q; want error: out of memory: the sandbox's 4.0 GiB budget…\n%s", r.Res.Status, r.Res.Error, r.Output())
	}
	if r := run(t, k, "print(6 * 7)"); r.Res.Status != protocol.StatusOK {
		t.Errorf("the next cell: %s %q", r.Res.Status, r.Res.Error)
	}
	t.Logf("%s", r.Res.Error)
}

// TestTmpIsBounded: 3 GB written to /tmp under the default budget fails in the cell with a
// clear error, and the kernel lives on.
func TestTmpIsBounded(t *testing.T) {
	k, _ := start(t, nil)
	r := run(t, k, `
chunk = b"x" * (1 << 20)
for i in range(6):
    with open("/tmp/big%d" % i, "wb") as f:
        for _ in range(512):
            f.write(chunk)
`)
	if r.Res.Status != protocol.StatusError || !strings.Contains(r.Res.Error, "No space left on device") {
		t.Errorf("result %s %q; want an error saying No space left on device\n%s", r.Res.Status, r.Res.Error, r.Output())
	}
	if r := run(t, k, "import os\nfor i in range(6):\n    if os.path.exists('/tmp/big%d' % i): os.remove('/tmp/big%d' % i)\nprint('ok')"); r.Res.Status != protocol.StatusOK {
		t.Errorf("the next cell: %s %q", r.Res.Status, r.Res.Error)
	}
}

// TestHomeIsPrivate: HOME is the sandbox's own, not the workspace: what numpy, scipy and
// matplotlib keep there does not land in the workspace; the user has a name.
func TestHomeIsPrivate(t *testing.T) {
	k, ws := start(t, nil)
	code := `
import getpass, os, numpy, scipy.linalg
print(os.environ["HOME"], getpass.getuser(), os.getuid())
print(scipy.linalg.det(numpy.eye(3)))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.plot([1, 2, 3])
    plt.title("fonts")
    plt.savefig("plot.png")
    print("plotted", os.path.isdir(os.path.expanduser("~/.cache/matplotlib")) or os.path.isdir(os.path.expanduser("~/.config/matplotlib")))
except ImportError:
    print("plotted True")  # python3-matplotlib is not installed
`
	r := run(t, k, code)
	if r.Res.Status != protocol.StatusOK {
		t.Fatalf("%s %q\n%s", r.Res.Status, r.Res.Error, r.Output())
	}
	want := []string{sandbox.Home + " " + sandbox.User + " 1000", "1.0", "plotted True"}
	if strings.Join(r.Stdout, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout %q; want %q\n%s", r.Stdout, want, r.Output())
	}
	entries, _ := os.ReadDir(ws)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != ".labmate" { // labmate's own, made before the kernel
			t.Errorf("%s appeared in the workspace", e.Name())
		}
	}
}

// TestQuotaAttacks: fallocate and 300 000 empty files against a 64 MiB workspace quota, in a
// kernel. fallocate (refused by the sandbox's seccomp profile; glibc then writes) is stopped by
// the file-size limit; empty files, which no file-size limit stops and which allocate no blocks,
// cost sandbox.InodeBytes each, and the interpreter still making them after the breach is
// killed. Either way the workspace grows by at most the quota and 64 MiB, and the cell's
// result says why it ended.
func TestQuotaAttacks(t *testing.T) {
	k, ws := start(t, &sandbox.Policy{DiskBytes: 64 << 20})
	grown := func(base int64) int64 {
		n, _ := sandbox.WorkspaceBytes(ws, 0)
		return n - base
	}
	base, _ := sandbox.WorkspaceBytes(ws, 0)
	r := run(t, k, `
import itertools, os
for i in itertools.count():
    fd = os.open("f%d.bin" % i, os.O_WRONLY | os.O_CREAT, 0o644)
    os.posix_fallocate(fd, 0, 32 << 20)
    os.close(fd)
`)
	if g := grown(base); r.Res.Status != protocol.StatusError || !strings.HasPrefix(r.Res.Error, "workspace quota exceeded: ") || g > 128<<20 {
		t.Errorf("fallocate: result %s %q, the workspace grew by %s; want the quota error and at most 128 MiB\n%s", r.Res.Status, r.Res.Error, sandbox.FormatSize(g), r.Output())
	}
	t.Logf("fallocate: %s; %s", r.Res.Error, sandbox.FormatSize(grown(base)))
	// Back within the quota, then files.
	if r := run(t, k, "import glob, os\nfor f in glob.glob('f*.bin'): os.remove(f)\nprint('clean')"); r.Res.Status != protocol.StatusOK {
		t.Fatalf("cleaning up: %s %q", r.Res.Status, r.Res.Error)
	}
	r = run(t, k, `
import os
for d in range(300):
    os.mkdir("e%d" % d)
    for i in range(1000):
        os.close(os.open("e%d/%d" % (d, i), os.O_WRONLY | os.O_CREAT, 0o644))
print("made 300000 files")
`)
	g := grown(base)
	if r.Res.Status != protocol.StatusError || !strings.Contains(r.Res.Error, "workspace quota exceeded: ") || g > 128<<20 {
		t.Errorf("empty files: result %s %q, the workspace grew by %s; want the quota error and at most 128 MiB\n%s", r.Res.Status, r.Res.Error, sandbox.FormatSize(g), r.Output())
	}
	t.Logf("empty files: %s; %s (%d inodes' worth)", r.Res.Error, sandbox.FormatSize(g), g/sandbox.InodeBytes)
	// Still making files after the breach, the interpreter may have been killed: then it is
	// restarted, in a workspace whose growth counts afresh.
	if !r.Res.WorkspaceOK {
		if err := k.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if r := run(t, k, "print(6 * 7)"); r.Res.Status != protocol.StatusOK {
		t.Errorf("the next cell: %s %q", r.Res.Status, r.Res.Error)
	}
}
