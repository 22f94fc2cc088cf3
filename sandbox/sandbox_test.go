package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/internal/procfs"
	"github.com/labmate/labmate/kernel"
)

var _ kernel.Sandbox = (*Sandbox)(nil)

const python = "/usr/bin/python3"

var allModes = []Mode{ModeBubblewrap, ModeNamespaces, ModeNone}

// newSandbox returns a sandbox of mode, skipping the test only when bwrap is not installed.
func newSandbox(t testing.TB, mode Mode, p *Policy) *Sandbox {
	t.Helper()
	if mode == ModeBubblewrap {
		if _, err := exec.LookPath("bwrap"); err != nil {
			t.Skip("bubblewrap is not installed:", err)
		}
	}
	s, err := New(mode, p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testEnv() []string {
	return []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
}

// unique returns a string no other process on the machine has in its command line.
func unique() string {
	return fmt.Sprintf("%d%d", os.Getpid(), time.Now().UnixNano())
}

// running is a started sandboxed command whose stdout is read line by line.
type running struct {
	t      *testing.T
	s      *Sandbox
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stdout []string     // lines read so far, for failure messages
	stderr bytes.Buffer // read only after done
	done   chan error
}

// start starts argv in s; the test's cleanup kills and reaps it.
func start(t *testing.T, s *Sandbox, argv, env []string, workspace string, readOnly ...string) *running {
	t.Helper()
	cmd, err := s.Command(argv, env, workspace, readOnly...)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{t: t, s: s, cmd: cmd, lines: make(chan string, 1024), done: make(chan error, 1)}
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &r.stderr
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
		r.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if err := s.Kill(cmd); err != nil {
			t.Error(err)
		}
		select {
		case err := <-r.done:
			r.done <- err
		case <-time.After(5 * time.Second):
			t.Error("command not reaped 5s after Kill")
		}
	})
	return r
}

// expect reads lines until want, failing the test after timeout or at the end of the output.
func (r *running) expect(want string, timeout time.Duration) {
	r.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				err := <-r.done
				r.done <- err
				r.t.Fatalf("output ended before %q; stdout %q, stderr %q, %v", want, r.stdout, r.stderr.String(), err)
			}
			r.stdout = append(r.stdout, line)
			if line == want {
				return
			}
		case <-deadline:
			r.t.Fatalf("no %q after %v; stdout so far %q", want, timeout, r.stdout)
		}
	}
}

// wait returns the remaining stdout lines and the exit error, killing the command after timeout.
func (r *running) wait(timeout time.Duration) ([]string, error) {
	r.t.Helper()
	r.stdin.Close()
	deadline := time.After(timeout)
	var rest []string
	for {
		select {
		case line, ok := <-r.lines:
			if ok {
				rest = append(rest, line)
				continue
			}
			err := <-r.done
			r.done <- err
			return rest, err
		case <-deadline:
			r.s.Kill(r.cmd)
			r.t.Fatalf("still running after %v; stdout %q", timeout, append(r.stdout, rest...))
		}
	}
}

// output runs argv in s and returns its stdout lines and stderr; it fails the test if the command
// does not end within 10 s.
func output(t *testing.T, s *Sandbox, argv, env []string, workspace string, readOnly ...string) ([]string, string, error) {
	t.Helper()
	r := start(t, s, argv, env, workspace, readOnly...)
	lines, err := r.wait(10 * time.Second)
	return lines, r.stderr.String(), err
}

// cgroupOf returns the cgroup of cmd, nil if it has none.
func cgroupOf(s *Sandbox, cmd *exec.Cmd) *cgroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cmds[cmd]; c != nil {
		return c.cg
	}
	return nil
}

// leftCgroups fails the test for each directory of cg that still exists.
func leftCgroups(t *testing.T, cg *cgroup) {
	t.Helper()
	if cg == nil {
		return
	}
	for _, d := range cg.dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s left after Kill", d)
		}
	}
}

// live returns the pids of the running (not zombie) processes whose command line contains marker.
func live(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		if st, ok := procfs.ReadStat(pid); ok && st.State != 'Z' && st.State != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestDetect(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	mode, err := Detect()
	if mode != ModeBubblewrap || err != nil {
		t.Fatalf("Detect() = %q, %v; want %q, nil", mode, err, ModeBubblewrap)
	}
}

func TestDetectWithoutTools(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	mode, err := Detect()
	if mode != ModeNone || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Detect() = %q, %v; want %q and ErrUnavailable", mode, err, ModeNone)
	}
	for _, want := range []string{"bwrap not found in PATH", "prlimit not found in PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Detect error %q does not say %q", err, want)
		}
	}
	if _, err := New(ModeBubblewrap, nil); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "bwrap not found") {
		t.Errorf("New(bubblewrap) without bwrap: %v", err)
	}
}

func TestNewUnknownMode(t *testing.T) {
	if _, err := New("chroot", nil); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("New(chroot) = %v; want an error that is not ErrUnavailable", err)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		mode Mode
		p    *Policy
		want []string
	}{
		{ModeBubblewrap, nil, []string{"bubblewrap 0.", "no network", "read-only host /usr and minimal /etc", "uid 1000", "private 1.0 GiB /tmp",
			"writable workspace (dot-entries read-only)", "4.0 GiB memory", "256 processes", "10.0 GiB disk quota", "1.0 GiB files"}},
		{ModeBubblewrap, &Policy{Network: true, MemoryBytes: 512 << 20, MaxProcs: 10, CPUs: 1.5, MaxFileBytes: -1, DiskBytes: -1}, []string{
			"network allowed", "private 128 MiB /tmp", "512 MiB memory", "10 processes", "1.5 CPUs", "no disk quota", "unlimited file size"}},
		{ModeBubblewrap, &Policy{DiskBytes: 100 << 20}, []string{"100 MiB disk quota", "100 MiB files"}}, // RLIMIT_FSIZE at most the quota
		{ModeNamespaces, nil, []string{"namespaces", "no network", "filesystem NOT protected", "install bubblewrap"}},
		{ModeNone, &Policy{MemoryBytes: -1}, []string{"none — NOT isolated", "unlimited memory"}},
	} {
		s := newSandbox(t, tc.mode, tc.p)
		d := s.Describe()
		for _, w := range tc.want {
			if !strings.Contains(d, w) {
				t.Errorf("%s: Describe() = %q; want it to contain %q", tc.mode, d, w)
			}
		}
		if os.Geteuid() == 0 && strings.Contains(d, "NOT enforced") {
			t.Errorf("%s: Describe() = %q: as root every limit should be enforced", tc.mode, d)
		}
		if s.Mode() != tc.mode {
			t.Errorf("Mode() = %q; want %q", s.Mode(), tc.mode)
		}
		t.Logf("%s", d)
	}
}

// TestLimits checks what Limits and CheckLimits say, with the cgroups this machine has and
// without any.
func TestLimits(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, nil)
	names := map[string]Limit{}
	for _, l := range s.Limits() {
		names[l.Name] = l
		t.Logf("%-13s %-40s enforced=%-5v %s", l.Name, l.Value, l.Enforced, l.How)
	}
	for _, n := range []string{"memory", "address space", "processes", "cpu", "disk", "file size", "/tmp"} {
		if _, ok := names[n]; !ok {
			t.Errorf("Limits() has no %q", n)
		}
	}
	if os.Geteuid() == 0 {
		if err := s.CheckLimits(); err != nil {
			t.Errorf("as root CheckLimits() = %v; want nil", err)
		}
		for _, n := range []string{"memory", "processes", "cpu"} {
			if l := names[n]; !l.Enforced || !strings.HasPrefix(l.How, "cgroup v") {
				t.Errorf("as root %s = %+v; want enforced by a cgroup", n, l)
			}
		}
	}
	if l := names["/tmp"]; !l.Enforced || l.Value != "1.0 GiB (and 64 MiB /dev/shm)" {
		t.Errorf("/tmp = %+v", l)
	}

	// The same sandbox where no cgroup can be made.
	bare := &Sandbox{mode: s.mode, policy: s.policy, version: s.version, features: s.features,
		cg: &cgroupTree{has: map[string]bool{}, problems: map[string][]string{ctlMemory: {"no cgroup v1 hierarchy has the memory controller"}}}}
	err := bare.CheckLimits()
	if !errors.Is(err, ErrUnenforced) || !strings.Contains(err.Error(), "memory 4.0 GiB: NOT enforced") ||
		!strings.Contains(err.Error(), "no cgroup v1 hierarchy has the memory controller") {
		t.Errorf("CheckLimits() without cgroups = %v", err)
	}
	if os.Geteuid() == 0 && (err == nil || !strings.Contains(err.Error(), "processes 256: NOT enforced")) {
		t.Errorf("CheckLimits() without cgroups, as root = %v; want the process limit named", err)
	}
	if d := bare.Describe(); !strings.Contains(d, "4.0 GiB memory (NOT enforced)") {
		t.Errorf("Describe() without cgroups = %q", d)
	}
	unlimited := newSandbox(t, ModeBubblewrap, &Policy{MemoryBytes: -1, MaxProcs: -1})
	unlimited.cg = bare.cg
	if err := unlimited.CheckLimits(); err != nil {
		t.Errorf("CheckLimits() with no memory or process limit asked for = %v; want nil", err)
	}
}

func TestPolicyErrors(t *testing.T) {
	host, err := HostMemory()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{MemoryBytes: 10 << 20}, "memory budget of 10 MiB is below the minimum of 64 MiB"},
		{Policy{MemoryBytes: 2 * host}, "more than this machine's"},
		{Policy{CPUs: 0.001}, "0.001 cores is too small"},
		{Policy{DiskBytes: 1000}, "quota of 1000 bytes is too small"},
	} {
		if _, err := New(ModeNone, &tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error saying %q", tc.p, err, tc.want)
		}
	}
}

func TestBwrapArgs(t *testing.T) {
	ws := "/tmp/x/ws"
	head := func(network bool) []string {
		a := []string{"--clearenv", "--setenv", "HOME", "/tmp/home", "--setenv", "A", "b=c", "--unshare-all"}
		if network {
			a = append(a, "--share-net")
		}
		return append(a, "--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000", "--hostname", "labmate",
			"--cap-drop", "ALL", "--die-with-parent", "--new-session", "HOST", "--ro-bind", "ETC", "/etc", "PROC",
			"--dev", "/dev", "--size", "67108864", "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
			"--perms", "1777", "--size", "1073741824", "--tmpfs", "/tmp", "--perms", "0700", "--dir", "/tmp/home")
	}
	for _, tc := range []struct {
		name    string
		network bool
		mounts  []mount
		want    []string
	}{
		{"no network", false, []mount{{path: ws}}, append(head(false), "--bind", ws, ws, "--remount-ro", "/", "--chdir", ws, "--")},
		{"network", true, []mount{{path: ws}}, append(head(true), "--bind", ws, ws, "--remount-ro", "/", "--chdir", ws, "--")},
		{"parents first", false, []mount{
			{path: ws + "/data/.hidden", kind: mountHidden, dir: true},
			{path: ws + "/.git", kind: mountReadOnly},
			{path: ws + "/data", kind: mountReadOnly},
			{path: "/tmp/x", kind: mountReadOnly},
			{path: "/opt/lib", kind: mountReadOnly},
			{path: ws + "/data/secret", kind: mountHidden},
			{path: ws},
		}, append(head(false),
			"--ro-bind", "/tmp/x", "/tmp/x", "--ro-bind", "/opt/lib", "/opt/lib",
			"--bind", ws, ws, "--ro-bind", ws+"/.git", ws+"/.git", "--ro-bind", ws+"/data", ws+"/data",
			"--tmpfs", ws+"/data/.hidden", "--remount-ro", ws+"/data/.hidden", "--ro-bind", "/dev/null", ws+"/data/secret",
			"--remount-ro", "/", "--chdir", ws, "--")},
	} {
		pol, err := resolve(&Policy{Network: tc.network})
		if err != nil {
			t.Fatal(err)
		}
		s := &Sandbox{mode: ModeBubblewrap, policy: pol, host: []string{"HOST"}, proc: []string{"PROC"},
			features: bwrapFeatures{size: true, disableUserns: true}}
		if diff := cmp.Diff(tc.want, s.bwrapArgs("ETC", ws, []string{"HOME=/tmp/home", "A=b=c"}, tc.mounts)); diff != "" {
			t.Errorf("%s: bwrapArgs (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestLayout checks the host part of the sandbox's root: only what interpreters need, never the
// whole host, the homes, /run, /var or the cgroup filesystem.
func TestLayout(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, nil)
	args := append(append([]string{}, s.host...), s.proc...)
	// Every host path the layout shows inside, and where.
	allowed := func(src string) bool {
		switch {
		case src == "/usr", src == "/dev/null", src == "/var/cache/fontconfig",
			src == "/sys/devices/system/cpu", src == "/sys/devices/system/node":
			return true
		case strings.HasPrefix(src, "/proc/"):
			return !strings.Contains(src[len("/proc/"):], "/")
		}
		return false
	}
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--bind", "--bind-try", "--dev-bind", "--dev-bind-try":
			t.Errorf("the layout binds %s writable", args[i+1])
		case "--ro-bind", "--ro-bind-try":
			if src := args[i+1]; !allowed(src) {
				t.Errorf("the layout shows %s (at %s)", src, args[i+2])
			}
			i += 2
		}
	}
	joined := " " + strings.Join(args, " ") + " "
	for _, want := range []string{"--ro-bind /usr /usr", "--proc /proc", "--ro-bind /proc/sys /proc/sys"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the layout lacks %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "/etc") || strings.Contains(joined, "/sys/fs") {
		t.Errorf("the layout names /etc or /sys/fs:\n%s", joined)
	}

	// /etc is a copy of the curated entries and the generated files, and nothing else.
	etc, err := stagedEtc(false)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := stagedEtc(false); again != etc {
		t.Errorf("a second stagedEtc made %s; want %s again", again, etc)
	}
	entries, err := os.ReadDir(etc)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if !slices.Contains(etcEntries, n) && n != "ssl" && !strings.HasPrefix(n, "python3") && !strings.HasPrefix(n, "ImageMagick-") &&
			!slices.Contains([]string{"passwd", "group", "hosts", "nsswitch.conf", "mtab"}, n) {
			t.Errorf("/etc inside has %s", n)
		}
	}
	for _, bad := range []string{"shadow", "gshadow", "ssl/private", "ssh", "machine-id", "sudoers", "resolv.conf"} {
		if _, err := os.Lstat(filepath.Join(etc, bad)); err == nil {
			t.Errorf("/etc inside has %s", bad)
		}
	}
	if b, err := os.ReadFile(filepath.Join(etc, "passwd")); err != nil || !strings.HasPrefix(string(b), "labmate:x:1000:1000:labmate:/tmp/home:") || strings.Contains(string(b), "root") {
		t.Errorf("/etc/passwd inside: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(etc, "ld.so.cache")); err != nil {
		t.Error(err)
	}
	if target, err := os.Readlink(filepath.Join(etc, "localtime")); err == nil && !strings.HasPrefix(target, "/usr/") {
		t.Errorf("/etc/localtime → %s", target)
	}
	t.Log(args)
}

func TestCommand(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, &Policy{MemoryBytes: 1 << 30, MaxFileBytes: 1 << 20, MaxProcs: 9})
	ws := t.TempDir()
	env := []string{"A=1", "B=2"}
	cmd, err := s.Command([]string{python, "-u"}, env, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill(cmd)
	// The environment is set inside only: the host's side (bwrap) runs with nothing of it.
	// As root, bwrap starts in / (the account it runs as may not reach ws by its own path)
	// and changes to ws inside.
	wantDir := ws
	if s.drop != nil {
		wantDir = "/"
		if c := cmd.SysProcAttr.Credential; c == nil || c.Uid != uint32(s.drop.uid) || c.Gid != uint32(s.drop.gid) || c.Groups == nil || len(c.Groups) != 0 {
			t.Errorf("Credential = %+v; want the account %s with no supplementary group", c, s.drop)
		}
	}
	if want := []string{"PATH=" + hostPath}; cmd.Dir != wantDir || !slices.Equal(cmd.Env, want) {
		t.Errorf("Dir, Env = %q, %q; want %q, %q", cmd.Dir, cmd.Env, wantDir, want)
	}
	if err := cmd.Start(); !errors.Is(err, errStartHere) {
		t.Errorf("exec.Cmd.Start of a sandboxed command = %v; want it refused with %v", err, errStartHere)
	}
	if want := []string{"--clearenv", "--setenv", "A", "1", "--setenv", "B", "2", "--setenv", "HOME", Home}; !containsRun(cmd.Args, want) {
		t.Errorf("args %q; want them to hold %q", cmd.Args, want)
	}
	if a := cmd.SysProcAttr; !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Errorf("SysProcAttr = %+v; want Setpgid and Pdeathsig SIGKILL", a)
	}
	want := []string{s.prlimit, "--as=1073741824", "--fsize=1048576", "--nproc=9", "--", python, "-u"}
	if got := cmd.Args[len(cmd.Args)-len(want):]; !slices.Equal(got, want) {
		t.Errorf("argv ends with %q; want %q", got, want)
	}

	nilEnv, err := s.Command([]string{"true"}, nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill(nilEnv)
	if want := []string{"--clearenv", "--setenv", "HOME", Home, "--"}; !containsRun(nilEnv.Args, want[:4]) || slices.Contains(nilEnv.Args, "PATH") {
		t.Errorf("nil env gave args %q; want only %q set inside (never the host's)", nilEnv.Args, want[:4])
	}

	file := filepath.Join(ws, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		argv, env []string
		ws        string
		ro        []string
	}{
		{"empty argv", nil, nil, ws, nil},
		{"env without =", []string{"true"}, []string{"A"}, ws, nil},
		{"env name not an identifier", []string{"true"}, []string{"A-B=1"}, ws, nil},
		{"missing workspace", []string{"true"}, nil, ws + "/missing", nil},
		{"workspace is a file", []string{"true"}, nil, file, nil},
		{"workspace is /", []string{"true"}, nil, "/", nil},
		{"missing read-only path", []string{"true"}, nil, ws, []string{ws + "/missing"}},
		{"read-only workspace", []string{"true"}, nil, ws, []string{ws}},
	} {
		if cmd, err := s.Command(tc.argv, tc.env, tc.ws, tc.ro...); err == nil {
			s.Kill(cmd)
			t.Errorf("%s: Command succeeded; want an error", tc.name)
		}
	}
}

// TestEnv checks that the interpreter sees exactly env, even the variables /bin/sh rewrites.
func TestEnv(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newSandbox(t, mode, nil)
			for _, env := range [][]string{
				nil,
				{"PATH=/usr/bin:/bin", "IFS=:", "OPTIND=5", "PPID=7", "PWD=/nowhere", "EMPTY=", "Q=it's \"quoted\" $HOME `x`\nline 2"},
				{"HOME=/mine"},
			} {
				ws := t.TempDir()
				lines, stderr, err := output(t, s, []string{"/usr/bin/env", "-0"}, env, ws)
				if err != nil {
					t.Fatalf("%v: %s", err, stderr)
				}
				got := strings.Split(strings.TrimSuffix(strings.Join(lines, "\n"), "\x00"), "\x00")
				if len(got) == 1 && got[0] == "" {
					got = nil
				}
				want := slices.Clone(env)
				if _, ok := lookupEnv(env, "HOME"); !ok {
					// The sandbox adds a private HOME: Home inside bubblewrap, a new directory elsewhere.
					home, _ := lookupEnv(got, "HOME")
					if mode == ModeBubblewrap && home != Home || mode != ModeBubblewrap && !strings.HasPrefix(home, os.TempDir()+"/labmate-home-") {
						t.Errorf("HOME = %q inside", home)
					}
					want = append(want, "HOME="+home)
				}
				if mode == ModeBubblewrap { // bwrap sets PWD to the directory it changes to
					want = append(slices.DeleteFunc(want, func(kv string) bool { return strings.HasPrefix(kv, "PWD=") }), "PWD="+ws)
				}
				slices.Sort(got)
				slices.Sort(want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("environment inside (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestExtraFiles checks that a side channel passed as cmd.ExtraFiles (fd 3) reaches the
// interpreter through every wrapper.
func TestExtraFiles(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newSandbox(t, mode, nil)
			cmd, err := s.Command([]string{python, "-c", `import os; os.write(3, b"telemetry\n")`}, testEnv(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Kill(cmd)
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			cmd.ExtraFiles = []*os.File{pw}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := s.Start(cmd); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			pr.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(pr)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			if string(got) != "telemetry\n" || err != nil {
				t.Errorf("fd 3 carried %q, %v; want %q", got, err, "telemetry\n")
			}
		})
	}
}

// TestRlimits checks that a 10 GB allocation and an oversized file are errors the program can
// handle, not kills.
func TestRlimits(t *testing.T) {
	const code = `
import errno
try:
    b = bytearray(10 * 2**30)
    print("allocated 10 GB")
except MemoryError:
    print("MemoryError caught")
try:
    with open("big", "wb") as f:
        f.write(b"x" * (2 << 20))
    print("wrote 2 MiB")
except OSError as e:
    print("file:", errno.errorcode[e.errno])
print("still running")
`
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newSandbox(t, mode, &Policy{MaxFileBytes: 1 << 20})
			ws := t.TempDir()
			lines, stderr, err := output(t, s, []string{python, "-c", code}, testEnv(), ws)
			if err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			want := []string{"MemoryError caught", "file: EFBIG", "still running"}
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("output (-want +got):\n%s\nstderr: %s", diff, stderr)
			}
			if fi, err := os.Stat(filepath.Join(ws, "big")); err != nil || fi.Size() != 1<<20 {
				t.Errorf("the file in the workspace: %v, %v; want 1 MiB", fi, err)
			}
		})
	}
}

// TestForkBomb checks that a fork bomb run by root is contained, that the host stays
// responsive, and that Kill leaves no process of it.
func TestForkBomb(t *testing.T) {
	const maxProcs = 40
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newSandbox(t, mode, &Policy{MaxProcs: maxProcs})
			marker := "bomb" + unique()
			// Every process forks forever; the first failure is reported once per process. The
			// deadline only bounds the damage should containment ever fail.
			code := fmt.Sprintf(`
import errno, os, time
end = time.monotonic() + 15  # %s
said = False
while time.monotonic() < end:
    try:
        os.fork()
    except OSError as e:
        if not said:
            said = True
            print(errno.errorcode.get(e.errno, e), flush=True)
`, marker)
			began := time.Now()
			r := start(t, s, []string{python, "-c", code}, testEnv(), t.TempDir())
			r.expect("EAGAIN", 10*time.Second)
			contained := time.Since(began)

			time.Sleep(200 * time.Millisecond) // let the bomb press against the limit
			// Count the pythons in the tree and in the cgroup by comm: reading the command lines
			// of processes that fork without pause takes seconds (each fork holds mmap_lock).
			pythons := map[int]bool{}
			var pids []int
			for _, p := range tree(r.cmd.Process.Pid) {
				pids = append(pids, p.pid)
			}
			if cg := cgroupOf(s, r.cmd); cg != nil {
				pids = append(pids, cg.procs()...)
				b, _ := os.ReadFile(filepath.Join(cg.by[ctlPids], "pids.current"))
				if cur, _ := strconv.Atoi(strings.TrimSpace(string(b))); cur > maxProcs {
					t.Errorf("pids.current = %d > %d", cur, maxProcs)
				}
			}
			for _, pid := range pids {
				if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.HasPrefix(string(comm), "python") {
					pythons[pid] = true
				}
			}
			n := len(pythons)
			if n == 0 || n > maxProcs {
				t.Errorf("%d bomb processes alive; want 1..%d", n, maxProcs)
			}

			t0 := time.Now()
			if err := exec.Command("true").Run(); err != nil {
				t.Errorf("host cannot start a process during the bomb: %v", err)
			}
			spawn := time.Since(t0)
			if spawn > time.Second {
				t.Errorf("host took %v to start `true` during the bomb; want < 1s", spawn)
			}

			t0 = time.Now()
			if err := s.Kill(r.cmd); err != nil {
				t.Fatal(err)
			}
			killed := time.Since(t0)
			if left := live(marker); len(left) != 0 {
				t.Errorf("%d bomb processes left after Kill: %v", len(left), left)
			}
			if _, err := r.wait(5 * time.Second); err == nil {
				t.Error("the killed bomb exited successfully")
			}
			t.Logf("EAGAIN after %v, %d processes alive (limit %d), host `true` in %v, Kill took %v",
				contained.Round(time.Millisecond), n, maxProcs, spawn.Round(time.Millisecond), killed.Round(time.Millisecond))
		})
	}
}

// TestNetwork checks that a listener on the host's loopback is out of reach unless
// Policy.Network allows it.
func TestNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	code := fmt.Sprintf(`
import socket
try:
    socket.create_connection(("127.0.0.1", %d), timeout=2).close()
    print("connected")
except OSError as e:
    print("blocked:", e)
`, ln.Addr().(*net.TCPAddr).Port)
	for _, tc := range []struct {
		mode    Mode
		network bool
		want    string
	}{
		{ModeBubblewrap, false, "blocked"},
		{ModeBubblewrap, true, "connected"},
		{ModeNamespaces, false, "blocked"},
		{ModeNamespaces, true, "connected"},
		{ModeNone, false, "connected"}, // the control: the listener works
	} {
		t.Run(fmt.Sprintf("%s/network=%v", tc.mode, tc.network), func(t *testing.T) {
			s := newSandbox(t, tc.mode, &Policy{Network: tc.network})
			lines, stderr, err := output(t, s, []string{python, "-c", code}, testEnv(), t.TempDir())
			if err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) {
				t.Errorf("output %q; want %q…", lines, tc.want)
			}
		})
	}

	// A root process that could see the host's /proc could setns(2) into the host's network.
	escape := fmt.Sprintf(`nsenter --net=/proc/%d/ns/net %s -c '%s' 2>&1 || echo "nsenter failed"`, os.Getpid(), python, code)
	for _, mode := range []Mode{ModeBubblewrap, ModeNamespaces} {
		t.Run(string(mode)+"/setns", func(t *testing.T) {
			s := newSandbox(t, mode, nil)
			lines, stderr, _ := output(t, s, []string{"/bin/sh", "-c", escape}, testEnv(), t.TempDir())
			if slices.Contains(lines, "connected") || !slices.Contains(lines, "nsenter failed") {
				t.Errorf("escape attempt printed %q, stderr %q; want nsenter to fail", lines, stderr)
			}
		})
	}
}

// TestFilesystem checks the bubblewrap promises: only the workspace is writable, the read-only
// paths are readable, /tmp is private and the read-only host cannot be remounted.
func TestFilesystem(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, nil)
	ws, ro := t.TempDir(), t.TempDir() // both under /tmp, hidden by the sandbox's tmpfs
	roInWs := filepath.Join(ws, "ro")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	hostDir, err := os.MkdirTemp(wd, ".sandbox-test-") // outside /tmp, on the real disk
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(hostDir) })
	hostTmp, err := os.CreateTemp("", "host-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	defer os.Remove(hostTmp.Name())
	for _, f := range []string{filepath.Join(ro, "data"), filepath.Join(roInWs, "data")} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u := unique()
	escapes := []string{
		filepath.Join(hostDir, "escape"),
		"/etc/labmate-escape-" + u,
		filepath.Join(os.Getenv("HOME"), "labmate-escape-"+u),
		filepath.Join(ro, "escape"),
		filepath.Join(roInWs, "escape"),
	}
	t.Cleanup(func() {
		for _, f := range escapes {
			os.Remove(f)
		}
	})
	script := fmt.Sprintf(`
try() { if eval "$2" 2>/dev/null; then echo "$1: yes"; else echo "$1: no"; fi; }
try "write workspace" 'echo inside > %[1]s/inside'
try "write test dir" 'echo x > %[2]s'
try "write /etc" 'echo x > %[3]s'
try "write HOME" 'echo x > %[4]s'
try "write read-only" 'echo x > %[5]s'
try "write read-only in workspace" 'echo x > %[6]s'
try "read read-only" 'grep -q hello %[7]s/data'
try "see host /tmp" 'test -e %[8]s'
try "write /tmp" 'echo x > /tmp/private-%[9]s'
try "remount /" 'mount -o remount,rw,bind /'
try "remount read-only" 'mount -o remount,rw,bind %[7]s'
try "write read-only after remount" 'echo x > %[5]s'
`, ws, escapes[0], escapes[1], escapes[2], escapes[3], escapes[4], ro, hostTmp.Name(), u)
	lines, stderr, err := output(t, s, []string{"/bin/sh", "-c", script}, testEnv(), ws, ro, roInWs)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	want := []string{
		"write workspace: yes",
		"write test dir: no",
		"write /etc: no",
		"write HOME: no",
		"write read-only: no",
		"write read-only in workspace: no",
		"read read-only: yes",
		"see host /tmp: no",
		"write /tmp: yes",
		"remount /: no",
		"remount read-only: no",
		"write read-only after remount: no",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("inside the sandbox (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "inside")); err != nil || string(b) != "inside\n" {
		t.Errorf("workspace file on the host: %q, %v", b, err)
	}
	for _, f := range append(escapes, "/tmp/private-"+u) {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written on the host", f)
		}
	}
}

// TestInterrupt checks that SIGINT sent to Target interrupts the interpreter, which handles it
// and goes on, without ending the sandbox.
func TestInterrupt(t *testing.T) {
	const code = `
import sys
try:
    print("ready", flush=True)
    while True:
        pass
except KeyboardInterrupt:
    print("interrupted", flush=True)
print("got", sys.stdin.readline().strip(), flush=True)
`
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newSandbox(t, mode, nil)
			r := start(t, s, []string{python, "-c", code}, testEnv(), t.TempDir())
			pid, err := s.Target(r.cmd) // at once: Target must wait for the wrappers
			if err != nil {
				t.Fatal(err)
			}
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); !strings.Contains(filepath.Base(exe), "python") {
				t.Errorf("Target = %d, running %q; want python", pid, exe)
			}
			if mode == ModeBubblewrap && pid == r.cmd.Process.Pid {
				t.Errorf("Target = cmd.Process.Pid = %d, the bwrap process", pid)
			}
			r.expect("ready", 5*time.Second)
			if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			r.expect("interrupted", 5*time.Second)
			io.WriteString(r.stdin, "more\n")
			r.expect("got more", 5*time.Second)
			if _, err := r.wait(5 * time.Second); err != nil {
				t.Errorf("interpreter ended with %v after the interrupt: %s", err, r.stderr.String())
			}
		})
	}
}

// TestKill checks that Kill ends the whole tree, including children that left the process group
// and orphans, and that it is safe to repeat.
func TestKill(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newSandbox(t, mode, nil)
			marker := "1000." + unique()
			script := fmt.Sprintf(`sleep %[1]s & sleep %[1]s & setsid sleep %[1]s & (sleep %[1]s &) ; echo started; wait`, marker)
			r := start(t, s, []string{"/bin/sh", "-c", script}, testEnv(), t.TempDir())
			r.expect("started", 5*time.Second)
			for deadline := time.Now().Add(5 * time.Second); len(live(marker)) < 4; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("only %d of 4 sleeps started", len(live(marker)))
				}
			}
			if err := s.Kill(r.cmd); err != nil {
				t.Fatal(err)
			}
			if left := live(marker); len(left) != 0 {
				t.Errorf("processes left after Kill: %v", left)
			}
			if err := s.Kill(r.cmd); err != nil {
				t.Errorf("second Kill: %v", err)
			}
			if _, err := r.wait(5 * time.Second); err == nil {
				t.Error("killed command exited successfully")
			}
			if err := s.Kill(r.cmd); err != nil {
				t.Errorf("Kill after Wait: %v", err)
			}
			if _, err := s.Target(r.cmd); err == nil {
				t.Error("Target of a killed command succeeded")
			}
		})
	}
}

// TestKillEnded checks Kill on commands that were never started or have exited by themselves, and
// that it releases their cgroups.
func TestKillEnded(t *testing.T) {
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newSandbox(t, mode, nil)
			ws := t.TempDir()
			unstarted, err := s.Command([]string{"true"}, nil, ws)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Target(unstarted); err == nil {
				t.Error("Target of an unstarted command succeeded")
			}
			cg := cgroupOf(s, unstarted)
			if os.Geteuid() == 0 && (cg == nil || len(cg.dirs) < 2) {
				t.Errorf("as root the command's cgroups are %+v; want memory, pids, cpu, cpuacct", cg)
			}
			if err := s.Kill(unstarted); err != nil {
				t.Errorf("Kill of an unstarted command: %v", err)
			}
			leftCgroups(t, cg)

			cmd, err := s.Command([]string{"true"}, nil, ws)
			if err != nil {
				t.Fatal(err)
			}
			cg = cgroupOf(s, cmd)
			if err := run(s, cmd); err != nil {
				t.Fatal(err)
			}
			if err := s.Kill(cmd); err != nil {
				t.Errorf("Kill of an exited command: %v", err)
			}
			leftCgroups(t, cg)
			if err := s.Kill(cmd); err != nil {
				t.Errorf("second Kill: %v", err)
			}
		})
	}
}

// BenchmarkStart measures start to exit of /bin/true, bare and in each mode (Command, Run and
// Kill, which releases the cgroup).
func BenchmarkStart(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range allModes {
		b.Run(string(mode), func(b *testing.B) {
			s := newSandbox(b, mode, nil)
			ws := b.TempDir()
			for b.Loop() {
				cmd, err := s.Command([]string{"/bin/true"}, nil, ws)
				if err != nil {
					b.Fatal(err)
				}
				if err := run(s, cmd); err != nil {
					b.Fatal(err)
				}
				if err := s.Kill(cmd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// run starts cmd, a command of s's, and waits for it.
func run(s *Sandbox, cmd *exec.Cmd) error {
	if err := s.Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// containsRun reports whether run appears in a, contiguous.
func containsRun(a, run []string) bool {
	for i := 0; i+len(run) <= len(a); i++ {
		if slices.Equal(a[i:i+len(run)], run) {
			return true
		}
	}
	return false
}
