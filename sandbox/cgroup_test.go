package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCgroupFiles checks the limits written into a new cgroup, v1 and v2, against a directory
// laid out like a cgroup hierarchy (creating a cgroup makes an empty directory there).
func TestCgroupFiles(t *testing.T) {
	p := Policy{MemoryBytes: 2 << 30, MaxProcs: 99, CPUs: 1.5}
	for _, tc := range []struct {
		version int
		parents map[string][]string // parent → controllers
		want    map[string]string   // file under the parent's leaf → content
	}{
		{1, map[string][]string{"memory": {ctlMemory}, "pids": {ctlPids}, "cpu,cpuacct": {ctlCPU, ctlAcct}}, map[string]string{
			"memory/memory.limit_in_bytes":  "2147483648",
			"pids/pids.max":                 "99",
			"cpu,cpuacct/cpu.cfs_period_us": "100000",
			"cpu,cpuacct/cpu.cfs_quota_us":  "150000",
			"cpu,cpuacct/cpu.shares":        "2048",
		}},
		{2, map[string][]string{"labmate": {ctlMemory, ctlPids, ctlCPU}}, map[string]string{
			"labmate/memory.max": "2147483648",
			"labmate/pids.max":   "99",
			"labmate/cpu.max":    "150000 100000",
			"labmate/cpu.weight": "200",
		}},
	} {
		t.Run(fmt.Sprintf("v%d", tc.version), func(t *testing.T) {
			root := t.TempDir()
			tree := &cgroupTree{version: tc.version, has: map[string]bool{}}
			for name, ctls := range tc.parents {
				os.Mkdir(filepath.Join(root, name), 0o755)
				tree.parents = append(tree.parents, cgParent{filepath.Join(root, name), ctls})
			}
			cg, err := tree.create(p)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{} // parent/file → content
			for _, d := range cg.dirs {
				entries, _ := os.ReadDir(d)
				for _, e := range entries {
					b, _ := os.ReadFile(filepath.Join(d, e.Name()))
					got[filepath.Base(filepath.Dir(d))+"/"+e.Name()] = string(b)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("files written (-want +got):\n%s", diff)
			}
			if want := len(tc.parents); len(cg.procsFiles()) != want {
				t.Errorf("procsFiles = %q; want one per hierarchy", cg.procsFiles())
			}
			if cg.by[ctlAcct] == "" {
				t.Error("no cgroup counts the CPU time")
			}
		})
	}
}

// TestCgroupV1 checks the cgroups of a real command on this machine's v1 hierarchies: every
// process of the command is in them from its first instruction, with the policy's limits.
func TestCgroupV1(t *testing.T) {
	s := newSandbox(t, ModeBubblewrap, &Policy{MemoryBytes: 1 << 30, MaxProcs: 50, CPUs: 0.5})
	if s.cg == nil || s.cg.version != 1 {
		t.Skipf("no cgroup v1 here (%+v)", s.cg)
	}
	r := start(t, s, []string{"/bin/sh", "-c", "cat /proc/self/cgroup; echo done; exec sleep 60"}, testEnv(), t.TempDir())
	r.expect("done", 5*time.Second)
	cg := cgroupOf(s, r.cmd)
	for ctl, file := range map[string]string{ctlMemory: "memory.limit_in_bytes", ctlPids: "pids.max", ctlCPU: "cpu.cfs_quota_us"} {
		b, err := os.ReadFile(filepath.Join(cg.by[ctl], file))
		want := map[string]string{ctlMemory: "1073741824", ctlPids: "50", ctlCPU: "50000"}[ctl]
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q, %v; want %s", file, b, err, want)
		}
	}
	// bwrap's pid-1, the sleep; all in each cgroup.
	for _, d := range cg.dirs {
		if procs := cgroupProcs(d); len(procs) < 2 {
			t.Errorf("%s holds %v; want bwrap and the command", d, procs)
		}
	}
	if _, ok := cg.cpuTime(); !ok {
		t.Error("no CPU time counted")
	}
	if n, ok := cg.oomKills(); !ok || n != 0 {
		t.Errorf("oomKills = %d, %v; want 0, true", n, ok)
	}
	// Inside, the cgroup namespace hides the host's cgroup paths.
	for _, l := range r.stdout {
		if strings.Contains(l, "labmate") {
			t.Errorf("inside, /proc/self/cgroup shows %q", l)
		}
	}
}

// TestCgroupV2Real runs a command in a cgroup of this machine's unified (v2) hierarchy. Here
// it has no controllers (the hybrid layout: they are all in v1), so this exercises what v2
// does without them — joining through cgroup.procs, cpu.stat, cgroup.kill, removal — and that
// labmate refuses it as a budget.
func TestCgroupV2Real(t *testing.T) {
	mounts, err := cgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := mounts.v2()
	if !ok {
		t.Skip("no cgroup2 mount")
	}
	own, _ := ownCgroups()
	dir := filepath.Join(m.point, strings.TrimPrefix(own[""], m.root))
	ctls, _ := readFields(filepath.Join(dir, "cgroup.controllers"))
	if _, err := v2Tree(m.point, dir, own[""] == "/", []string{ctlMemory, ctlPids, ctlCPU}); !slices.Contains(ctls, ctlMemory) &&
		(err == nil || !strings.Contains(err.Error(), "memory and pids are not delegated")) {
		t.Errorf("v2Tree without controllers = %v; want it refused", err)
	}
	parent := filepath.Join(dir, "labmate-test-"+unique())
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Skip("cannot make a cgroup v2 here:", err)
	}
	t.Cleanup(func() { os.Remove(parent) })
	s := newSandbox(t, ModeBubblewrap, &Policy{MemoryBytes: -1, MaxProcs: -1, CPUs: -1})
	s.cg = &cgroupTree{version: 2, parents: []cgParent{{parent, nil}}, has: map[string]bool{ctlAcct: true}}
	r := start(t, s, []string{"/bin/sh", "-c", "echo started; exec sleep 60"}, testEnv(), t.TempDir())
	r.expect("started", 5*time.Second)
	cg := cgroupOf(s, r.cmd)
	if procs := cg.procs(); len(procs) < 2 {
		t.Errorf("the v2 cgroup holds %v; want bwrap and sleep", procs)
	}
	if _, ok := cg.cpuTime(); !ok {
		t.Error("no usage_usec in cpu.stat")
	}
	if err := s.Kill(r.cmd); err != nil {
		t.Fatal(err)
	}
	leftCgroups(t, cg)
	if _, err := r.wait(5 * time.Second); err == nil {
		t.Error("the killed command exited successfully")
	}
}

// TestCgroupReuse checks that labmate started by labmate (a child in the same cgroups) finds
// and uses the same parents, and that the empty cgroups of dead processes are removed.
func TestCgroupReuse(t *testing.T) {
	s := newSandbox(t, ModeNone, nil)
	if s.cg == nil || len(s.cg.parents) == 0 {
		t.Skip("no cgroups:", s.CheckLimits())
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(s.cg.parents[0].dir, strconv.Itoa(dead.Process.Pid)+"-1")
	fresh := filepath.Join(s.cg.parents[0].dir, strconv.Itoa(dead.Process.Pid)+"-2")
	for _, d := range []string{stale, fresh} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(fresh)
	old := time.Now().Add(-staleAfter - time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	again := newSandbox(t, ModeNone, nil)
	if diff := cmp.Diff(s.cg.parents, again.cg.parents, cmp.AllowUnexported(cgParent{})); diff != "" {
		t.Errorf("a second sandbox uses other parents (-first +second):\n%s", diff)
	}
	if _, err := os.Stat(stale); err == nil {
		os.Remove(stale)
		t.Errorf("the empty cgroup %s of a dead process was left", stale)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the cgroup %s a dead process made a moment ago (a job of it may be joining) was removed", fresh)
	}
}

// BenchmarkCgroup measures making, limiting and removing the cgroups of one command (memory,
// pids, cpu and cpuacct in v1 here).
func BenchmarkCgroup(b *testing.B) {
	s := newSandbox(b, ModeNone, nil)
	if s.cg == nil || len(s.cg.parents) == 0 {
		b.Skip("no cgroups:", s.CheckLimits())
	}
	b.ReportMetric(float64(len(s.cg.parents)), "hierarchies")
	for b.Loop() {
		cg, err := s.cg.create(s.policy)
		if err != nil {
			b.Fatal(err)
		}
		if err := cg.remove(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStaleStages: the /etc copy of a dead labmate process is removed once it is older than
// staleAfter, not before (a job it launched may still be starting its sandbox).
func TestStaleStages(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(os.TempDir(), etcPrefix+strconv.Itoa(dead.Process.Pid)+"-1")
	fresh := filepath.Join(os.TempDir(), etcPrefix+strconv.Itoa(dead.Process.Pid)+"-2")
	mine := filepath.Join(os.TempDir(), etcPrefix+strconv.Itoa(os.Getpid())+"-3")
	old := time.Now().Add(-staleAfter - time.Minute)
	for _, d := range []string{stale, fresh, mine} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if d != fresh {
			os.Chtimes(d, old, old)
		}
	}
	removeStaleStages()
	for d, kept := range map[string]bool{stale: false, fresh: true, mine: true} {
		if _, err := os.Stat(d); (err == nil) != kept {
			t.Errorf("%s: kept %t, want %t", d, err == nil, kept)
		}
	}
}
