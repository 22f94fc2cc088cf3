package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/job/tools"
	"github.com/labmate/labmate/sandbox"
)

// cellAccount makes ws the sandbox account's, as a session's workspace is once a cell has run
// in it, and gives it the paths a cell made there; it returns the credential a cell's process
// runs with. Without root (no account of the sandbox's own) it changes nothing: the cell runs
// as labmate's user.
func cellAccount(t *testing.T, ws string, made ...string) *syscall.Credential {
	t.Helper()
	uid, gid, ok := sandbox.HostIdentity()
	if !ok || os.Geteuid() != 0 {
		return nil
	}
	if err := os.Chmod(filepath.Dir(ws), 0o755); err != nil { // the test's own temporary directory: let the account reach ws
		t.Fatal(err)
	}
	for _, p := range append([]string{ws}, made...) {
		if err := os.Lchown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// swapper starts a process of the cell's that exchanges a and b without pause.
func swapper(t *testing.T, cred *syscall.Credential, a, b string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", "-c", `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
while True:
    if libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) != 0:  # RENAME_EXCHANGE
        sys.exit("renameat2: errno %d" % ctypes.get_errno())
`, a, b)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// TestAttackConfineSwap: a cell leaves a process in its session's workspace that keeps
// exchanging a directory, sub, with a symbolic link to a host directory (here outside, a
// root-owned directory standing for /etc), and the model submits jobs in "sub". The confined
// submit_job checked where sub led, then the scheduler resolved the path again when it pinned
// the workspace: a job that won the race was pinned to the host directory, which labmate, as
// root, gave to the sandbox's account (chown -R) and ran the job in, writable — root on the
// host in a few tool calls. The path checked must be the path pinned, with no link followed;
// the cell's process runs as the sandbox's account, in a workspace that is the account's.
func TestAttackConfineSwap(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := local.Open(t.TempDir(), &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	submit := tools.Tools(job.Schedulers{"local": s}, &tools.Options{Workspace: ws, Confine: true})[0]

	// The cell's process: sub is a directory and link a symbolic link to outside, exchanged
	// without pause.
	sub, link := filepath.Join(ws, "sub"), filepath.Join(ws, "link")
	if err := os.Mkdir(sub, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	swap := swapper(t, cellAccount(t, ws, sub, link), sub, link)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if fi, err := os.Lstat(sub); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			break // the swapper is at work
		}
		if time.Now().After(deadline) {
			t.Fatal("the swapper never swapped")
		}
		time.Sleep(time.Millisecond)
	}
	var ids []job.ID
	refused := 0
	for i := 0; i < 2000 && len(ids) < 10; i++ { // ten jobs that passed the check
		args, _ := json.Marshal(map[string]string{"script": "echo pwned >> passwd", "workspace": "sub"})
		res, err := submit.Call(ctx, args)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			ID string `json:"id"`
		}
		if res.IsError {
			refused++
		}
		if !res.IsError && json.Unmarshal([]byte(res.Content), &out) == nil && out.ID != "" {
			ids = append(ids, job.ID(out.ID))
		}
	}
	swap.Process.Kill()
	for _, id := range ids {
		for st, err := range s.Watch(ctx, id) {
			if err != nil || st.State.Terminal() {
				break
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(outside, "passwd"))
	var fi syscall.Stat_t
	if err := syscall.Stat(outside, &fi); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs submitted, %d refused; the host directory holds %q, owned by uid %d", len(ids), refused, b, fi.Uid)
	if string(b) != "root:x:0:0::/root:/bin/sh\n" {
		t.Errorf("a job wrote in the host directory the link led to: %q", b)
	}
	if fi.Uid != uint32(os.Geteuid()) {
		t.Errorf("the host directory the link led to was given to uid %d", fi.Uid)
	}
}

// TestAttackIntermediateSwap: the job's workspace is a/etc inside the session's, and the cell's
// process exchanges a, not etc, with a link to a host directory that holds an etc of its own
// (here outside, standing for /). Submit and start open the whole path with no link followed,
// but the sandbox took the workspace by its path once more to give it to the account (chown,
// the whole tree the first time) and to bind it, refusing only a link as the last component:
// a start between start's check and that open gave the host's directory away.
func TestAttackIntermediateSwap(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed:", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("the sandbox gives a workspace to its account only as root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ws, outside := t.TempDir(), t.TempDir()
	hostEtc := filepath.Join(outside, "etc")
	if err := os.Mkdir(hostEtc, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := local.Open(t.TempDir(), &local.Options{Mode: sandbox.ModeBubblewrap, Cores: 2, MemoryBytes: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	submit := tools.Tools(job.Schedulers{"local": s}, &tools.Options{Workspace: ws, Confine: true})[0]
	a, link := filepath.Join(ws, "a"), filepath.Join(ws, "link")
	if err := os.MkdirAll(filepath.Join(a, "etc"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	// A job holding every core first, so that the others start from the queue while the
	// cell's process swaps.
	var ids []job.ID
	for i := 0; i < 41; i++ {
		in := map[string]any{"script": "true", "workspace": "a/etc", "memory": "64M"}
		if i == 0 {
			in = map[string]any{"script": "sleep 2", "cores": 2, "memory": "64M"}
		}
		args, _ := json.Marshal(in)
		res, err := submit.Call(ctx, args)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			ID string `json:"id"`
		}
		if res.IsError || json.Unmarshal([]byte(res.Content), &out) != nil || out.ID == "" {
			t.Fatalf("submit: %s", res.Content)
		}
		ids = append(ids, job.ID(out.ID))
	}
	// The jobs are queued: now the cell's process swaps a.
	swap := swapper(t, cellAccount(t, ws, a, filepath.Join(a, "etc"), link), a, link)
	for _, id := range ids {
		for st, err := range s.Watch(ctx, id) {
			if err != nil || st.State.Terminal() {
				break
			}
		}
	}
	swap.Process.Kill()
	var fi syscall.Stat_t
	if err := syscall.Stat(hostEtc, &fi); err != nil {
		t.Fatal(err)
	}
	if fi.Uid != 0 {
		t.Errorf("the host's directory the swapped link led to was given to uid %d", fi.Uid)
	}
}
