package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStartSwappedWorkspace: as root, a workspace below a directory closed to the sandbox's
// account is bound into the command's mount namespace when it starts. Replaced by a symlink to
// another directory between Command and Start (a cell of another command could do that to a
// job's directory), it is refused, never bound: the target would be writable inside.
func TestStartSwappedWorkspace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the bridge is made as root only")
	}
	s := newSandbox(t, ModeBubblewrap, nil)
	closed := t.TempDir() // 0700: closed to the account
	ws := filepath.Join(closed, "ws")
	victim := filepath.Join(closed, "victim")
	for _, d := range []string{ws, victim} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd, err := s.Command([]string{"sh", "-c", "echo pwned >planted"}, testEnv(), ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill(cmd)
	if err := os.Rename(ws, ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, ws); err != nil {
		t.Fatal(err)
	}
	if err := run(s, cmd); err == nil {
		t.Error("a workspace swapped for a symlink was bound and ran")
	} else {
		t.Log(err)
	}
	if _, err := os.Lstat(filepath.Join(victim, "planted")); err == nil {
		t.Error("the command wrote into the symlink's target")
	}
	// A symlink above the workspace already there when the command is made is part of its
	// path: followed.
	if err := os.Mkdir(filepath.Join(victim, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(closed, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	linked, err := s.Command([]string{"sh", "-c", "echo ok >mine"}, testEnv(), filepath.Join(link, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill(linked)
	if err := run(s, linked); err != nil {
		t.Fatalf("a workspace reached through a symlink when it was made: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(victim, "ws", "mine")); err != nil {
		t.Error(err)
	}
}

// TestStartInCgroup: a command is born in its cgroup (its first process is there before it
// runs anything) and labmate itself, whose launcher thread forks it from inside the cgroup in
// v1, is not left there.
func TestStartInCgroup(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, nil)
	if s.cg == nil || len(s.cg.parents) == 0 {
		t.Skip("no cgroup here")
	}
	r := start(t, s, []string{"sh", "-c", "echo ready; exec sleep 60"}, testEnv(), t.TempDir())
	r.expect("ready", 15*time.Second)
	s.mu.Lock()
	cg := s.cmds[r.cmd].cg
	s.mu.Unlock()
	if got := cgroupProcs(cg.dirs[0]); len(got) == 0 || slices.Contains(got, os.Getpid()) {
		t.Errorf("processes in the command's cgroup %s: %v; want the command's only (labmate is %d)", cg.dirs[0], got, os.Getpid())
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(cg.dirs[0])
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "cgroup"))
		if err == nil && strings.Contains(string(b), name) {
			t.Errorf("labmate's thread %s is still in the command's cgroup: %s", task.Name(), b)
		}
	}
}

// TestStartOnly: a sandboxed command starts only through Sandbox.Start, and only once.
func TestStartOnly(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, nil)
	ws := t.TempDir()
	command := func() *exec.Cmd {
		cmd, err := s.Command([]string{"true"}, testEnv(), ws)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Kill(cmd) })
		return cmd
	}
	if err := command().Run(); !errors.Is(err, errStartHere) {
		t.Errorf("exec.Cmd's Run = %v; want %v", err, errStartHere)
	}
	if err := command().Start(); !errors.Is(err, errStartHere) {
		t.Errorf("exec.Cmd's Start = %v; want %v", err, errStartHere)
	}
	cmd := command()
	if err := run(s, cmd); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(cmd); err == nil {
		t.Error("a command started twice")
	}
	other := exec.Command("true")
	if err := s.Start(other); err == nil || other.Process != nil {
		t.Errorf("Start of a command the sandbox did not make = %v (process %v); want it refused", err, other.Process)
	}
}
