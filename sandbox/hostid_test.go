package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// needRoot skips a test of what the sandbox does when labmate runs as root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("labmate runs sandboxed code as its own account only when it runs as root")
	}
}

// owner returns the uid and mode of path, not following a symlink.
func owner(t *testing.T, path string) (int, os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid), fi.Mode()
}

// TestHostIdentity: as root, everything a cell wrote used to be root's on the host. Now code runs
// as the sandbox's account: what it writes is that account's, and so is the workspace; files root
// put there before are the account's too, but the top-level dot-entries stay root's.
func TestHostIdentity(t *testing.T) {
	needRoot(t)
	s := newSandbox(t, ModeBubblewrap, nil)
	if s.drop == nil || s.drop.uid == 0 {
		t.Fatalf("as root the sandbox has no host identity of its own: %+v", s.drop)
	}
	ws := hostDir(t)
	writeFile(t, filepath.Join(ws, "data", "input.txt"), "1 2 3\n")
	writeFile(t, filepath.Join(ws, ".labmate", "journal"), "")
	if err := os.Chmod(filepath.Join(ws, "data", "input.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, stderr, err := output(t, s, []string{"sh", "-c", "id -u; cat data/input.txt; echo more >>data/input.txt && mkdir -p out/deep && echo x >out/deep/f && echo wrote"}, testEnv(), ws)
	if err != nil || !slices.Equal(lines, []string{strconv.Itoa(UID), "1 2 3", "wrote"}) {
		t.Fatalf("cell printed %q, %v: %s", lines, err, stderr)
	}
	for _, p := range []string{"", "data", "data/input.txt", "out", "out/deep", "out/deep/f"} {
		if uid, _ := owner(t, filepath.Join(ws, p)); uid != s.drop.uid {
			t.Errorf("%s is uid %d's on the host; want the sandbox's %d", filepath.Join(ws, p), uid, s.drop.uid)
		}
	}
	if uid, _ := owner(t, filepath.Join(ws, ".labmate", "journal")); uid != 0 {
		t.Errorf(".labmate/journal is uid %d's; want root's (dot-entries are the host's)", uid)
	}
	desc := s.Describe()
	if !strings.Contains(desc, "on the host: "+s.drop.String()) || !strings.Contains(desc, "seccomp "+seccompProfile) {
		t.Errorf("Describe() = %q; want the host account and the seccomp profile", desc)
	}
}

// TestSetID: a cell copied cat into its workspace and ran chmod 6755 on it, and any local user
// could then read /etc/shadow through it. Now no call can give a file a set-ID bit, and the
// file is the sandbox account's anyway.
func TestSetID(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, nil)
	if s.seccomp == "" {
		t.Skip("no seccomp here:", s.syscalls().How)
	}
	ws := hostDir(t)
	const code = `
import ctypes, os, shutil
shutil.copy("/usr/bin/cat", "cat2")
def attempt(name, f):
    try:
        f()
        print(name, "allowed")
    except OSError as e:
        print(name, e.strerror)
attempt("chmod 6755", lambda: os.chmod("cat2", 0o6755))
attempt("chmod 2755", lambda: os.chmod("cat2", 0o2755))
attempt("fchmod 4755", lambda: os.fchmod(os.open("cat2", os.O_RDONLY), 0o4755))
attempt("create 4755", lambda: os.close(os.open("cat3", os.O_WRONLY | os.O_CREAT, 0o4755)))
attempt("tmpfile 4755", lambda: os.close(os.open(".", os.O_WRONLY | os.O_TMPFILE, 0o4755)))
attempt("mknod 4755", lambda: os.mknod("cat4", 0o100000 | 0o4755))
attempt("chmod 755", lambda: os.chmod("cat2", 0o755))
libc = ctypes.CDLL(None, use_errno=True)
def call(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "allowed" if r >= 0 else os.strerror(ctypes.get_errno()))
call("fchmodat2 4755", 452, -100, b"cat2", 0o4755, 0)
call("openat2", 437, -100, b"cat2", None, 0)
call("io_uring_setup", 425, 8, None)
call("unshare", 272, 0x10000000)
call("mount", 165, b"none", b"/tmp", b"tmpfs", 0, None)
call("fallocate", 285, os.open("big", os.O_WRONLY | os.O_CREAT, 0o644), 0, 0, 1 << 20)
os.posix_fallocate(os.open("big2", os.O_WRONLY | os.O_CREAT, 0o644), 0, 1 << 20)
print("posix_fallocate", os.stat("big2").st_size)
`
	lines, stderr, err := output(t, s, []string{python, "-c", code}, testEnv(), ws)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	want := []string{
		"chmod 6755 Operation not permitted", "chmod 2755 Operation not permitted",
		"fchmod 4755 Operation not permitted", "create 4755 Operation not permitted",
		"tmpfile 4755 Operation not permitted", "mknod 4755 Operation not permitted",
		"chmod 755 allowed", "fchmodat2 4755 Operation not permitted",
		"openat2 Function not implemented", "io_uring_setup Function not implemented",
		"unshare Operation not permitted", "mount Operation not permitted",
		"fallocate Operation not supported", "posix_fallocate 1048576",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("inside the sandbox:\n got %q\nwant %q", lines, want)
	}
	uid, mode := owner(t, filepath.Join(ws, "cat2"))
	if mode&(os.ModeSetuid|os.ModeSetgid) != 0 {
		t.Errorf("cat2 on the host: mode %v; want no set-ID bit", mode)
	}
	if s.drop != nil && uid != s.drop.uid {
		t.Errorf("cat2 on the host is uid %d's; want the sandbox's %d", uid, s.drop.uid)
	}
}

// TestEnvInside: a job's environment used to be the environment of the host's processes that
// start it, so LD_PRELOAD of a library a cell compiled ran its constructor as root outside the
// sandbox (in the wrapper shell and bwrap). Now the environment exists only inside: the library
// loads there, as the sandbox's uid, and in no process outside.
func TestEnvInside(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed:", err)
	}
	s := newSandbox(t, ModeBubblewrap, nil)
	ws := hostDir(t)
	outside := filepath.Join(t.TempDir(), "host-ran-it") // not in the sandbox's view
	src := filepath.Join(t.TempDir(), "evil.c")
	writeFile(t, src, `#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
	FILE *f = fopen("`+outside+`", "a");
	if (f) { fprintf(f, "uid %d\n", (int)getuid()); fclose(f); }
	f = fopen("`+ws+`/inside", "a");
	if (f) { fprintf(f, "uid %d\n", (int)getuid()); fclose(f); }
}
`)
	lib := filepath.Join(ws, "evil.so")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v: %s", err, out)
	}
	env := append(testEnv(), "LD_PRELOAD="+lib)
	if lines, stderr, err := output(t, s, []string{"sh", "-c", "echo ran"}, env, ws); err != nil || !slices.Equal(lines, []string{"ran"}) {
		t.Fatalf("%q, %v: %s", lines, err, stderr)
	}
	if b, err := os.ReadFile(outside); err == nil {
		t.Errorf("the library ran outside the sandbox: %q", b)
	}
	b, err := os.ReadFile(filepath.Join(ws, "inside"))
	if err != nil || !strings.Contains(string(b), "uid "+strconv.Itoa(UID)) || strings.Contains(string(b), "uid 0") {
		t.Errorf("inside the sandbox the library logged %q, %v; want it loaded as uid %d only (the test would prove nothing otherwise)", b, err, UID)
	}
}

// TestHostUser: a named account is used, and root or a missing account is refused by name.
func TestHostUser(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct{ user, err string }{
		{"root", "must be an unprivileged account"},
		{"0", "must be an unprivileged account"},
		{"no-such-user-labmate", `sandbox user "no-such-user-labmate"`},
	} {
		_, err := New(ModeBubblewrap, &Policy{HostUser: tc.user})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("HostUser %q: %v; want an error with %q", tc.user, err, tc.err)
		}
	}
	s := newSandbox(t, ModeBubblewrap, &Policy{HostUser: "nobody"})
	ws := hostDir(t)
	if _, _, err := output(t, s, []string{"sh", "-c", "echo x >f"}, testEnv(), ws); err != nil {
		t.Fatal(err)
	}
	if uid, _ := owner(t, filepath.Join(ws, "f")); uid != 65534 {
		t.Errorf("f is uid %d's; want nobody's (65534)", uid)
	}
}

// asNobody runs the test named test again, in a copy of the test binary, as the ordinary user
// nobody (uid 65534), and fails t with its output when it fails. The copy sees
// LABMATE_TEST_AS=nobody.
func asNobody(t *testing.T, test string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "labmate-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LABMATE_TEST_AS=nobody"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s as nobody: %v\n%s", test, err, out)
	}
}

// TestEveryModeDropsRoot: as root, ModeBubblewrap ran code as an unprivileged account but
// ModeNamespaces and ModeNone ran it as root, so a workspace's file could be made setuid root,
// /etc/shadow read, the host written. Now as root every mode runs code as the sandbox's account
// (with no new privileges where bwrap does not set that), a file it writes is the account's, and
// a workspace whose parent directory only root may enter is still reached by its own path. As
// an ordinary user the code is that user (uid 0 of its user namespace in ModeNamespaces).
func TestEveryModeDropsRoot(t *testing.T) {
	asUser := os.Getenv("LABMATE_TEST_AS") == "nobody"
	if os.Geteuid() == 0 {
		defer asNobody(t, "TestEveryModeDropsRoot")
	} else if !asUser {
		t.Skip("run by root, which runs it again as nobody")
	}
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newSandbox(t, mode, &Policy{MemoryBytes: -1, MaxProcs: -1})
			parent, err := os.MkdirTemp("", "labmate-closed-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(parent) })
			ws := filepath.Join(parent, "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			script := `id -u; id -G; echo x >f && cat "$(pwd)/f"; grep NoNewPrivs /proc/self/status; cat /etc/shadow >/dev/null 2>&1 && echo shadow read; true`
			lines, stderr, err := output(t, s, []string{"sh", "-c", script}, testEnv(), ws)
			if err != nil {
				t.Fatalf("%v: %q %s", err, lines, stderr)
			}
			uid, gid := os.Geteuid(), os.Getegid()
			switch {
			case s.drop != nil && mode == ModeBubblewrap:
				uid, gid = UID, UID
			case s.drop != nil:
				uid, gid = s.drop.uid, s.drop.gid
			case mode == ModeBubblewrap:
				uid, gid = UID, UID
			case mode == ModeNamespaces:
				uid, gid = 0, 0 // root of its own user namespace
			}
			if os.Geteuid() == 0 && s.drop == nil {
				t.Fatalf("as root, %s has no account to run code as", mode)
			}
			if len(lines) < 4 || lines[0] != strconv.Itoa(uid) || lines[1] != strconv.Itoa(gid) || lines[2] != "x" {
				t.Errorf("code said %q (%s); want uid %d, only gid %d, and its file read back by its absolute path", lines, stderr, uid, gid)
			}
			if s.drop != nil && mode != ModeBubblewrap && (len(lines) < 4 || !strings.HasSuffix(lines[3], "1")) {
				t.Errorf("no new privileges not set: %q", lines)
			}
			if slices.Contains(lines, "shadow read") {
				t.Errorf("code read /etc/shadow")
			}
			want := os.Geteuid()
			if s.drop != nil {
				want = s.drop.uid
			}
			if got, _ := owner(t, filepath.Join(ws, "f")); got != want {
				t.Errorf("the file code wrote is uid %d's on the host; want %d's", got, want)
			}
			if id := s.identity(); id.Value == "root" || !id.Enforced {
				t.Errorf("identity limit %+v", id)
			}
			if s.drop != nil && !strings.Contains(s.Describe(), s.drop.String()) {
				t.Errorf("Describe() = %q does not name %s", s.Describe(), s.drop)
			}
		})
	}
}
