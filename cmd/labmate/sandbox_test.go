package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/sandbox"
)

func TestSizeFlags(t *testing.T) {
	var f sandboxFlags
	f.add(&cobra.Command{Use: "test"})
	for _, tc := range []struct {
		flag *sizeFlag
		in   string
		want int64
		err  string
	}{
		{&f.memory, "2G", 2 << 30, ""},
		{&f.memory, "512M", 512 << 20, ""},
		{&f.memory, "4GiB", 4 << 30, ""},
		{&f.memory, "unlimited", -1, ""},
		{&f.memory, "10M", 0, "below the minimum of 64 MiB"},
		{&f.memory, "1000T", 0, "more than this machine's"},
		{&f.memory, "0", 0, "makes no sense"},
		{&f.memory, "lots", 0, "not a number"},
		{&f.disk, "1.5G", 3 << 29, ""},
		{&f.disk, "unlimited", -1, ""},
		{&f.disk, "10M", 0, "below the minimum of 64 MiB"},
		{&f.disk, "1000T", 0, "more than the"},
	} {
		tc.flag.n = 0
		err := tc.flag.Set(tc.in)
		switch {
		case tc.err == "" && (err != nil || tc.flag.n != tc.want):
			t.Errorf("--%s %s: %d, %v; want %d", tc.flag.name, tc.in, tc.flag.n, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("--%s %s: %v; want an error saying %q", tc.flag.name, tc.in, err, tc.err)
		}
	}
	for _, tc := range []struct {
		in  string
		ok  bool
		err string
	}{{"1", true, ""}, {"0.5", true, ""}, {"0", false, "this machine has"}, {"1000", false, "this machine has"}, {"x", false, "not a number of cores"}} {
		var c cpusFlag
		if err := c.Set(tc.in); (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("--cpus %s: %v", tc.in, err)
		}
	}
	// The refusals as the user sees them.
	_, errOut, code := labmate(t, t.TempDir(), "print(1)", "exec", "--mem-limit", "10M", "--kernel", "python", "-")
	if code == 0 || !strings.Contains(errOut, `invalid argument "10M" for "--mem-limit" flag`) || !strings.Contains(errOut, "below the minimum of 64 MiB") {
		t.Errorf("exec --memory 10M: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = labmate(t, t.TempDir(), "print(1)", "exec", "--disk", "1000T", "--kernel", "python", "-")
	if code == 0 || !strings.Contains(errOut, `"--disk" flag`) {
		t.Errorf("exec --disk 1000T: exit %d, stderr %q", code, errOut)
	}
}

func TestKernelsLimits(t *testing.T) {
	out, errOut, code := labmate(t, t.TempDir(), "", "kernels")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"LIMIT", "ENFORCED", "memory", "processes", "cpu", "disk", "file size", "/tmp"} {
		if !strings.Contains(out, want) {
			t.Errorf("kernels output lacks %q:\n%s", want, out)
		}
	}
	if os.Geteuid() == 0 && (strings.Contains(out, " NO ") || !strings.Contains(out, "cgroup v")) {
		t.Errorf("as root every limit should be enforced by cgroups:\n%s", out)
	}
	out, _, _ = labmate(t, t.TempDir(), "", "kernels", "--json")
	var v struct {
		Sandbox struct {
			Enforced bool
			Limits   []sandbox.Limit
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("kernels --json: %v\n%s", err, out)
	}
	if len(v.Sandbox.Limits) < 7 || (os.Geteuid() == 0 && !v.Sandbox.Enforced) {
		t.Errorf("kernels --json sandbox = %+v", v.Sandbox)
	}
}

// TestRefusesUnenforcedLimits runs labmate as an ordinary user, who cannot make cgroups on a
// cgroup v1 machine: the memory budget is not enforced, so commands that run code refuse.
func TestRefusesUnenforcedLimits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run labmate as another user")
	}
	dir, err := os.MkdirTemp("", "labmate-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	nobodyBin := filepath.Join(dir, "labmate")
	copyFile(t, bin, nobodyBin)
	run := func(stdin string, args ...string) (string, string, int) {
		cmd := exec.Command(nobodyBin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), errb.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), 0
	}
	out, _, code := run("", "kernels")
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		t.Skip("no cgroup v1 memory hierarchy here; as nobody the budget may be delegated")
	}
	if code != 1 || !strings.Contains(out, "memory") || !strings.Contains(out, "NOT enforced") || !strings.Contains(out, "refuses to run code") {
		t.Errorf("kernels as nobody: exit %d\n%s", code, out)
	}
	_, errOut, code := run("print(1)", "exec", "--kernel", "python", "-")
	if code != 2 || !strings.Contains(errOut, "refuses to run code") || !strings.Contains(errOut, "memory 4.0 GiB: NOT enforced") || !strings.Contains(errOut, "--no-sandbox") {
		t.Errorf("exec as nobody: exit %d, stderr %q", code, errOut)
	}
	// Asking for no memory budget is not refused: the process limit is RLIMIT_NPROC in the
	// sandbox's user namespace, which binds ordinary users.
	out, errOut, code = run("print(6 * 7)", "exec", "--mem-limit", "unlimited", "--kernel", "python", "-")
	if code != 0 || out != "42\n" {
		t.Errorf("exec --memory unlimited as nobody: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
